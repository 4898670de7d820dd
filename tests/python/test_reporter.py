"""openmmdft.QMMMReporter in an app.Simulation, and examples/plot_qmmm.py on what it wrote."""

import csv
import os
import subprocess
import sys

import openmm as mm
import openmm.app as app
import openmm.unit as unit
import pytest

import openmmdft
from test_builder import SETTINGS, buildSystem

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def test_reporter_rows_match_the_qm_results_and_plot(tmp_path):
    topology, system, positions = buildSystem()
    built = openmmdft.createQMMMSystem(topology, system, range(6), **SETTINGS)
    simulation = app.Simulation(topology, built, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName("CPU"))
    simulation.context.setPositions(positions)
    path = str(tmp_path / "qmmm.csv")
    reporter = openmmdft.QMMMReporter(path, 2, totalEnergy=True)
    simulation.reporters.append(reporter)
    simulation.step(6)
    qm = [f for f in built.getForces() if isinstance(f, openmmdft.QMMMForce)][0]
    last = qm.getQMResults(simulation.context)
    del simulation.reporters[:]
    del reporter
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, data = rows[0], rows[1:]
    assert [int(r[0]) for r in data] == [2, 4, 6]
    column = dict(zip(header, data[-1]))
    # The last row is the QM computation at step 6 (the report asked for the energy there).
    assert float(column["totalEnergy (kJ/mol)"]) == pytest.approx(last["totalEnergy"].value_in_unit(unit.kilojoule_per_mole), abs=1e-6)
    assert int(column["SCF iterations"]) == last["scfIterations"]
    assert int(column["MM charges"]) == 6
    assert float(column["total energy (kJ/mol)"]) == pytest.approx(
        float(column["potential energy (kJ/mol)"]) + float(column["kinetic energy (kJ/mol)"]), abs=1e-5)
    assert float(column["QM wall time (s)"]) > 0
    output = str(tmp_path / "qmmm.png")
    run = subprocess.run([sys.executable, os.path.join(EXAMPLES, "plot_qmmm.py"), path, "--output", output],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert os.path.getsize(output) > 1000 and "3 reports" in run.stdout


def test_reporter_needs_a_qm_region(tmp_path):
    topology, system, positions = buildSystem()
    simulation = app.Simulation(topology, system, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName("Reference"))
    simulation.context.setPositions(positions)
    simulation.reporters.append(openmmdft.QMMMReporter(str(tmp_path / "x.csv"), 1))
    with pytest.raises(ValueError, match="no QMMMForce with QM atoms"):
        simulation.step(1)
    with pytest.raises(ValueError, match="reportInterval"):
        openmmdft.QMMMReporter(str(tmp_path / "y.csv"), 0)


@pytest.mark.parametrize("interval", [2.7, float("nan"), float("inf"), "10", True])
def test_report_interval_must_be_a_whole_number_of_steps(tmp_path, interval):
    with pytest.raises(ValueError, match="whole number of steps"):
        openmmdft.QMMMReporter(str(tmp_path / "z.csv"), interval)
