#!/usr/bin/env bash
# Runs the demo: a short MD run of a small molecule in water with QMMMForce carrying the
# Coulomb interactions (examples/md_in_water.py). Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/install.sh
exec .venv/bin/python examples/md_in_water.py "$@"
