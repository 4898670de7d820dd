#!/bin/bash
# Registers and private stack per kernel of a Compute-API kernel file, as ptxas reports them for a Hopper GPU
# (sm_90), without a GPU: the file is compiled by nvcc behind a prelude that stands in for OpenMM's CUDA definitions.
# Register counts above 128 went with a 4.8x slower three-centre gradient on an H200 (docs/PERFORMANCE.md), so
# check them after changing a kernel.
#   tools/kernel-registers.sh [kernel file[+file...]] [extra defines...]
#   tools/kernel-registers.sh platforms/common/src/kernels/qmThreeCentre.cc+platforms/common/src/kernels/qmThreeCentreClass.cc BASIS_L=2 AUX_L=4 POINT_CHARGES=0
#     (qmThreeCentreClass.cc is compiled once per class of shell pairs up to BASIS_L and, for the metric's gradient,
#     per class (l, 0) up to AUX_L, as ThreeCentreProgram.cpp does)
#   tools/kernel-registers.sh qmengine/src/shared/shellValues.cc+platforms/common/src/kernels/qmXC.cc VWN_A=0.0310907
#     VWN_X0=-0.10498 VWN_B=3.72744 VWN_C=12.9352   (several files: compiled one after the other, as the plugin does)
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-platforms/common/src/kernels/qmThreeCentre.cc+platforms/common/src/kernels/qmThreeCentreClass.cc}
shift || true
defines=("$@")
[ ${#defines[@]} -gt 0 ] || defines=(BASIS_L=2 AUX_L=4 POINT_CHARGES=0 GRADIENT_SCALE=17592186044416.0 GROUP_SIZE=128 MAX_CENTRES_PER_ITEM=8)
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
    cat <<'PRELUDE'
#define KERNEL extern "C" __global__
#define DEVICE __device__
#define LOCAL __shared__
#define LOCAL_ARG
#define GLOBAL
#define RESTRICT __restrict__
#define LOCAL_ID threadIdx.x
#define LOCAL_SIZE blockDim.x
#define GLOBAL_ID (blockIdx.x*blockDim.x+threadIdx.x)
#define GLOBAL_SIZE (blockDim.x*gridDim.x)
#define GROUP_ID blockIdx.x
#define NUM_GROUPS gridDim.x
#define SYNC_THREADS __syncthreads();
#define ATOMIC_ADD(dest, value) atomicAdd(dest, value)
typedef long long mm_long;
typedef unsigned long long mm_ulong;
PRELUDE
    for d in "${defines[@]}"; do echo "#define ${d%%=*} ${d#*=}"; done
    basisL=0
    auxL=0
    for d in "${defines[@]}"; do
        [ "${d%%=*}" = BASIS_L ] && basisL=${d#*=}
        [ "${d%%=*}" = AUX_L ] && auxL=${d#*=}
    done
    for part in ${file//+/ }; do
        if [ "$(basename "$part")" = qmThreeCentreClass.cc ]; then
            for ((la = 0; la <= basisL; la++)); do
                for ((lb = 0; lb <= la; lb++)); do
                    printf '#define CLASS_LA %d\n#define CLASS_LB %d\n' $la $lb
                    cat "$part"
                    printf '#undef CLASS_LA\n#undef CLASS_LB\n'
                done
            done
            for ((la = basisL + 1; la <= auxL; la++)); do  # the metric gradient's classes (fitting shell, unit s)
                printf '#define CLASS_LA %d\n#define CLASS_LB 0\n' $la
                cat "$part"
                printf '#undef CLASS_LA\n#undef CLASS_LB\n'
            done
        else
            cat "$part"
        fi
    done
} > "$work/kernel.cu"
"$nvcc" -arch=sm_90 -O3 -cubin -o "$work/kernel.cubin" "$work/kernel.cu" -Xptxas -v 2>&1 |
    awk '/Compiling entry function/ {name = $7; gsub("\047", "", name)} /bytes stack frame/ {stack = $1} /Used [0-9]+ registers/ {print name, $5, "registers,", stack, "bytes stack"}'
