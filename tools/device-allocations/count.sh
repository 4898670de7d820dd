#!/bin/bash
# The device buffers one QM/MM MD step creates on the OpenCL platform (PoCL is enough: the count is the code's, not
# the device's): BenchQMRegion with 1 and with 3 timed steps under the countOpenCLBuffers.c shim; half the difference
# is one steady-state step. Usage: tools/device-allocations/count.sh [BUILD_DIR (build-pip)] [QM waters (4)]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build-pip}"
SIZE="${2:-4}"
SHIM="$(mktemp -d)/countOpenCLBuffers.so"
gcc -shared -fPIC -O2 -o "$SHIM" "$ROOT/tools/device-allocations/countOpenCLBuffers.c" -ldl
count() {
    LD_PRELOAD="$SHIM" "$BUILD/benchmarks/BenchQMRegion" --sizes "$SIZE" --platforms OpenCL:double --steps "$1" --warmup 1 2>&1 >/dev/null |
        sed -n 's/^device buffers: \([0-9]*\) created, [0-9]* released, \([0-9]*\) bytes$/\1 \2/p'
}
read -r c1 b1 < <(count 1)
read -r c3 b3 < <(count 3)
echo "(H2O)$SIZE on OpenCL: $(( (c3 - c1) / 2 )) device buffers and $(( (b3 - b1) / 2 / 1048576 )) MiB allocated per MD step" \
     "(1 timed step: $c1 buffers; 3: $c3)"
