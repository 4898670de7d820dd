"""Plot a QMMMReporter CSV file: the drift of the total energy (or, without that column, the QM energy)
and the SCF iterations per report, against time.

    python examples/plot_qmmm.py qmmm.csv [--output qmmm.png]

Needs matplotlib (installed into .venv by tools/install.sh).
"""

import argparse
import csv
import sys


def readColumns(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        raise ValueError("%s has no data rows (is it a QMMMReporter file?)" % path)
    header, data = rows[0], rows[1:]
    return {name: [float(row[i]) for row in data] for i, name in enumerate(header)}


def plot(columns, output):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    time = columns["time (ps)"]
    energyName = "total energy (kJ/mol)" if "total energy (kJ/mol)" in columns else "totalEnergy (kJ/mol)"
    energy = columns[energyName]
    drift = [e - energy[0] for e in energy]
    figure, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    marker = "." if len(time) <= 200 else None  # long runs: lines only
    top.plot(time, drift, marker=marker, linewidth=0.8)
    if len(time) > 2:  # the drift as a least-squares line
        n = len(time)
        tm, dm = sum(time) / n, sum(drift) / n
        slope = sum((t - tm) * (d - dm) for t, d in zip(time, drift)) / max(1e-300, sum((t - tm) ** 2 for t in time))
        top.plot([time[0], time[-1]], [dm + slope * (time[0] - tm), dm + slope * (time[-1] - tm)], color="black",
                 label="fit: %.3g kJ/mol/ps" % slope)
        top.legend(loc="upper right")
    top.set_ylabel(("total energy" if energyName.startswith("total energy") else "QM energy") + " - first (kJ/mol)")
    top.grid(alpha=0.3)
    bottom.plot(time, columns["SCF iterations"], marker=marker, drawstyle="steps-mid", linewidth=0.8)
    bottom.set_ylabel("SCF iterations")
    bottom.set_xlabel("time (ps)")
    bottom.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(output, dpi=120)
    return drift


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--output", default=None, help="PNG file (default: the CSV's name with .png)")
    args = parser.parse_args(argv)
    output = args.output or (args.csv.rsplit(".", 1)[0] + ".png")
    columns = readColumns(args.csv)
    drift = plot(columns, output)
    print("wrote %s: %d reports, largest energy change %.4f kJ/mol, %.1f SCF iterations on average"
          % (output, len(drift), max(abs(d) for d in drift), sum(columns["SCF iterations"]) / len(drift)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
