"""Energy conservation of QM/MM MD at constant energy: one QM water (SVWN5/6-31G*, density fitting, grid
(50, 194), SCF 1e-8) among 500 flexible TIP3P waters (Amber14), velocity Verlet at 0.5 fs, built with
openmmdft.createQMMMSystem and recorded with openmmdft.QMMMReporter.

Preparation (once, cached in the output folder as prepared.xml): a 2.5 nm cube of 501 waters, MM energy
minimization, 2 ps of MM Langevin dynamics at 300 K, then 0.1 ps of QM/MM Langevin dynamics (default
settings). Every variant starts its NVE run from that state.

Variants (--variants, comma separated):
  default     no cutoff, ASPC(3) density extrapolation, the recycled DIIS subspace and the Coulomb-response step
              (the defaults)
  noresponse  the same without the Coulomb-response step (setCoulombResponseSteps(0))
  plaindiis   no cutoff, ASPC(3), DIIS without the recycled subspace and without the Coulomb-response step
  previous    no cutoff, PreviousDensity
  xlbomd      no cutoff, XLBOMD(5)
  polynomial  no cutoff, PolynomialExtrapolation(5) and the recycled DIIS subspace
  switched    cutoff 1.0 nm (CutoffNonPeriodic: reaction field for MM-MM electrostatics, switched
              Lennard-Jones from 0.8 nm) with the embedding switching function from 0.8 nm
  mts2, mts4  no cutoff, the QM energy in its own force group evaluated every 2 or 4 inner steps of 0.5 fs
              (MTSIntegrator)
  mm          the force field's System with no QM region: what velocity Verlet itself conserves here

For each variant the total energy is reported every 10 fs; the drift is the slope of a least-squares line
through it (kJ/mol/ps) and the fluctuation the RMS deviation from that line. Writes <variant>.csv,
<variant>.png (examples/plot_qmmm.py) and appends a row to summary.md in the output folder.

    python benchmarks/energy_conservation.py --variants default --ps 10 [--output DIR] [--platform CPU]
"""

import argparse
import importlib.util
import os
import platform as pyplatform
import sys
import time

import numpy as np
import openmm as mm
import openmm.app as app
import openmm.unit as unit

import openmmdft

FS = unit.femtosecond
NM = unit.nanometer
KJ = unit.kilojoule_per_mole
TIMESTEP = 0.5 * FS
REPORT_STEPS = 20  # 10 fs
QM_SETTINGS = dict(basisSet="6-31G*", grid=(50, 194), scfConvergence=1e-8)


def mmSystem(topology, cutoff):
    forcefield = app.ForceField("amber14/tip3p.xml")
    if cutoff:
        system = forcefield.createSystem(topology, nonbondedMethod=app.CutoffNonPeriodic, nonbondedCutoff=1.0 * NM,
                                         constraints=None, rigidWater=False)
        for force in system.getForces():
            if isinstance(force, mm.NonbondedForce):
                force.setUseSwitchingFunction(True)
                force.setSwitchingDistance(0.8 * NM)
        return system
    return forcefield.createSystem(topology, nonbondedMethod=app.NoCutoff, constraints=None, rigidWater=False)


def waterDroplet():
    """501 TIP3P waters in a 2.5 nm cube, used without periodicity; the QM water is the one nearest the centre."""
    modeller = app.Modeller(app.Topology(), [])
    modeller.addSolvent(app.ForceField("amber14/tip3p.xml"), model="tip3p", boxSize=mm.Vec3(2.5, 2.5, 2.5) * NM)
    topology = modeller.topology
    topology.setPeriodicBoxVectors(None)
    positions = modeller.positions.value_in_unit(NM)
    centre = np.mean(np.array([[p.x, p.y, p.z] for p in positions]), axis=0)
    waters = list(topology.residues())
    oxygen = lambda r: next(a for a in r.atoms() if a.element.symbol == "O").index
    qm = min(waters, key=lambda r: np.linalg.norm(np.array(positions[oxygen(r)]) - centre))
    return topology, modeller.positions, [a.index for a in qm.atoms()]


def qmmmSystem(topology, qmAtoms, variant):
    if variant == "mm":
        return mmSystem(topology, False), None
    system = openmmdft.createQMMMSystem(topology, mmSystem(topology, variant == "switched"), qmAtoms, **QM_SETTINGS)
    force = next(f for f in system.getForces() if isinstance(f, openmmdft.QMMMForce))
    if variant == "previous":
        force.setDensityExtrapolation(openmmdft.QMMMForce.PreviousDensity)
    elif variant == "plaindiis":
        force.setRecycledSubspaceSize(0)
        force.setCoulombResponseSteps(0)
    elif variant == "noresponse":
        force.setCoulombResponseSteps(0)
    elif variant == "xlbomd":
        force.setDensityExtrapolation(openmmdft.QMMMForce.XLBOMD, 5)
    elif variant == "polynomial":
        force.setDensityExtrapolation(openmmdft.QMMMForce.PolynomialExtrapolation, 5)
    elif variant == "switched":
        force.setUseEmbeddingSwitchingFunction(True)
        force.setEmbeddingSwitchingDistance(0.8 * NM)
    elif variant.startswith("mts"):
        force.setQMForceGroup(1)
    return system, force


