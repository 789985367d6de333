#!/usr/bin/env bash
# Builds CAF 0.17.6's libcaf_core with -fsanitize=thread into
# build-caf-tsan/install (headers and library), for the ThreadSanitizer
# variant (scripts/build.sh tsan). Debian's libcaf_core is not instrumented:
# its lock-free mailboxes and reference counts would hide every
# happens-before edge between actors from TSan, which would then report
# hundreds of false races on message payloads. The source is the one Debian
# builds its package from, fetched by apt (`apt-get source`, from the
# machine's own apt sources with source entries enabled) and checked: the
# upstream tarball must match both the SHA-256 pinned below and the one in
# Debian's .dsc. Configured as Debian configures it (log level QUIET, CAF's
# own memory management), core only. Compiled by clang, as the
# ThreadSanitizer variant itself is (scripts/build.sh): one TSan runtime.
# Idempotent: a finished build (stamp file) is reused. Takes ~2 min on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build-caf-tsan"
prefix="$out/install"
tarball=actor-framework_0.17.6.orig.tar.gz
sha256=e2bf5bd243f08bb7d8adde197cfe3e6d71314ed3378fe0692f8932f4c3b3928c
stamp="$prefix/.tenact-caf-tsan-clang-$sha256"
[[ -f "$stamp" ]] && exit 0

mkdir -p "$out"
if [[ ! -f "$out/$tarball" ]] || ! echo "$sha256  $out/$tarball" | sha256sum -c --quiet - 2>/dev/null; then
  bash "$root/scripts/fetch-debian-source.sh" actor-framework "$out/apt-source"
  dsc=$(ls "$out"/apt-source/actor-framework_0.17.6-*.dsc 2>/dev/null | head -n 1)
  [[ -n "$dsc" && -f "$out/apt-source/$tarball" ]] || {
    echo "build-caf-tsan: apt-get source actor-framework gave no $tarball (is the archive's CAF still 0.17.6?)" >&2
    exit 1
  }
  # The .dsc's Checksums-Sha256 line for the tarball: "<sha256> <size> <name>".
  dsc_sha=$(awk -v f="$tarball" '/^Checksums-Sha256:/ {on=1; next} /^[^ ]/ {on=0} on && $3 == f {print $1}' "$dsc")
  if [[ "$dsc_sha" != "$sha256" ]]; then
    echo "build-caf-tsan: $tarball: Debian's .dsc says SHA-256 '${dsc_sha:-none}', expected $sha256" >&2
    exit 1
  fi
  if ! echo "$sha256  $out/apt-source/$tarball" | sha256sum -c --quiet -; then
    echo "build-caf-tsan: $tarball does not match Debian's SHA-256 $sha256" >&2
    exit 1
  fi
  mv "$out/apt-source/$tarball" "$out/$tarball"
  rm -rf "$out/apt-source"
fi

rm -rf "$out/src" "$out/build" "$prefix"
mkdir -p "$out/src"
tar xzf "$out/$tarball" -C "$out/src" --strip-components=1
log="$out/build.log"
# -w: CAF 0.17's own warnings are not ours to fix. -g1: line tables, enough
# for TSan's reports to name CAF's functions, files and lines.
if ! { cmake -S "$out/src" -B "$out/build" -G Ninja \
         -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DCMAKE_CXX_FLAGS="-std=c++17 -fsanitize=thread -O1 -g1 -w" \
         -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
         -DCMAKE_INSTALL_PREFIX="$prefix" \
         -DCAF_NO_IO=yes -DCAF_NO_OPENSSL=yes -DCAF_NO_EXAMPLES=yes \
         -DCAF_NO_UNIT_TESTS=yes -DCAF_NO_TOOLS=yes -DCAF_NO_PYTHON=yes \
         -DCAF_NO_OPENCL=yes -DCAF_NO_SUMMARY=yes -DCAF_NO_COMPILER_CHECK=yes \
       && ninja -C "$out/build" install; } >"$log" 2>&1; then
  tail -40 "$log" >&2
  echo "build-caf-tsan: failed; full log in $log" >&2
  exit 1
fi
touch "$stamp"
