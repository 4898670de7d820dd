#!/bin/bash
# Pack the CUDA test programs and the benchmarks (least squares, QM/MM MD step), with every library they need that a bare
# GPU machine of the device tool lacks (OpenMM, openmm-dft, OpenBLAS, Libint2, ...), into .device/bundle.tar.xz,
# for tools/run-gpu-checks.sh to run there. Needs a build with the C++ tests: ./tools/run-tests.sh makes
# build-pip/, or give the build folder as the argument.
#   ./tools/device-bundle.sh [build-folder]      then, with the device tool:  carry [".device"],
#   command "bash tools/run-gpu-checks.sh"
#   BASE_PLUGIN=/path/to/libOpenMMDFTCUDA.so ./tools/device-bundle.sh build-portable   also packs another build's CUDA
#   plugin (an earlier commit's, same public API) for run-gpu-checks.sh's PLUGIN_AB: both timed in one lease.
# Left to the GPU machine: the driver (libcuda) and CUDA's libraries (cuFFT and NVRTC for OpenMM's CUDA platform,
# cudart, cuBLAS and cuSOLVER for the benchmark's baselines: hundreds of MB; its CUDA toolkit or PyTorch's wheels
# have them, and run-gpu-checks.sh finds them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build-pip}" && pwd)
python=$root/.venv/bin/python
openmmLib=$("$python" -c "import openmm.version as v; print(v.openmm_library_path)")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/plugins"
for program in tests/TestCudaLeastSquares tests/TestCudaQMMMForce tests/TestCudaXCBackend benchmarks/BenchLeastSquares benchmarks/BenchQMRegion \
               benchmarks/BenchOrbitalUpdate benchmarks/BenchRecycledPairs benchmarks/BenchMatrixProducts benchmarks/BenchXCGradient; do
    [ -x "$build/$program" ] || { echo "device-bundle.sh: $build/$program is missing (build with the C++ tests and CUDA)" >&2; exit 1; }
    cp "$build/$program" "$stage/bin/"
done
# The plugins now carry the QM engine; one compiled for this machine's CPU (-march=native) may use
# instructions the GPU machine's CPU lacks, and one without -march gets SSE2 only (the engine's XC loops 2.3x slower,
# which the GPU machine's host timings would then show). Build the bundle for a named architecture:
#   cmake -S . -B build-portable -DQMENGINE_NATIVE_ARCH=OFF -DQMENGINE_ARCH=x86-64-v3 -DPython3_EXECUTABLE=.venv/bin/python
#   cmake --build build-portable -j2
# (x86-64-v3: AVX2, FMA, BMI2, as every x86 host of an H100 or H200 has; run-gpu-checks.sh checks the CPU first.)
arch=$(sed -n 's/^QMENGINE_ARCH:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null)
if grep -q '^QMENGINE_NATIVE_ARCH:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && [ -z "$arch" ]; then
    arch=native
    echo "device-bundle.sh: warning: $build compiles the QM engine with -march=native; the GPU machine's CPU may lack" \
         "its instructions (build with -DQMENGINE_NATIVE_ARCH=OFF -DQMENGINE_ARCH=x86-64-v3)" >&2
fi
echo "${arch:-x86-64}" > "$stage/ARCH"
contents=(ARCH bin lib plugins)
if [ -n "${BASE_PLUGIN:-}" ]; then
    [ -f "$BASE_PLUGIN" ] || { echo "device-bundle.sh: BASE_PLUGIN $BASE_PLUGIN is missing" >&2; exit 1; }
    mkdir -p "$stage/plugins-base"
    cp -L "$BASE_PLUGIN" "$stage/plugins-base/libOpenMMDFTCUDA.so"
    contents+=(plugins-base)
fi
cudaPlugin=$(find "$build" -name libOpenMMDFTCUDA.so | head -1)
[ -n "$cudaPlugin" ] || { echo "device-bundle.sh: libOpenMMDFTCUDA.so not found under $build" >&2; exit 1; }
# OpenMM's CPU platform too: the QM/MM benchmark's baseline on the same machine.
cp -L "$cudaPlugin" "$openmmLib/plugins/libOpenMMCUDA.so" "$openmmLib/plugins/libOpenMMCPU.so" "$stage/plugins/"
# Every shared library the programs and plugins need, except the C runtime (the machine's is newer) and CUDA's own
# libraries (hundreds of MB; run-gpu-checks.sh takes the machine's).
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libstdc\+\+|libgcc_s|libcuda\.so|libcufft|libnvrtc|libcudart|libcublas|libcusolver|libcusparse|libnvJitLink)'
# The build folder first: an installed openmm-dft in OpenMM's library folder (pip install) may be older than the build.
for file in "$stage"/bin/* "$stage"/plugins/*; do
    LD_LIBRARY_PATH="$build:$openmmLib:${LD_LIBRARY_PATH:-}" ldd "$file" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
    if ! [[ $name =~ $skip ]]; then
        cp -L "$path" "$stage/lib/$name"
    fi
done
mkdir -p "$root/.device"
tar -C "$stage" -I "xz -T0" -cf "$root/.device/bundle.tar.xz" "${contents[@]}"
echo "device-bundle.sh: wrote .device/bundle.tar.xz ($(du -h "$root/.device/bundle.tar.xz" | cut -f1)): $(ls "$stage/bin" | tr '\n' ' ')+ $(ls "$stage/lib" | wc -l) libraries"
