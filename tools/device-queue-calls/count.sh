#!/bin/bash
# What one steady-state QM/MM MD step asks of the device's queues on the OpenCL platform (PoCL is enough: the counts are
# the code's, not the device's): kernel launches (per kernel), reads and writes of buffers (blocking ones stop the host
# until the device has drained its queue), copies and the host's waits. BenchQMRegion runs under the
# countOpenCLQueueCalls.c shim with 1 and with 3 timed steps after the same untimed ones; half the difference is one step.
# Usage: tools/device-queue-calls/count.sh [BUILD_DIR (build-pip)] [QM waters (4)] [untimed steps (4)] [kernels listed (25)]
# With COUNT_OPENCL_SITES=1 in the environment it also lists the blocking transfers per call site and step.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build-pip}"
SIZE="${2:-4}"
WARMUP="${3:-4}"
TOP="${4:-25}"
dir="$(mktemp -d)"
SHIM="$dir/countOpenCLQueueCalls.so"
gcc -shared -fPIC -O2 -o "$SHIM" "$ROOT/tools/device-queue-calls/countOpenCLQueueCalls.c" -ldl
for steps in 1 3; do
    LD_PRELOAD="$SHIM" "$BUILD/benchmarks/BenchQMRegion" --sizes "$SIZE" --platforms OpenCL:double --steps "$steps" \
        --warmup "$WARMUP" 2>"$dir/calls$steps.txt" >/dev/null
done
echo "(H2O)$SIZE on OpenCL, one MD step after $WARMUP untimed ones (half the difference between 3 timed steps and 1):"
python3 - "$dir/calls1.txt" "$dir/calls3.txt" "$TOP" <<'PYTHON'
import sys
def read(path):
    calls, kernels = {}, {}
    for line in open(path):
        if line.startswith("queue calls: "):
            name, count = line[len("queue calls: "):].split()
            calls[name] = float(count)
        elif line.startswith("kernel launches: "):
            name, count = line[len("kernel launches: "):].rsplit(" ", 1)
            kernels[name] = float(count)
    return calls, kernels
(c1, k1), (c3, k3) = read(sys.argv[1]), read(sys.argv[2])
if not c3:
    sys.exit("count.sh: the benchmark printed no counts (did it run? see its stderr)")
step = lambda a, b, name: (b.get(name, 0) - a.get(name, 0)) / 2
print("| per step | count |\n|---|---|")
for name in c3:
    value = step(c1, c3, name)
    print(f"| {name} | {value / 1048576:.1f} MiB |" if name.endswith("Bytes") else f"| {name} | {value:.0f} |")
rows = sorted(((step(k1, k3, name), name) for name in k3), reverse=True)
print(f"\n| kernel (the {sys.argv[3]} launched most per step) | launches |\n|---|---|")
for value, name in rows[:int(sys.argv[3])]:
    if value > 0:
        print(f"| {name} | {value:.0f} |")
# With COUNT_OPENCL_SITES=1: the blocking transfers per call site and step, largest first (frames demangled).
def sites(path):
    found = {}
    for line in open(path):
        if line.startswith("blocking site: "):
            count, size, frames = (line[len("blocking site: "):].rstrip("\n").split(" ", 2) + [""])[:3]
            previous = found.get(frames, (0.0, 0.0))
            found[frames] = (previous[0] + float(count), previous[1] + float(size))
    return found
s1, s3 = sites(sys.argv[1]), sites(sys.argv[2])
if s3:
    import subprocess
    print("\n| blocking transfers per step | MiB | call site (the engine's first frames) |\n|---|---|---|")
    perStep = {f: ((s3[f][0] - s1.get(f, (0, 0))[0]) / 2, (s3[f][1] - s1.get(f, (0, 0))[1]) / 2) for f in s3}
    for frames, (count, size) in sorted(perStep.items(), key=lambda item: -item[1][1]):
        if count <= 0:
            continue
        names = subprocess.run(["c++filt"], input=frames.replace(" <- ", "\n"), capture_output=True, text=True).stdout
        short = " <- ".join(n.split("(")[0] for n in names.split("\n") if n) or "(no engine frame)"
        print(f"| {count:.0f} | {size / 1048576:.1f} | {short} |")
PYTHON
rm -rf "$dir"
