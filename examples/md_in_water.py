"""openmm-dft demo: a POPC lipid molecule in TIP3P water whose Coulomb interactions are
carried by QMMMForce instead of OpenMM's NonbondedForce, with a QM water along the way.

The molecule comes from OpenMM's own data files (openmm/app/data/POPC.pdb), the force
field is Amber14 (lipid17) with TIP3P. The script
  1. checks that the energy with QMMMForce equals the energy with NonbondedForce alone,
  2. runs Langevin MD with QMMMForce carrying the electrostatics, and
  3. at each report, computes the Kohn-Sham LDA energy of one water (6-31G*) embedded in the
     MM charges of the whole molecules within 1 nm, in a copy of the System where that water
     is the QM region. QM forces are not implemented yet, so the QM region rides along in
     energy-only mode: the trajectory itself is MM; QM/MM MD comes with the forces issue.

    python examples/md_in_water.py [--steps N] [--platform NAME] [--qm-every K]
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
    parser.add_argument("--qm-reports", type=int, default=5, help="QM/MM energies along the run (0: none)")
    args = parser.parse_args()

    modeller, forcefield = buildSolvatedLipid(0.8 * unit.nanometer)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.CutoffPeriodic,
                                     nonbondedCutoff=1.0 * unit.nanometer, constraints=app.HBonds)
    platform = mm.Platform.getPlatformByName(args.platform or defaultPlatform())
    print("openmm-dft demo: one POPC lipid in %d TIP3P waters, %d atoms, platform %s"
          % (modeller.topology.getNumResidues() - 1, system.getNumParticles(), platform.getName()))

    reference = potentialEnergy(system, modeller.positions, platform)
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
    qmContext, qmForce = qmWaterContext(system, modeller.topology) if args.qm_reports > 0 else (None, None)
    start = time.time()
    chunks = max(1, args.qm_reports)
    for chunk in range(chunks):
        simulation.step(args.steps // chunks)
        if qmContext is not None:
            state = simulation.context.getState(getPositions=True)
            qmContext.setPeriodicBoxVectors(*state.getPeriodicBoxVectors())
            qmContext.setPositions(state.getPositions())
            qmContext.getState(getEnergy=True)
            r = qmForce.getQMResults(qmContext)
            print("  QM water at step %d: E_QM = %.6f Eh (QM-MM %.2f kJ/mol), %d SCF iterations, %d MM charges, "
                  "HOMO-LUMO gap %.3f eV" % (simulation.currentStep, r["totalEnergy"].value_in_unit(unit.kilojoule_per_mole) / 2625.4996394798254,
                                              r["qmmmEnergy"].value_in_unit(unit.kilojoule_per_mole), r["scfIterations"],
                                              r["numMMCharges"], r["homoLumoGap"].value_in_unit(unit.kilojoule_per_mole) / 96.48533212))
    print("ran %d steps in %.1f s" % (simulation.currentStep, time.time() - start))
    return 0


def qmWaterContext(system, topology):
    """A copy of the System in which the first water is a QM region (6-31G*, energy only), on the CPU."""
    copy = mm.XmlSerializer.clone(system)
    qmmm = [f for f in copy.getForces() if isinstance(f, openmmdft.QMMMForce)][0]
    water = next(r for r in topology.residues() if r.name == "HOH")
    for atom in water.atoms():
        qmmm.addQMAtom(atom.index, atom.element.atomic_number)
    qmmm.setBasisSet("6-31G*")
    qmmm.setQMEnergyOnly(True)
    context = mm.Context(copy, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("CPU"))
    return context, qmmm


if __name__ == "__main__":
    sys.exit(main())
