#!/usr/bin/env bash
# Set-up command 1 of README.md: installs what is missing, builds Tenact and
# runs the main job on an example program.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" release tenact
cd "$root"
./build/tools/tenact check examples/mlp/mlp.json
