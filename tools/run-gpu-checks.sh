#!/bin/bash
# On a GPU machine of the device tool (from the repository root, with .device/ carried; see
# tools/device-bundle.sh): run the CUDA tests and the least-squares benchmark against cuSOLVER from the
# prebuilt bundle, then the QM/MM MD step benchmark (CPU against CUDA). Logs and the benchmarks' tables go to $OUT
# (the device tool's folder), else .device/out. Each program runs under a time limit, so that one hang cannot
# spend the whole lease.
#   SIZES=1000,2000 QM_SIZES=1,4,8 QM_PLATFORMS=CPU,CUDA:double,CUDA:mixed bash tools/run-gpu-checks.sh
#   (TESTS="TestCudaQMMMForce" runs one test program, TESTS=none none; MICRO=none skips the host's SCF micro-benchmarks, MICRO="products" runs
#   only the matrix products' (BenchMatrixProducts; also "orbitals", "pairs", and "xcgradient": the XC gradient with and
#   without the partition-weight derivatives, host against device, BenchXCGradient at XC_SIZES, default 24, with the
#   bundle's base plugin too where it has one); QM_SIZES=none skips the QM step benchmark; SIZES=none skips the
#   least-squares benchmark; INVERSE_SIZES=1700
#   times the density fitting's metric inverse with its phases, INVERSE_SIZES=none skips it; BLAS_THREADS_AB=4 times an
#   n = 24 CUDA step again with OpenBLAS on 4 threads, for the host's diagonalization; RESPONSE_AB=1 times an n = 24 CUDA
#   step again without the SCF's Coulomb-response step, whose Coulomb builds are device contractions; METRIC_THREADS_AB="1 4 16"
#   times the density fitting's metric inverse on the host (the CPU platform's kernel) per OpenBLAS thread count; PROFILE=1 runs
#   Nsight Compute, where present, on the three-centre and point-charge kernels (per class of shell pairs) of an n = 8
#   step (PROFILE_SIZE) with their local-memory traffic and FP64 pipe use; PROFILE_STEP=24 times
#   every kernel of an n = 24 step under it and prints per-kernel totals; ENV_AB="NAME=1 ..." times an n = 24 CUDA step
#   with each environment setting and then without any, for the engine's temporary A/B switches (AB_WARMUP untimed
#   steps first, default 4); BLAS_CORETYPE_AB="Haswell SkylakeX" times the metric inverse and an n = 24 CUDA step with
#   OpenBLAS's own kernels and then with each forced kernel set; GRID_AB="ssf nwchem ssf+nwchem" times an n = 24 CUDA step on
#   SSF's partition and on NWChem's pruned grids; PROFILE_TIMELINE=24 runs Nsight Systems, where present, over n = 24 steps
#   (kernel, API and copy totals, and per stream with their overlap: tools/nsys-overlap.py); PLUGIN_AB=1 times an n = 24 CUDA step (AB_SIZES) with the
#   bundle's base plugin (device-bundle.sh's BASE_PLUGIN: an earlier commit's build) and with its own, in that order)
set -uo pipefail
cd "$(dirname "$0")/.."
work=/tmp/openmmdft-device
rm -rf "$work" && mkdir -p "$work"
tar -C "$work" -xJf .device/bundle.tar.xz || exit 1
out=${OUT:-$PWD/.device/out}
mkdir -p "$out"
# CUDA's libraries (OpenMM's CUDA platform: cuFFT, NVRTC; the benchmark: cudart, cuBLAS, cuSOLVER): the machine's own
# (CUDA toolkit, or PyTorch's nvidia wheels).
cudaDirs=""
for lib in libcufft.so.12 libnvrtc.so.13 libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcusolver.so.12 libcusparse.so.12 libnvJitLink.so.13; do
    found=$(find /usr/local /usr/lib /opt -name "$lib" 2>/dev/null | head -1)
    if [ -n "$found" ]; then
        case ":$cudaDirs:" in *":$(dirname "$found"):"*) ;; *) cudaDirs="$cudaDirs:$(dirname "$found")" ;; esac
    else echo "run-gpu-checks.sh: $lib not found on this machine" | tee -a "$out/summary.txt"; fi
