#!/usr/bin/env bash
# Builds CAF 0.17.6's libcaf_core with -fsanitize=thread into
# build-caf-tsan/install (headers and library), for the ThreadSanitizer
# variant (scripts/build.sh tsan). Debian's libcaf_core is not instrumented:
# its lock-free mailboxes and reference counts would hide every
# happens-before edge between actors from TSan, which would then report
# hundreds of false races on message payloads. The source is the one Debian
# builds its package from (actor-framework_0.17.6.orig.tar.gz, checked
# against the SHA-256 of Debian's signed .dsc), configured as Debian
# configures it (log level QUIET, CAF's own memory management), core only.
# Idempotent: a finished build (stamp file) is reused. Takes ~2 min on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build-caf-tsan"
prefix="$out/install"
tarball=actor-framework_0.17.6.orig.tar.gz
sha256=e2bf5bd243f08bb7d8adde197cfe3e6d71314ed3378fe0692f8932f4c3b3928c
stamp="$prefix/.tenact-caf-tsan-$sha256"
[[ -f "$stamp" ]] && exit 0

mirrors=(
  "${TENACT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
  http://snapshot.debian.org/archive/debian/20250520T000000Z
)
mkdir -p "$out"
if [[ ! -f "$out/$tarball" ]] || ! echo "$sha256  $out/$tarball" | sha256sum -c --quiet - 2>/dev/null; then
  fetched=no
  for m in "${mirrors[@]}"; do
    if curl -sSfL --retry 3 -o "$out/$tarball.part" "$m/pool/main/a/actor-framework/$tarball"; then
      mv "$out/$tarball.part" "$out/$tarball"
      fetched=yes
      break
    fi
  done
  [[ $fetched == yes ]] || { echo "build-caf-tsan: could not fetch $tarball from ${mirrors[*]}" >&2; exit 1; }
  if ! echo "$sha256  $out/$tarball" | sha256sum -c --quiet -; then
    echo "build-caf-tsan: $tarball does not match Debian's SHA-256 $sha256" >&2
    rm -f "$out/$tarball"
    exit 1
  fi
fi

rm -rf "$out/src" "$out/build" "$prefix"
mkdir -p "$out/src"
tar xzf "$out/$tarball" -C "$out/src" --strip-components=1
log="$out/build.log"
# -w: CAF 0.17's own warnings under GCC 12 are not ours to fix.
if ! { cmake -S "$out/src" -B "$out/build" -G Ninja \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DCMAKE_CXX_FLAGS="-std=c++17 -fsanitize=thread -O1 -g -w" \
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