def integrator(variant):
    if variant.startswith("mts"):
        k = int(variant[3:])
        return mm.MTSIntegrator(k * TIMESTEP, [(1, 1), (0, k)]), k
    return mm.VerletIntegrator(TIMESTEP), 1


def prepare(path, platform):
    topology, positions, qmAtoms = waterDroplet()
    system = mmSystem(topology, False)
    mmSimulation = app.Simulation(topology, system, mm.LangevinMiddleIntegrator(300, 5 / unit.picosecond, TIMESTEP), platform)
    mmSimulation.context.setPositions(positions)
    mmSimulation.minimizeEnergy()
    mmSimulation.context.setVelocitiesToTemperature(300 * unit.kelvin, 1)
    mmSimulation.step(4000)  # 2 ps MM
    qmSystem, _ = qmmmSystem(topology, qmAtoms, "default")
    simulation = app.Simulation(topology, qmSystem, mm.LangevinMiddleIntegrator(300, 5 / unit.picosecond, TIMESTEP), platform)
    state = mmSimulation.context.getState(getPositions=True, getVelocities=True)
    simulation.context.setPositions(state.getPositions())
    simulation.context.setVelocities(state.getVelocities())
    simulation.step(200)  # 0.1 ps QM/MM
    state = simulation.context.getState(getPositions=True, getVelocities=True)
    with open(path, "w") as f:
        f.write(mm.XmlSerializer.serialize(state))
    with open(path + ".qm", "w") as f:
        f.write(" ".join(str(i) for i in qmAtoms))
    return topology, qmAtoms


def fit(csvPath):
    data = np.genfromtxt(csvPath, delimiter=",", names=True)
    names = data.dtype.names
    time_ps = data[names[1]]
    total = data[[n for n in names if n.lower().startswith("total_energy")][0]]
    slope, intercept = np.polyfit(time_ps, total, 1)
    rms = float(np.sqrt(np.mean((total - (slope * time_ps + intercept)) ** 2)))
    iterations = [n for n in names if n.startswith("SCF_iterations")]
    meanIterations = float(np.mean(data[iterations[0]])) if iterations else float("nan")
    return slope, rms, meanIterations, float(time_ps[-1] - time_ps[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default="default")
    parser.add_argument("--ps", type=float, default=10.0, help="length of each NVE run (ps)")
    parser.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "results", "energy-conservation"))
    parser.add_argument("--platform", default="CPU")
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    platform = mm.Platform.getPlatformByName(args.platform)
    prepared = os.path.join(args.output, "prepared.xml")
    if not os.path.exists(prepared):
        print("preparing: MM minimization, 2 ps MM NVT, 0.1 ps QM/MM NVT", flush=True)
        prepare(prepared, platform)
    topology, _, _ = waterDroplet()
    with open(prepared + ".qm") as f:
        qmAtoms = [int(i) for i in f.read().split()]
    with open(prepared) as f:
        start = mm.XmlSerializer.deserialize(f.read())
    spec = importlib.util.spec_from_file_location("plot_qmmm", os.path.join(os.path.dirname(__file__), "..", "examples",
                                                                          "plot_qmmm.py"))
    plotter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plotter)
    summary = os.path.join(args.output, "summary.md")
    if not os.path.exists(summary):
        with open(summary, "w") as f:
            f.write("| variant | NVE ps | drift (kJ/mol/ps) | RMS about the fit (kJ/mol) | SCF iterations per report | "
                    "wall s | machine, date |\n|---|---|---|---|---|---|---|\n")
    for variant in args.variants.split(","):
        system, force = qmmmSystem(topology, qmAtoms, variant)
        nve, k = integrator(variant)
        simulation = app.Simulation(topology, system, nve, platform)
        simulation.context.setPositions(start.getPositions())
        simulation.context.setVelocities(start.getVelocities())
        csvPath = os.path.join(args.output, variant + ".csv")
        interval = max(1, REPORT_STEPS // k)
        if force is None:
            simulation.reporters.append(app.StateDataReporter(csvPath, interval, step=True, time=True, potentialEnergy=True,
                                                              kineticEnergy=True, totalEnergy=True))
        else:
            simulation.reporters.append(openmmdft.QMMMReporter(csvPath, interval, totalEnergy=True))
        steps = int(round(args.ps * 1000 / (TIMESTEP.value_in_unit(FS) * k)))
        began = time.time()
        simulation.step(steps)
        wall = time.time() - began
        del simulation
        slope, rms, iterations, length = fit(csvPath)
        if force is not None:
            plotter.plot(plotter.readColumns(csvPath), os.path.join(args.output, variant + ".png"))
        row = "| %s | %.1f | %.4f | %.3f | %.1f | %.0f | %s, %d threads, %s |" % (
            variant, length, slope, rms, iterations, wall, pyplatform.processor() or pyplatform.machine(), os.cpu_count(),
            time.strftime("%Y-%m-%d"))
        print(row, flush=True)
        with open(summary, "a") as f:
            f.write(row + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