done
export LD_LIBRARY_PATH="$work/lib$cudaDirs:${LD_LIBRARY_PATH:-}"
export OPENMMDFT_OPENMM_PLUGIN_DIR="$work/plugins" OPENMMDFT_CUDA_PLUGIN_FILE="$work/plugins/libOpenMMDFTCUDA.so"
# The QM region's basis sets, from this copy of the repository (the bundle's plugins are not installed).
export OPENMMDFT_QM_DATA_DIR="$PWD/qmengine/data"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; lscpu | grep -E "^Model name|^CPU\(s\)"; } 2>&1 | tee -a "$out/summary.txt"
# The bundle's engine is compiled for a named architecture (tools/device-bundle.sh: x86-64-v3, AVX2 and FMA); on a
# CPU without it every program would die of an illegal instruction, so say so and stop.
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
arch=$(cat "$work/ARCH" 2>/dev/null || echo unknown)
echo "bundle engine architecture: $arch; CPU: $(grep -m1 -E '^model\s' /proc/cpuinfo | tr -s ' \t'), flags:$(for f in avx2 fma bmi2 movbe avx512f avx512vl; do case "$flags" in *" $f "*) printf ' %s' $f ;; esac; done)" |
    tee -a "$out/summary.txt"
if [ "$arch" = x86-64-v3 ]; then
    for f in avx2 fma bmi2 f16c movbe; do
        case "$flags" in *" $f "*) ;; *) echo "run-gpu-checks.sh: this CPU lacks $f, which the bundle (x86-64-v3) needs: rebuild it with -DQMENGINE_ARCH=x86-64" | tee -a "$out/summary.txt"; exit 1 ;; esac
    done
fi
# OpenBLAS (DYNAMIC_ARCH) picks its kernels by the CPU's model number; a model it does not know (the leases' hosts
# call themselves "Intel(R) Xeon(R) Processor") may get old generic ones (Prescott: SSE3), which would explain LAPACK
# 2-3x slower there than on the 2-core VM. Print its choice; where it is such a fallback on a CPU with AVX2 and FMA,
# use its Haswell kernels (what a user on such a host would set: OPENBLAS_CORETYPE=Haswell).
openblasCore() {
    python3 - "$work/lib/libopenblas.so.0" <<'PYTHON'
import ctypes, sys
blas = ctypes.CDLL(sys.argv[1])
blas.openblas_get_corename.restype = blas.openblas_get_config.restype = ctypes.c_char_p
print(blas.openblas_get_corename().decode(), "|", blas.openblas_get_config().decode(), "| threads:", blas.openblas_get_num_threads())
PYTHON
}
core=$(openblasCore 2>&1)
echo "OpenBLAS kernels: $core" | tee -a "$out/summary.txt"
case "${core%% *}" in
    Katmai|Coppermine|Northwood|Prescott|Banias|Atom|Core2|Penryn|Dunnington|Nehalem)
        case "$flags" in *" avx2 "*" fma "*|*" fma "*" avx2 "*)
            if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
                export OPENBLAS_CORETYPE=Haswell
                echo "OpenBLAS fell back to ${core%% *} kernels on a CPU with AVX2 and FMA: OPENBLAS_CORETYPE=Haswell -> $(openblasCore 2>&1)" |
                    tee -a "$out/summary.txt"
            fi ;;
        esac ;;
esac
status=0
# MICRO: which micro-benchmarks run ("orbitals products xcgradient pairs"; default all, none: none of them).
micro() { [ "${MICRO:-all}" = all ] || [[ " ${MICRO} " == *" $1 "* ]]; }
if [ -x "$work/bin/BenchOrbitalUpdate" ] && micro orbitals; then
    # The SCF's orbital update on this host: LAPACK's eigensolver against the rotation (matrix products), with
    # OpenBLAS's threads and with one.
    { timeout 120 "$work/bin/BenchOrbitalUpdate"; OPENBLAS_NUM_THREADS=1 timeout 120 "$work/bin/BenchOrbitalUpdate"; } 2>&1 |
        tee -a "$out/summary.txt" || status=1
