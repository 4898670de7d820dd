#!/usr/bin/env python3
"""How much of the device's work ran on two queues at once, from an Nsight Systems GPU trace.

Reads the CSV of `nsys stats --report cuda_gpu_trace --format csv` (one row per kernel or copy, with its start,
duration and stream) and prints, per stream, the kernels' count and summed time, and over all streams the summed
kernel time against the time in which at least one kernel ran (their union): the difference is the time the queues'
kernels overlapped (the XC queue beside the default one). Copies are listed apart.

    python3 tools/nsys-overlap.py nsys_cuda_gpu_trace.csv
"""
import csv
import sys


def column(header, *prefixes):
    for i, name in enumerate(header):
        for prefix in prefixes:
            if name.strip().lower().startswith(prefix.lower()):
                return i
    raise SystemExit("nsys-overlap.py: no column starting with %s in %s" % (" or ".join(prefixes), header))


def union(intervals):
    """The total length covered by the intervals (start, end)."""
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def main(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # nsys may print lines before the table: the header is the first row with a start and a duration column.
    first = next(i for i, r in enumerate(rows) if any(c.startswith("Start") for c in r) and any(c.startswith("Duration") for c in r))
    header, body = rows[first], [r for r in rows[first + 1:] if r]
    start, duration = column(header, "Start"), column(header, "Duration")
    stream, name = column(header, "Strm", "Stream"), column(header, "Name")
    kernels, copies = {}, {}
    for r in body:
        s, d = float(r[start]), float(r[duration])
        target = copies if r[name].startswith("[CUDA mem") else kernels
        target.setdefault(r[stream], []).append((s, s + d))
    every = [i for spans in kernels.values() for i in spans]
    for label, table in (("kernels", kernels), ("copies", copies)):
        for key in sorted(table, key=lambda k: -sum(e - s for s, e in table[k])):
            spans = table[key]
            print("%s on stream %s: %d, %.1f ms" % (label, key, len(spans), sum(e - s for s, e in spans) / 1e6))
    summed = sum(e - s for s, e in every)
    covered = union(every)
    print("kernel time summed over streams: %.1f ms; device busy with at least one kernel: %.1f ms; overlapped: %.1f ms (%.0f%%)"
          % (summed / 1e6, covered / 1e6, (summed - covered) / 1e6, 100.0 * (summed - covered) / summed if summed else 0.0))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
