"""QM/MM demo, MM part: a POPC lipid molecule in TIP3P water whose Coulomb interactions
are carried by openmm-dft's QMMMForce instead of OpenMM's NonbondedForce.

The molecule comes from OpenMM's own data files (openmm/app/data/POPC.pdb), the force
field is Amber14 (lipid17) with TIP3P. The script checks that the energy with QMMMForce
equals the energy with NonbondedForce alone, then runs Langevin MD and reports energies.
When the QM region exists (issue 3) this becomes the QM/MM demo.

    python examples/md_in_water.py [--steps N] [--platform NAME]
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


def potentialEnergy(system, positions, platform):
    context = mm.Context(system, mm.VerletIntegrator(0.001), platform)
    context.setPositions(positions)
    return context.getState(getEnergy=True).getPotentialEnergy()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--platform", default=None, help="OpenMM platform (default: the fastest available)")
    args = parser.parse_args()

    modeller, forcefield = buildSolvatedLipid(0.8 * unit.nanometer)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.CutoffPeriodic,
                                     nonbondedCutoff=1.0 * unit.nanometer, constraints=app.HBonds)
    platform = mm.Platform.getPlatformByName(args.platform) if args.platform else None
    if platform is None:
        platform = max((mm.Platform.getPlatform(i) for i in range(mm.Platform.getNumPlatforms())),
                       key=lambda p: p.getSpeed())
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
    start = time.time()
    simulation.step(args.steps)
    print("ran %d steps in %.1f s" % (args.steps, time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