fi
if [ -x "$work/bin/BenchMatrixProducts" ] && micro products; then
    # The SCF's products of basis-sized matrices on this host (OpenBLAS) against the GPU (with the trip across the bus).
    timeout 120 "$work/bin/BenchMatrixProducts" --platform CUDA 2>&1 | tee -a "$out/summary.txt" || status=1
fi
if [ -x "$work/bin/BenchXCGradient" ] && micro xcgradient; then
    # The XC gradient alone: the host's back end (16 threads) against the device's, with and without the grid's response.
    for plugin in "$work/plugins-base/libOpenMMDFTCUDA.so" "$work/plugins/libOpenMMDFTCUDA.so"; do
        [ -f "$plugin" ] || continue
        echo "BenchXCGradient with $plugin:" | tee -a "$out/summary.txt"
        OPENMMDFT_CUDA_PLUGIN_FILE="$plugin" timeout 240 "$work/bin/BenchXCGradient" --platform CUDA --sizes "${XC_SIZES:-24}" 2>&1 |
            grep -v WARNING | tee -a "$out/summary.txt" || status=1
    done
fi
if [ -x "$work/bin/BenchRecycledPairs" ] && micro pairs; then
    # DIIS's recycled pairs on this host: their Gram matrix from scratch against grown, an iteration's products whole
    # against packed (on 16 and 4 threads).
    { timeout 120 "$work/bin/BenchRecycledPairs" --threads 16; timeout 120 "$work/bin/BenchRecycledPairs" --threads 4; } 2>&1 |
        tee -a "$out/summary.txt" || status=1
fi
tests=${TESTS:-TestCudaXCBackend TestCudaQMMMForce TestCudaLeastSquares}
[ "$tests" = none ] && tests=""
for test in $tests; do
    timeout "${TEST_LIMIT:-240}" "$work/bin/$test" > "$out/$test.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || status=1
    echo "$test: exit $rc, $(grep -c '^\[       OK' "$out/$test.log") passed, $(grep -c '^\[  SKIPPED' "$out/$test.log") skipped, $(grep -c '^\[  FAILED  \] .*\.' "$out/$test.log") failed" | tee -a "$out/summary.txt"
    grep '^\[  FAILED  \] .*\.' "$out/$test.log" | head -20
    # Nothing passed: the CUDA platform or the plugin did not load (every case skips); say why and count it as a failure.
    if [ "$(grep -c '^\[       OK' "$out/$test.log")" -eq 0 ]; then
        status=1
        grep -m3 -iE "error|skipped because|unavailable" "$out/$test.log"
    fi
done
if [ "${QM_SIZES:-}" != "none" ]; then
    timeout "${QM_LIMIT:-300}" "$work/bin/BenchQMRegion" --sizes "${QM_SIZES:-1,4,8}" --platforms "${QM_PLATFORMS:-CPU,CUDA:double,CUDA:mixed}" \
        --steps "${QM_STEPS:-3}" --warmup "${QM_WARMUP:-1}" --markdown "$out/bench-qm.md" 2>&1 | tee "$out/bench-qm.log" || status=1
fi
if [ "${SIZES:-}" != "none" ]; then
    timeout "${LS_LIMIT:-240}" "$work/bin/BenchLeastSquares" --sizes "${SIZES:-1000,2000,3000,4000,5000}" --platforms CUDA --repeat 3 \
        --markdown "$out/bench-cuda.md" > "$out/bench-cuda.log" 2>&1 || status=1
    grep -v WARNING "$out/bench-cuda.log" | tail -40
fi
if [ "${INVERSE_SIZES:-1700}" != "none" ]; then
    # The metric inverse of an n = 24 water step (about 1700 fitting functions), phase by phase, against LAPACK.
    timeout "${LS_LIMIT:-240}" "$work/bin/BenchLeastSquares" --metric-inverse --sizes "${INVERSE_SIZES:-1700}" --platforms CUDA \
        --precisions double --repeat 3 > "$out/bench-metric-inverse.log" 2>&1 || status=1
    grep -v WARNING "$out/bench-metric-inverse.log"
