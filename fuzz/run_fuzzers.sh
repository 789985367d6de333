#!/usr/bin/env bash
# Runs each fuzzer for SECONDS from its seed corpus (copied to a scratch
# folder, so the committed corpus never changes). Fails on the first crash.
#   fuzz/run_fuzzers.sh BUILD_DIR [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
secs=${2:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/program" "$work/npy"
cp "$root"/examples/*/*.json "$work/program/"
cp "$root"/fuzz/corpus/program/* "$work/program/" 2>/dev/null || true
cp "$root"/fuzz/corpus/npy/* "$work/npy/" 2>/dev/null || true
cp "$root"/examples/*/inputs/*.npy "$work/npy/" 2>/dev/null || true

for f in program npy; do
  echo "fuzz: ${f}_fuzzer for ${secs}s"
  ASAN_OPTIONS=detect_leaks=1 "$build/fuzz/${f}_fuzzer" -max_total_time="$secs" -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 "$work/$f" >"$work/$f.log" 2>&1 || {
      tail -n 60 "$work/$f.log"; echo "fuzz: ${f}_fuzzer FAILED"; exit 1; }
  grep -E "stat::number_of_executed_units|Done" "$work/$f.log" | tr '\n' ' '; echo
done
