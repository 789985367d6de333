#!/usr/bin/env bash
# Set-up command 2 of README.md (and CI's .ci/run): installs what is missing,
# builds every variant and runs the whole test suite:
#   1. release build: every target but the benchmarks (no test needs them;
#      `bash scripts/build.sh release` builds them too), every test (CTest)
#   2. AddressSanitizer + UndefinedBehaviorSanitizer (leak checks on): the tests,
#      then `tenact stress` (stress_runner) for about 80 s: 4 simulated
#      devices, every kind of fault, 8 client threads
#   3. ThreadSanitizer: the tests about threads (worker pool, fused regions
#      over the pool, engine launches and streams, CPU and simulated, the prepare-cache store with use
#      stamps marked from other threads, pipeline runs, the facade's memo and
#      pending requests) and the CAF-level runtime tests (actor_tests), against a
#      libcaf_core built with -fsanitize=thread from Debian's source
#      (scripts/build-caf-tsan.sh; Debian's own library is not instrumented
#      and hides every happens-before edge between actors), then a 45 s stress
#      run. OpenBLAS is not instrumented, so the BLAS-backed tests stay out of
#      this variant (and the stress run leaves out float dots).
#   4. the libFuzzer targets, briefly, from the seed corpus
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${TENACT_TEST_JOBS:-2}
bash "$root/scripts/install-deps.sh"

# Each section's heading carries the seconds since the start, so a slow stage
# shows in CI's log.
start=$SECONDS
section() { printf '\n== %s (at %d s) ==\n' "$*" "$((SECONDS - start))"; }

section "release build"
TENACT_BUILD_BENCH=OFF bash "$root/scripts/build.sh" release
section "tests (release)"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

section "AddressSanitizer + UBSan build"
bash "$root/scripts/build.sh" asan
section "tests (asan+ubsan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs"

# A bounded stress run (stress/): random jobs from 8 client threads on four
# simulated devices with every kind of fault, each answer checked against
# the CPU engine; it fails on any wrong, hung or lost job, unexplained
# error or leaked byte.
stress_faults=seed=13,transient=0.01,alloc=0.002,transfer=0.002,die=sim:3@20000ops,slow=sim:1*2
section "stress (asan+ubsan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$root/build-asan/stress/stress_runner" --engines sim:0,sim:1,sim:2,sim:3 --threads 8 --jobs 1000000 \
  --duration "${TENACT_STRESS_SECONDS:-80}" --faults "$stress_faults" --retryable

section "ThreadSanitizer build"
bash "$root/scripts/build.sh" tsan util_tests cpu_fused_tests cpu_engine_tests sim_engine_tests actor_core_tests actor_tests \
  stress_runner
section "tests (tsan)"
# The binaries run directly here (not through CTest), so the NumPy fixtures
# some of them read (e.g. the model tests' KV-cache steps) are written first.
/usr/bin/python3 "$root/tests/fixtures/generate_fixtures.py" "$root/build-tsan/tests/data"
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
"$root/build-tsan/tests/util/util_tests"
"$root/build-tsan/tests/engines/cpu/cpu_fused_tests"
"$root/build-tsan/tests/engines/cpu/cpu_engine_tests"
"$root/build-tsan/tests/engines/sim/sim_engine_tests"
"$root/build-tsan/tests/actors/actor_core_tests"
"$root/build-tsan/tests/actors/actor_tests"
section "stress (tsan)"
"$root/build-tsan/stress/stress_runner" --engines sim:0,sim:1,sim:2,sim:3 --threads 8 --jobs 1000000 \
  --duration "${TENACT_STRESS_TSAN_SECONDS:-45}" --faults "$stress_faults" --retryable --no-float-dots
unset TSAN_OPTIONS

section "fuzzers"
bash "$root/scripts/build.sh" fuzz program_fuzzer npy_fuzzer
bash "$root/fuzz/run_fuzzers.sh" "$root/build-fuzz" "${TENACT_FUZZ_SECONDS:-30}"
section "done"
