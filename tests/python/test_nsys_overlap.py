"""tools/nsys-overlap.py, which reads a lease's Nsight Systems trace: the overlap of the queues' kernels it reports."""

import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "tools" / "nsys-overlap.py"

# The shape of `nsys stats --report cuda_gpu_trace --format csv`: notes before the header, copies among the kernels.
TRACE = """Generating SQLite file
Start (ns),Duration (ns),CorrId,Device,Ctx,GreenCtx,Strm,Name
1000000,5000000,1,NVIDIA H200 (0),1,,7,threeCentreGradient_1_1
3000000,6000000,2,NVIDIA H200 (0),1,,14,gradientPoints
20000000,1000000,3,NVIDIA H200 (0),1,,7,sumPartialColumns
500000,400000,4,NVIDIA H200 (0),1,,7,[CUDA memcpy Host-to-Device]
"""


def test_overlap_of_two_streams(tmp_path):
    trace = tmp_path / "trace.csv"
    trace.write_text(TRACE)
    out = subprocess.run([sys.executable, str(SCRIPT), str(trace)], capture_output=True, text=True, check=True).stdout
    # Kernels: [1, 6] and [20, 21] ms on stream 7, [3, 9] ms on stream 14: 12 ms summed, 9 ms covered, 3 ms overlapped.
    assert "kernels on stream 7: 2, 6.0 ms" in out
    assert "kernels on stream 14: 1, 6.0 ms" in out
    assert "copies on stream 7: 1, 0.4 ms" in out
    assert "summed over streams: 12.0 ms; device busy with at least one kernel: 9.0 ms; overlapped: 3.0 ms (25%)" in out
