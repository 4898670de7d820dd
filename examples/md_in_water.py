"""openmm-dft demo: a POPC lipid molecule in TIP3P water whose Coulomb interactions are
carried by QMMMForce instead of OpenMM's NonbondedForce, then QM/MM MD with a QM water.

The molecule comes from OpenMM's own data files (openmm/app/data/POPC.pdb), the force
field is Amber14 (lipid17) with TIP3P. The script
  1. checks that the energy with QMMMForce equals the energy with NonbondedForce alone,
  2. runs Langevin MD with QMMMForce carrying the electrostatics (MM only, any platform), and
  3. continues from there with QM/MM MD on the CPU platform, in a System made by
     openmmdft.createQMMMSystem: one water becomes a Kohn-Sham LDA region (6-31G*, density fitting)
     embedded in the MM charges of the whole molecules within 1 nm, with analytic QM forces; first
     Langevin dynamics at 300 K, then constant energy (velocity Verlet, 1 fs), recorded by
     openmmdft.QMMMReporter (qmmm.csv) and plotted (qmmm.png, examples/plot_qmmm.py), so that the
     conservation of the total energy shows that the forces are the energy's derivative.

    python examples/md_in_water.py [--steps N] [--qmmm-nvt-steps K] [--qmmm-steps M] [--output-dir DIR]
                                   [--platform NAME]
"""

import argparse
import os
import sys
import time

import openmm as mm
import openmm.app as app
import openmm.unit as unit

import openmmdft


def buildSolvatedLipid(padding):
    data = os.path.join(os.path.dirname(app.__file__), "data")
    pdb = app.PDBFile(os.path.join(data, "POPC.pdb"))
    modeller = app.Modeller(pdb.topology, pdb.positions)
    first = next(modeller.topology.residues())
    modeller.delete([r for r in modeller.topology.residues() if r is not first])
    forcefield = app.ForceField("amber14-all.xml", "amber14/tip3p.xml")
    modeller.addSolvent(forcefield, model="tip3p", padding=padding)
    return modeller, forcefield


def defaultPlatform():
    """CUDA where a GPU is usable; otherwise CPU (OpenCL is often a CPU emulation such as PoCL)."""
    names = [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]
    return "CUDA" if "CUDA" in names else "CPU"


