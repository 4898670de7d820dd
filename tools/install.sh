#!/usr/bin/env bash
# Installs what openmm-dft needs on a Debian 12 machine and builds it into .venv:
#   1. Debian packages listed in tools/apt-packages.txt that are missing;
#   2. a virtual environment at .venv (repo root) with the pins of tools/requirements.txt;
#   3. the plugin itself (`pip install --no-build-isolation .`), incrementally.
# Safe to run again: each step does only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

missing=()
while read -r pkg; do
    [[ -z "$pkg" || "$pkg" == \#* ]] && continue
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < tools/apt-packages.txt
if ((${#missing[@]})); then
    echo "install.sh: installing Debian packages: ${missing[*]}"
    SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ ! -x .venv/bin/python ]]; then
    echo "install.sh: creating .venv"
    python3 -m venv .venv
fi
# Compare the pins with what is installed, so a second run costs no network round trip.
if ! .venv/bin/python - tools/requirements.txt <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
ok = True
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        ok &= version(name) == want
    except PackageNotFoundError:
        ok = False
sys.exit(0 if ok else 1)
PY
then
    echo "install.sh: installing PyPI pins into .venv"
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q -r tools/requirements.txt
fi

export PATH="$ROOT/.venv/bin:$PATH"
echo "install.sh: building and installing openmm-dft into .venv (CMake build in build-pip/, C++ tests included)"
.venv/bin/pip install -q --no-build-isolation --no-deps -Ccmake.define.OPENMMDFT_BUILD_TESTS=ON "$ROOT" "$@"
