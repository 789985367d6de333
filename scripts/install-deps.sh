#!/usr/bin/env bash
# Installs the Debian 12 packages Tenact builds and tests with, if missing.
# Idempotent and silent when everything is present; works as root or through
# sudo. Used by both set-up commands of README.md.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  clang libclang-rt-14-dev            # libFuzzer and sanitizer runtimes
  libcaf-dev libasio-dev libopenblas-dev catch2 nlohmann-json3-dev
  libxxhash-dev libssl-dev libbenchmark-dev
  python3 python3-numpy               # Debian's python3: the tests' NumPy oracle
  doxygen                             # the API reference (docs target, docs_reference test)
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: missing packages (${missing[*]}) and neither root nor sudo" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >/dev/null
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
