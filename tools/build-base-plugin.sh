#!/bin/bash
# Build the CUDA plugin of an earlier commit, as device-bundle.sh's bundle is built (x86-64-v3 engine, Release), for
# run-gpu-checks.sh's PLUGIN_AB: the two plugins timed in one lease. Prints the plugin's path.
#   tools/build-base-plugin.sh <commit> [folder]     (folder: /tmp/openmmdft-base; about 15 minutes on 1 core)
#   BASE_PLUGIN=$(tools/build-base-plugin.sh f5e43d4 | tail -1) ./tools/device-bundle.sh build-portable
# The commit's public API (libOpenMMDFT.so) must be the bundle's: the base plugin is loaded beside the bundle's own.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
commit=${1:?usage: tools/build-base-plugin.sh <commit> [folder]}
folder=${2:-/tmp/openmmdft-base}
python=$root/.venv/bin/python
openmmDir=$("$python" -c "import openmm.version as v, os; print(os.path.dirname(v.openmm_library_path))")  # OpenMM.libs
if [ ! -d "$folder/tree" ]; then
    git -C "$root" worktree add -f "$folder/tree" "$commit" >&2
else
    git -C "$folder/tree" checkout -q "$commit" >&2
fi
cmake -S "$folder/tree" -B "$folder/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPENMMDFT_BUILD_CUDA=ON -DOPENMMDFT_BUILD_OPENCL=OFF \
    -DOPENMMDFT_BUILD_PYTHON=OFF -DOPENMMDFT_BUILD_TESTS=OFF -DOPENMM_DIR="$openmmDir" -DPython3_EXECUTABLE="$python" \
    -DQMENGINE_NATIVE_ARCH=OFF -DQMENGINE_ARCH=x86-64-v3 >&2
cmake --build "$folder/build" --target OpenMMDFTCUDA >&2
find "$folder/build" -name libOpenMMDFTCUDA.so | head -1
