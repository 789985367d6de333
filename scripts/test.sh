#!/usr/bin/env bash
# Set-up command 2 of README.md (and CI's .ci/run): installs what is missing,
# builds every variant and runs the whole test suite:
#   1. release build: all targets, every test (CTest)
#   2. AddressSanitizer + UndefinedBehaviorSanitizer (leak checks on): the tests
#   3. the libFuzzer targets, briefly, from the seed corpus
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${TENACT_TEST_JOBS:-2}
bash "$root/scripts/install-deps.sh"

section() { printf '\n== %s ==\n' "$*"; }

section "release build"
bash "$root/scripts/build.sh" release
section "tests (release)"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

section "AddressSanitizer + UBSan build"
bash "$root/scripts/build.sh" asan
section "tests (asan+ubsan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs"

section "fuzzers"
bash "$root/scripts/build.sh" fuzz
bash "$root/fuzz/run_fuzzers.sh" "$root/build-fuzz" "${TENACT_FUZZ_SECONDS:-30}"