fi
if [ -n "${METRIC_THREADS_AB:-}" ]; then
    # The density fitting's metric inverse as the GPU path computes it (the CPU platform's least-squares kernel: LAPACK
    # through OpenBLAS, n = 1704 for 24 QM waters) under each listed OpenBLAS thread count: it took 0.30 s of an n = 24
    # CUDA step on the H200's host against 0.10 s on a 2-core VM.
    for threads in $METRIC_THREADS_AB; do
        echo "metric inverse, OPENBLAS_NUM_THREADS=$threads:" | tee -a "$out/summary.txt"
        OPENBLAS_NUM_THREADS="$threads" timeout "${LS_LIMIT:-240}" "$work/bin/BenchLeastSquares" --metric-inverse --sizes 1704 \
            --platforms CPU --repeat 3 2>&1 | grep -v WARNING | tee -a "$out/summary.txt" || status=1
    done
fi
if [ -n "${BLAS_CORETYPE_AB:-}" ]; then
    # OpenBLAS's kernels forced (OPENBLAS_CORETYPE, read when the library loads), against its own choice: the metric
    # inverse (LAPACK on the host, as the GPU path makes it) and an n = 24 CUDA step (its host eigensolver and products).
    chosen=${OPENBLAS_CORETYPE:-}
    for core in default $BLAS_CORETYPE_AB; do
        if [ "$core" = default ]; then unset OPENBLAS_CORETYPE; else export OPENBLAS_CORETYPE="$core"; fi
        echo "OPENBLAS_CORETYPE=$core: $(openblasCore 2>&1)" | tee -a "$out/summary.txt"
        timeout "${LS_LIMIT:-240}" "$work/bin/BenchLeastSquares" --metric-inverse --sizes 1704 --platforms CPU --repeat 3 2>&1 |
            grep -v WARNING | tee -a "$out/summary.txt" || status=1
        timeout "${QM_LIMIT:-300}" "$work/bin/BenchQMRegion" --sizes 24 --platforms CUDA:double --steps 2 --warmup "${AB_WARMUP:-4}" \
            > "$out/bench-qm-coretype-$core.log" 2>&1 || status=1
        grep -E "^\| 24|phases" "$out/bench-qm-coretype-$core.log" | tee -a "$out/summary.txt"
    done
    if [ -n "$chosen" ]; then export OPENBLAS_CORETYPE="$chosen"; else unset OPENBLAS_CORETYPE; fi
fi
if [ -n "${BLAS_THREADS_AB:-}" ]; then
    # The host's LAPACK with fewer OpenBLAS threads (read once by the engine: OPENBLAS_NUM_THREADS): dsyevd for 24 QM
    # waters (432 basis functions) took 24 ms per SCF iteration on the H200's 16-core host against 14 ms on 2 cores.
    OPENBLAS_NUM_THREADS="$BLAS_THREADS_AB" timeout "${QM_LIMIT:-300}" "$work/bin/BenchQMRegion" --sizes 24 --platforms CUDA:double \
        --steps 2 --warmup 3 > "$out/bench-qm-blas$BLAS_THREADS_AB.log" 2>&1 || status=1
    grep -E "^\| 24|phases" "$out/bench-qm-blas$BLAS_THREADS_AB.log" | tee -a "$out/summary.txt"
fi
if [ -n "${ENV_AB:-}" ]; then
    # Variants of the engine chosen by environment variables (ENV_AB="NAME=1 OTHER=1"): an n = 24 CUDA step with each
    # set, then with none again, in the same lease (the host's speed differs from lease to lease).
    for setting in $ENV_AB none; do
        if [ "$setting" = none ]; then variant=(); else variant=("$setting"); fi
        env "${variant[@]}" timeout "${QM_LIMIT:-300}" "$work/bin/BenchQMRegion" --sizes "${AB_SIZES:-24}" --platforms CUDA:double \
            --steps 2 --warmup "${AB_WARMUP:-4}" > "$out/bench-qm-ab-${setting//=/-}.log" 2>&1 || status=1
        echo "variant $setting:" | tee -a "$out/summary.txt"
        grep -E "^\| [0-9]+ \||phases" "$out/bench-qm-ab-${setting//=/-}.log" | tee -a "$out/summary.txt"
    done
