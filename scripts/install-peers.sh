#!/usr/bin/env bash
# Installs the optional peers of the benchmarks, if missing: oneTBB
# (libtbb-dev: runtime_bench's flow-graph baseline of the per-node graphs,
# found when the build is configured) and PyTorch (python3-torch:
# bench/peers/run_peers.py's torch column). Neither is a dependency of
# Tenact or of its tests; the set-up commands of README.md do not run this.
# Idempotent; works as root or through sudo.
set -euo pipefail

packages=(libtbb-dev python3-torch)
APT_INSTALL_WHO=install-peers exec bash "$(dirname "$0")/apt-install-missing.sh" "${packages[@]}"
