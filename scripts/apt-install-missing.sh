#!/usr/bin/env bash
# Installs those of the Debian packages named as arguments that are not
# installed yet; silent when none is missing. Works as root or through sudo.
# Used by install-deps.sh and install-peers.sh (prefix: $APT_INSTALL_WHO).
set -euo pipefail
who=${APT_INSTALL_WHO:-apt-install-missing}

missing=()
for p in "$@"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "$who: missing packages (${missing[*]}) and neither root nor sudo" >&2
  exit 1
fi

echo "$who: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >/dev/null
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