def potentialEnergy(system, positions, platform):
    context = mm.Context(system, mm.VerletIntegrator(0.001), platform)
    context.setPositions(positions)
    return context.getState(getEnergy=True).getPotentialEnergy()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--platform", default=None, help="OpenMM platform (default: CUDA if it works here, else CPU)")
    parser.add_argument("--qmmm-nvt-steps", type=int, default=20, help="QM/MM Langevin steps after the MM run")
    parser.add_argument("--qmmm-steps", type=int, default=60, help="QM/MM constant-energy steps after those (0: no QM/MM)")
    parser.add_argument("--output-dir", default="qmmm-demo", help="where qmmm.csv and qmmm.png go")
    args = parser.parse_args()

    modeller, forcefield = buildSolvatedLipid(0.8 * unit.nanometer)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.CutoffPeriodic,
                                     nonbondedCutoff=1.0 * unit.nanometer, constraints=app.HBonds)
    platform = mm.Platform.getPlatformByName(args.platform or defaultPlatform())
    print("openmm-dft demo: one POPC lipid in %d TIP3P waters, %d atoms, platform %s"
          % (modeller.topology.getNumResidues() - 1, system.getNumParticles(), platform.getName()))

    reference = potentialEnergy(system, modeller.positions, platform)
    forceFieldSystem = mm.XmlSerializer.clone(system)  # for the QM/MM System below
    qmmm = openmmdft.replaceCoulomb(system, modeller.topology)
    replaced = potentialEnergy(system, modeller.positions, platform)
    print("1-4 Coulomb scale read from the force field: %.4f" % qmmm.getCoulomb14Scale())
    print("potential energy, NonbondedForce Coulomb: %s" % reference)
    print("potential energy, QMMMForce Coulomb:      %s" % replaced)
    relative = abs((replaced - reference) / reference)
    if relative > 1e-4:
        print("the two energies differ by %.2e relative: something is wrong" % relative)
        return 1

    integrator = mm.LangevinMiddleIntegrator(300 * unit.kelvin, 1.0 / unit.picosecond, 0.002 * unit.picoseconds)
    simulation = app.Simulation(modeller.topology, system, integrator, platform)
    simulation.context.setPositions(modeller.positions)
    simulation.minimizeEnergy(maxIterations=200)
    simulation.context.setVelocitiesToTemperature(300 * unit.kelvin)
    simulation.reporters.append(app.StateDataReporter(sys.stdout, max(1, args.steps // 10), step=True,
                                                      potentialEnergy=True, kineticEnergy=True,
                                                      temperature=True, speed=True))
    start = time.time()
    simulation.step(args.steps)
    print("MM MD: %d steps in %.1f s" % (simulation.currentStep, time.time() - start))
    if args.qmmm_steps > 0:
        qmmmDynamics(forceFieldSystem, modeller.topology, simulation.context.getState(getPositions=True, getVelocities=True),
                     args.qmmm_nvt_steps, args.qmmm_steps, args.output_dir)
    return 0


def qmmmDynamics(system, topology, state, nvtSteps, nveSteps, outputDir):
    """QM/MM MD in a QM/MM System made from the force field's System (createQMMMSystem): the first water is the
    QM region. Its constraints are kept (removeConstraints=False), so it stays as rigid as the MM waters and 1 fs
    steps conserve energy. First Langevin dynamics at 300 K (NVT), then velocity Verlet at constant energy (NVE),
    recorded by QMMMReporter into qmmm.csv and plotted into qmmm.png (examples/plot_qmmm.py)."""
    water = next(r for r in topology.residues() if r.name == "HOH")
    copy = openmmdft.createQMMMSystem(topology, system, water.atoms(), basisSet="6-31G*", removeConstraints=False,
                                      grid=(50, 194))
    cpu = mm.Platform.getPlatformByName("CPU")
    print("QM/MM MD: water %s (atoms %s) is the QM region (SVWN5/6-31G*, density fitting), CPU platform"
          % (water.index, [a.index for a in water.atoms()]))
    nvt = app.Simulation(topology, copy, mm.LangevinMiddleIntegrator(300 * unit.kelvin, 1 / unit.picosecond,
                                                                      0.001 * unit.picoseconds), cpu)
    nvt.context.setPeriodicBoxVectors(*state.getPeriodicBoxVectors())
    nvt.context.setPositions(state.getPositions())
    nvt.context.setVelocities(state.getVelocities())
    nvt.context.applyConstraints(1e-8)
    nvt.reporters.append(app.StateDataReporter(sys.stdout, max(1, nvtSteps // 4), step=True, potentialEnergy=True,
                                               temperature=True))
    start = time.time()
    nvt.step(nvtSteps)
    print("QM/MM NVT (Langevin, 300 K, 1 fs): %d steps in %.1f s" % (nvtSteps, time.time() - start))

    nve = app.Simulation(topology, copy, mm.VerletIntegrator(0.001 * unit.picoseconds), cpu)
    nve.context.setState(nvt.context.getState(getPositions=True, getVelocities=True, getParameters=True))
    nve.context.applyVelocityConstraints(1e-8)
    os.makedirs(outputDir, exist_ok=True)
    csvPath = os.path.join(outputDir, "qmmm.csv")
    reporter = openmmdft.QMMMReporter(csvPath, max(1, nveSteps // 20), totalEnergy=True)
    nve.reporters.append(reporter)
    start = time.time()
    nve.step(nveSteps)
    seconds = time.time() - start
    del nve.reporters[:]
    del reporter  # closes the file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plot_qmmm
    columns = plot_qmmm.readColumns(csvPath)
    print("QM/MM NVE (velocity Verlet, 1 fs), as QMMMReporter wrote it (%s):" % csvPath)
    print("  step   E_total (kJ/mol)   E_QM (kJ/mol)   SCF it.  MM charges  HOMO-LUMO (kJ/mol)")
    for i in range(len(columns["step"])):
        print("  %4d   %16.4f   %13.4f   %5d   %9d   %10.2f" % (
            columns["step"][i], columns["total energy (kJ/mol)"][i], columns["totalEnergy (kJ/mol)"][i],
            columns["SCF iterations"][i], columns["MM charges"][i], columns["HOMO-LUMO gap (kJ/mol)"][i]))
    total = columns["total energy (kJ/mol)"]
    png = os.path.join(outputDir, "qmmm.png")
    plot_qmmm.plot(columns, png)
    print("QM/MM NVE: %d steps in %.1f s; total energy changed by %.3f kJ/mol (the MM cutoff and molecules entering or "
          "leaving the QM embedding add to the integrator's own error here); plot: %s" % (nveSteps, seconds, total[-1] - total[0], png))


if __name__ == "__main__":
    sys.exit(main())
