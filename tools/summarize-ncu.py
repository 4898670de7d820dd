#!/usr/bin/env python3
"""Per-kernel totals of an Nsight Compute CSV log (ncu --csv --metrics gpu__time_duration.sum,... --log-file F):
launches, total and mean duration, mean achieved occupancy (active warps, % of peak) and grid size, sorted by total
time, so that a whole MD step's device time can be split by kernel. Usage: summarize-ncu.py ncu-log.csv [top]"""
import csv
import sys
from collections import defaultdict


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own messages are not CSV rows
    launches = defaultdict(dict)  # (ID, kernel) -> metric -> value
    for row in csv.DictReader(lines):
        try:
            value = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        launches[(row["ID"], row["Kernel Name"])][row["Metric Name"]] = value
    kernels = defaultdict(lambda: {"count": 0, "ns": 0.0, "warps": 0.0, "grid": 0.0})
    for (_, name), metrics in launches.items():
        k = kernels[name.split("(")[0]]
        k["count"] += 1
        k["ns"] += metrics.get("gpu__time_duration.sum", 0.0)
        k["warps"] += metrics.get("sm__warps_active.avg.pct_of_peak_sustained_active", 0.0)
        k["grid"] += metrics.get("launch__grid_size", 0.0)
    total = sum(k["ns"] for k in kernels.values())
    print(f"{len(launches)} launches, {total / 1e6:.2f} ms of kernel time")
    print("| kernel | launches | total ms | share | mean us | occupancy % | mean grid |")
    print("|---|---|---|---|---|---|---|")
    for name, k in sorted(kernels.items(), key=lambda item: -item[1]["ns"])[:top]:
        n = k["count"]
        print(f"| {name} | {n} | {k['ns'] / 1e6:.2f} | {100 * k['ns'] / max(total, 1):.1f}% | {k['ns'] / n / 1e3:.1f} | "
              f"{k['warps'] / n:.1f} | {k['grid'] / n:.0f} |")


if __name__ == "__main__":
    main()