fi
if [ -n "${GRID_AB:-}" ]; then
    # Other grids of the same size (GRID_AB="ssf nwchem ssf+nwchem"): SSF's atomic partition (BenchQMRegion --partition ssf)
    # and NWChem's pruned angular grids (--pruning nwchem, PySCF's default for a (50, 194) grid), each an n = 24 CUDA step.
    for variant in $GRID_AB; do
        args=()
        case "$variant" in *ssf*) args+=(--partition ssf) ;; esac
        case "$variant" in *nwchem*) args+=(--pruning nwchem) ;; esac
        timeout "${QM_LIMIT:-300}" "$work/bin/BenchQMRegion" --sizes "${AB_SIZES:-24}" --platforms CUDA:double --steps 2 \
            --warmup "${AB_WARMUP:-4}" "${args[@]}" > "$out/bench-qm-grid-$variant.log" 2>&1 || status=1
        echo "grid $variant:" | tee -a "$out/summary.txt"
        grep -E "^\| [0-9]+ \||phases" "$out/bench-qm-grid-$variant.log" | tee -a "$out/summary.txt"
    done
fi
if [ -n "${PROFILE_TIMELINE:-}" ]; then
    # Nsight Systems, where present, over PROFILE_TIMELINE QM waters' MD steps (4 untimed, 2 timed): the device's kernel
    # time against the steps' wall time (how much of a step the device idles while the host works) and the CUDA API's
    # share (allocations, synchronous copies).
    nsys=$(command -v nsys || find /usr/local /opt -name nsys -type f 2>/dev/null | head -1)
    if [ -n "$nsys" ]; then
        timeout "${PROFILE_LIMIT:-240}" "$nsys" profile --trace cuda --sample none --cpuctxsw none --force-overwrite true \
            --output "$work/timeline" "$work/bin/BenchQMRegion" --sizes "$PROFILE_TIMELINE" --platforms CUDA:double --steps 2 \
            --warmup 4 > "$out/nsys-bench.log" 2>&1 || status=1
        timeout 120 "$nsys" stats --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum --format csv \
            --output "$out/nsys" "$work/timeline.nsys-rep" > "$out/nsys-stats.log" 2>&1 || status=1
        for report in "$out"/nsys_*.csv; do
            [ -f "$report" ] && { echo "$(basename "$report"):"; head -15 "$report"; } | tee -a "$out/summary.txt"
        done
        # Every kernel's start, duration and stream: how much the XC queue's kernels overlapped the default queue's.
        timeout 120 "$nsys" stats --report cuda_gpu_trace --format csv --output "$work/nsys" "$work/timeline.nsys-rep" \
            >> "$out/nsys-stats.log" 2>&1 || status=1
        [ -f "$work/nsys_cuda_gpu_trace.csv" ] && python3 tools/nsys-overlap.py "$work/nsys_cuda_gpu_trace.csv" 2>&1 | tee -a "$out/summary.txt"
    else
        echo "run-gpu-checks.sh: PROFILE_TIMELINE: nsys not found on this machine" | tee -a "$out/summary.txt"
    fi
fi
if [ -n "${PLUGIN_AB:-}" ]; then
    # Two builds of the CUDA plugin in one lease (the host's speed differs from lease to lease): the base's, then this one's.
    if [ -f "$work/plugins-base/libOpenMMDFTCUDA.so" ]; then
        for variant in base current; do
            plugin="$work/plugins/libOpenMMDFTCUDA.so"
            [ "$variant" = base ] && plugin="$work/plugins-base/libOpenMMDFTCUDA.so"
            OPENMMDFT_CUDA_PLUGIN_FILE="$plugin" timeout "${QM_LIMIT:-300}" "$work/bin/BenchQMRegion" --sizes "${AB_SIZES:-24}" \
                --platforms CUDA:double --steps 2 --warmup "${AB_WARMUP:-4}" > "$out/bench-qm-plugin-$variant.log" 2>&1 || status=1
            echo "plugin $variant:" | tee -a "$out/summary.txt"
            grep -E "^\| [0-9]+ \||phases" "$out/bench-qm-plugin-$variant.log" | tee -a "$out/summary.txt"
        done
    else
        echo "run-gpu-checks.sh: PLUGIN_AB: the bundle has no base plugin (device-bundle.sh's BASE_PLUGIN)" | tee -a "$out/summary.txt"
    fi
