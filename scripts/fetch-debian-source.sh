#!/usr/bin/env bash
# Downloads the Debian source package PACKAGE into DIR through apt:
#   scripts/fetch-debian-source.sh PACKAGE DIR
# (`apt-get source --download-only`: the .dsc, the upstream tarball and the
# Debian tarball, each checked by apt against the archive's signed index;
# see below for files the archive does not serve).
#
# apt only offers sources when the machine's apt sources have source
# entries. When none is configured, this derives them from the binary
# entries already there, so no archive address is written anywhere:
# deb822 files (/etc/apt/sources.list.d/*.sources, Debian 12's layout) get
# `deb-src` added to their `Types:`, and one-line `deb` entries of
# /etc/apt/sources.list get a `deb-src` twin in
# /etc/apt/sources.list.d/tenact-deb-src.list. Then `apt-get update` runs
# once. Needs root or sudo for that step only; idempotent.
set -euo pipefail
package=${1:?usage: fetch-debian-source.sh PACKAGE DIR}
dir=${2:?usage: fetch-debian-source.sh PACKAGE DIR}

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  as_root=(no_root)
fi
no_root() {
  echo "fetch-debian-source: enabling apt source entries needs root or sudo" >&2
  return 1
}

has_source_entries() {
  grep -rqsE '^[[:space:]]*(Types:.*\bdeb-src\b|deb-src[[:space:]])' /etc/apt/sources.list /etc/apt/sources.list.d/
}

if ! has_source_entries; then
  echo "fetch-debian-source: enabling source entries of the machine's apt sources" >&2
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    "${as_root[@]}" sed -i -E 's/^([[:space:]]*Types:[[:space:]]*)deb[[:space:]]*$/\1deb deb-src/' "$f"
  done
  if [[ -f /etc/apt/sources.list ]] && grep -qE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list; then
    sed -nE 's/^[[:space:]]*deb([[:space:]].*)$/deb-src\1/p' /etc/apt/sources.list |
      "${as_root[@]}" tee /etc/apt/sources.list.d/tenact-deb-src.list >/dev/null
  fi
  has_source_entries || {
    echo "fetch-debian-source: no apt source entry could be derived (no deb entries found)" >&2
    exit 1
  }
  "${as_root[@]}" apt-get update -qq >/dev/null
fi

mkdir -p "$dir"
cd "$dir"
# apt checks every file it downloads against the archive's signed index.
# An archive (or a proxy in front of it) may not serve every file of a
# source package, e.g. only the upstream tarball and the .dsc: what arrived
# is kept and the caller checks for the files it needs; only a missing
# .dsc is an error here.
if ! apt-get source --download-only -qq "$package" >apt-source.log 2>&1; then
  if ! ls ./*.dsc >/dev/null 2>&1; then
    cat apt-source.log >&2
    echo "fetch-debian-source: apt-get source $package failed" >&2
    exit 1
  fi
  echo "fetch-debian-source: not every file of $package was served; kept what arrived:" \
    $(ls --ignore=apt-source.log) >&2
fi
rm -f apt-source.log
