#!/usr/bin/env bash
# Runs every test of openmm-dft: the C++ tests (GoogleTest, through CTest, on every
# platform present on this machine) and the Python tests (pytest, against the
# installed plugin). Installs what is missing first (tools/install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
./tools/install.sh
export PATH="$ROOT/.venv/bin:$PATH"
JOBS=${JOBS:-$(nproc)}

echo "run-tests.sh: building the C++ tests in build/"
cmake -S . -B build -DPython3_EXECUTABLE="$ROOT/.venv/bin/python" -DOPENMMDFT_BUILD_PYTHON=OFF -DOPENMMDFT_BUILD_TESTS=ON >/dev/null
cmake --build build -j "$JOBS" >/dev/null
echo "run-tests.sh: C++ tests"
(cd build && ctest --output-on-failure -j "$JOBS")

echo "run-tests.sh: Python tests"
cd "$ROOT/tests/python"
"$ROOT/.venv/bin/python" -m pytest -q "$@"
