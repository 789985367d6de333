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

APT_INSTALL_WHO=install-deps exec bash "$(dirname "$0")/apt-install-missing.sh" "${packages[@]}"