fi
if [ -n "${RESPONSE_AB:-}" ]; then
    # The Coulomb-response step saves SCF iterations (n = 24 on the CPU: about 6 -> 4 per step) for 1-3 J builds per
    # iteration; on the device a J build is the fitting contractions plus the host's metric products.
    timeout "${QM_LIMIT:-300}" "$work/bin/BenchQMRegion" --sizes 24 --platforms CUDA:double --steps 2 --warmup 6 \
        --coulomb-response 0 > "$out/bench-qm-noresponse.log" 2>&1 || status=1
    grep -E "^\| 24|phases" "$out/bench-qm-noresponse.log" | tee -a "$out/summary.txt"
fi
if [ -n "${PROFILE:-}" ]; then
    # Nsight Compute on the integral kernels (one per class of shell pairs: threeCentreTensor_la_lb, ...) of one n = 8
    # CUDA step (PROFILE_SIZE), where the machine has it and lets it read the counters: per kernel its time, achieved
    # occupancy, local-memory traffic (the private arrays spilled there) and FP64 pipe use, so that the classes that
    # take the time and what limits them can be told apart.
    ncu=$(command -v ncu || find /usr/local /opt -name ncu -type f 2>/dev/null | head -1)
    if [ -n "$ncu" ]; then
        timeout "${PROFILE_LIMIT:-240}" "$ncu" --clock-control none --csv --print-units base --log-file "$out/ncu-integrals.csv" \
            --kernel-name regex:"threeCentre|pointCharge|fitt|pairDerivative" --launch-count "${PROFILE_LAUNCHES:-200}" \
            --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,lts__t_bytes.sum,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum \
            "$work/bin/BenchQMRegion" --sizes "${PROFILE_SIZE:-8}" --platforms CUDA:double --steps 1 --warmup 1 > "$out/ncu-integrals.log" 2>&1 || status=1
        python3 tools/summarize-ncu.py "$out/ncu-integrals.csv" 60 2>&1 | tee -a "$out/summary.txt"
    else
        echo "run-gpu-checks.sh: PROFILE: ncu not found on this machine" | tee -a "$out/summary.txt"
    fi
fi
if [ -n "${PROFILE_STEP:-}" ]; then
    # Every kernel of one untimed and one timed MD step of PROFILE_STEP QM waters under Nsight Compute at the GPU's
    # own clocks, reduced to per-kernel totals (tools/summarize-ncu.py): where the step's device time goes.
    ncu=$(command -v ncu || find /usr/local /opt -name ncu -type f 2>/dev/null | head -1)
    if [ -n "$ncu" ]; then
        timeout "${PROFILE_LIMIT:-240}" "$ncu" --clock-control none --csv --print-units base --log-file "$out/ncu-step.csv" \
            --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size \
            "$work/bin/BenchQMRegion" --sizes "$PROFILE_STEP" --platforms CUDA:double --steps 1 --warmup 0 > "$out/ncu-step-bench.log" 2>&1 || status=1
        python3 tools/summarize-ncu.py "$out/ncu-step.csv" 25 2>&1 | tee -a "$out/summary.txt"
    else
        echo "run-gpu-checks.sh: PROFILE_STEP: ncu not found on this machine" | tee -a "$out/summary.txt"
    fi
fi
# The device tool brings back at most 8 files from $OUT: the summary, the step table and one archive of every log.
if [ -n "${OUT:-}" ]; then
    ( cd "$out" && logs=$(ls | grep -v -x -e summary.txt -e bench-qm.md -e logs.tar.gz) &&
        [ -n "$logs" ] && tar -czf logs.tar.gz $logs && rm -f $logs )
fi
exit $status
