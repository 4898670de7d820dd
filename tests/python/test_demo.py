"""The README's demo (examples/md_in_water.py), shortened: MM MD with QMMMForce carrying the Coulomb terms, then
QM/MM NVT and NVE in a createQMMMSystem System, reported by QMMMReporter and plotted."""

import csv
import os
import subprocess
import sys

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "md_in_water.py")


def test_demo_runs_and_writes_the_report_and_plot(tmp_path):
    run = subprocess.run([sys.executable, DEMO, "--steps", "10", "--qmmm-nvt-steps", "2", "--qmmm-steps", "4",
                          "--platform", "CPU", "--output-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "QM/MM NVE: 4 steps" in run.stdout
    with open(tmp_path / "qmmm.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4
    for row in rows:
        # Constant energy over 4 fs of a solvated lipid: the QM forces are the QM energy's derivative.
        assert abs(float(row["total energy (kJ/mol)"]) - float(rows[0]["total energy (kJ/mol)"])) < 2.0
        assert int(row["SCF iterations"]) >= 2 and int(row["MM charges"]) > 100
    assert os.path.getsize(tmp_path / "qmmm.png") > 1000


def test_protein_side_chain_example_runs(tmp_path):
    """examples/protein_side_chain.py, 2 steps: villin's serine side chain as the QM region, cut at CA-CB (a link
    atom), in periodic water."""
    example = os.path.join(os.path.dirname(DEMO), "protein_side_chain.py")
    run = subprocess.run([sys.executable, example, "--steps", "2", "--output-dir", str(tmp_path)], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "link atom 0: H on the bond from QM atom 25 to MM atom 23" in run.stdout
    with open(tmp_path / "side_chain.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 and all(int(r["MM charges"]) > 500 for r in rows)
