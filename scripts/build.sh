#!/usr/bin/env bash
# Configures and builds one variant of Tenact into build/ (or build-VARIANT/).
#   scripts/build.sh [release|asan|tsan|fuzz] [ninja targets...]
# Quiet on success: only errors and warnings reach the terminal.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
variant=${1:-release}
shift || true

case "$variant" in
  release) dir=build;      flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  asan)    dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 -DTENACT_ASAN=ON -DTENACT_BUILD_BENCH=OFF -DTENACT_BUILD_TOOLS=OFF) ;;
  tsan)    dir=build-tsan; flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 -DTENACT_TSAN=ON -DTENACT_BUILD_BENCH=OFF -DTENACT_BUILD_TOOLS=OFF
                                   -DTENACT_CAF_ROOT="$root/build-caf-tsan/install")
           bash "$root/scripts/build-caf-tsan.sh" ;;
  fuzz)    dir=build-fuzz; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTENACT_BUILD_FUZZ=ON -DTENACT_BUILD_TESTS=OFF -DTENACT_BUILD_BENCH=OFF -DTENACT_BUILD_TOOLS=OFF -DTENACT_BUILD_CUDA=OFF) ;;
  *) echo "build.sh: unknown variant '$variant' (release, asan, tsan, fuzz)" >&2; exit 2 ;;
esac

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake -S "$root" -B "$root/$dir" -G Ninja "${flags[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
grep -h "^-- tenact:" "$log" >&2 || true
if ! ninja -C "$root/$dir" "$@" >"$log" 2>&1; then
  grep -v "^\[" "$log" >&2 || cat "$log" >&2
  exit 1
fi
