#!/usr/bin/env python3
"""Per-kernel totals of an Nsight Compute CSV log (ncu --csv --metrics gpu__time_duration.sum,... --log-file F):
launches, total and mean duration, mean achieved occupancy (active warps, % of peak) and grid size, sorted by total
time, so that a whole MD step's device time can be split by kernel. Usage: summarize-ncu.py ncu-log.csv [top]"""
import csv
import sys
from collections import defaultdict


# The step's metrics (PROFILE_STEP) have their own columns; any other metric in the log (PROFILE: local-memory
# traffic, FP64 pipe use of the integral kernels) gets a column of its mean per launch.
KNOWN = ("gpu__time_duration.sum", "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__grid_size")


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own messages are not CSV rows
    launches = defaultdict(dict)  # (ID, kernel) -> metric -> value
    extra = []
    for row in csv.DictReader(lines):
        try:
            value = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        name = row["Metric Name"]
        if name not in KNOWN and name not in extra:
            extra.append(name)
        launches[(row["ID"], row["Kernel Name"])][name] = value
    kernels = defaultdict(lambda: defaultdict(float))
    for (_, name), metrics in launches.items():
        k = kernels[name.split("(")[0]]
        k["count"] += 1
        k["ns"] += metrics.get("gpu__time_duration.sum", 0.0)
        k["warps"] += metrics.get("sm__warps_active.avg.pct_of_peak_sustained_active", 0.0)
        k["grid"] += metrics.get("launch__grid_size", 0.0)
        for metric in extra:
            k[metric] += metrics.get(metric, 0.0)
    total = sum(k["ns"] for k in kernels.values())
    print(f"{len(launches)} launches, {total / 1e6:.2f} ms of kernel time")
    print("| kernel | launches | total ms | share | mean us | occupancy % | mean grid |" + "".join(f" {m} |" for m in extra))
    print("|---|---|---|---|---|---|---|" + "---|" * len(extra))
    for name, k in sorted(kernels.items(), key=lambda item: -item[1]["ns"])[:top]:
        n = k["count"]
        print(f"| {name} | {n:.0f} | {k['ns'] / 1e6:.2f} | {100 * k['ns'] / max(total, 1):.1f}% | {k['ns'] / n / 1e3:.1f} | "
              f"{k['warps'] / n:.1f} | {k['grid'] / n:.0f} |" + "".join(f" {k[m] / n:.4g} |" for m in extra))


if __name__ == "__main__":
    main()
