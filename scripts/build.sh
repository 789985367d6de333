#!/usr/bin/env bash
# Configures and builds one variant of Tenact into build/ (or build-VARIANT/).
#   scripts/build.sh [release|asan|tsan|fuzz] [ninja targets...]
# TENACT_BUILD_BENCH=OFF leaves the benchmarks out of the release build
# (the test command does: no test needs them).
# Quiet on success: only errors and warnings reach the terminal.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
variant=${1:-release}
shift || true

# The release variant is built by the system's C++ compiler (GCC); the
# sanitizer and fuzz variants by clang. Clang compiles this code base's
# unoptimized and lightly optimized builds two to three times faster than
# GCC (actors/runtime.cpp under ASan at -O0: 9 s against 32 s), which keeps
# the test command's three builds within CI's time, and the sanitizer
# variants then also hold the code to a second compiler.
clang=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
# Sanitizer and fuzz builds carry line tables only (-g1): a report's stack
# still names function, file and line, and the compiler does a third to half
# less work than with full debug information. The AddressSanitizer variant
# compiles at -O0 (-O1 and the checks together cost about three times as much
# to compile), except the CPU kernels, which stay at -O1 because the tests run
# them over large operands (engines/cpu/CMakeLists.txt).
sanitizer_debug=(-DCMAKE_CXX_FLAGS_DEBUG=-g1)
case "$variant" in
  release) dir=build;      flags=(-DCMAKE_BUILD_TYPE=Release -DTENACT_BUILD_BENCH="${TENACT_BUILD_BENCH:-ON}") ;;
  asan)    dir=build-asan; flags=("${clang[@]}" -DCMAKE_BUILD_TYPE=Debug "${sanitizer_debug[@]}" -DCMAKE_CXX_FLAGS=-O0 -DTENACT_ASAN=ON -DTENACT_BUILD_BENCH=OFF -DTENACT_BUILD_TOOLS=OFF) ;;
  tsan)    dir=build-tsan; flags=("${clang[@]}" -DCMAKE_BUILD_TYPE=Debug "${sanitizer_debug[@]}" -DCMAKE_CXX_FLAGS=-O1 -DTENACT_TSAN=ON -DTENACT_BUILD_BENCH=OFF -DTENACT_BUILD_TOOLS=OFF
                                   -DTENACT_CAF_ROOT="$root/build-caf-tsan/install")
           bash "$root/scripts/build-caf-tsan.sh" ;;
  fuzz)    dir=build-fuzz; flags=("${clang[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" -DTENACT_BUILD_FUZZ=ON -DTENACT_BUILD_TESTS=OFF -DTENACT_BUILD_BENCH=OFF -DTENACT_BUILD_TOOLS=OFF -DTENACT_BUILD_CUDA=OFF) ;;
  *) echo "build.sh: unknown variant '$variant' (release, asan, tsan, fuzz)" >&2; exit 2 ;;
esac

# A build folder configured with another compiler (an older checkout built
# the sanitizer variants with GCC) starts afresh: CMake cannot switch the
# compiler of a configured tree.
cache="$root/$dir/CMakeCache.txt"
if [[ "$variant" != release && -f "$cache" ]]; then
  have=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache")
  if [[ "$(basename "${have:-none}")" != clang++ ]]; then
    echo "build.sh: $dir was configured with ${have:-an unknown compiler}; configuring it afresh with clang++" >&2
    rm -rf "${root:?}/$dir"
  fi
fi

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
