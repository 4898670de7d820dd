#!/usr/bin/env bash
# Runs every test of openmm-dft: the C++ tests (GoogleTest, through CTest, on every
# platform present on this machine) and the Python tests (pytest, against the
# installed plugin). Installs what is missing first (tools/install.sh); the C++ tests
# are built in the same CMake build as the installed plugin (build-pip/), so nothing
# is compiled twice.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
./tools/install.sh
export PATH="$ROOT/.venv/bin:$PATH"
JOBS=${JOBS:-$(nproc)}

echo "run-tests.sh: C++ tests"
ctest --test-dir build-pip --output-on-failure -j "$JOBS"

echo "run-tests.sh: Python tests"
cd "$ROOT/tests/python"
"$ROOT/.venv/bin/python" -m pytest -q "$@"
