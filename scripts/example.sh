#!/usr/bin/env bash
# Set-up command 1 of README.md: installs what is missing, builds Tenact and
# runs the main job on an example program.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh" release tenact
cd "$root"
ex=examples/mlp
./build/tools/tenact check $ex/mlp.json
./build/tools/tenact run $ex/mlp.json --input x=$ex/inputs/x.npy --input w1=$ex/inputs/w1.npy \
  --input b1=$ex/inputs/b1.npy --input w2=$ex/inputs/w2.npy --input b2=$ex/inputs/b2.npy
