"""SCF iterations per QM/MM MD step for a QM water in a periodic TIP3P box with a cutoff, where MM molecules enter and
leave the embedding every few steps.

One water of a cubic TIP3P box (flexible, no constraints; amber14/tip3p.xml) is the QM region (6-31G*, density
fitting, grid (30, 110), SCF convergence 1e-8, the QMMMForce defaults otherwise: ASPC(3), recycled DIIS, Coulomb
response), CutoffPeriodic with the embedding switching function from cutoff - 0.1 nm (--no-switch: without it);
the box is minimized, given velocities at 300 K and run --warmup steps of 0.5 fs before --steps measured ones.
Prints the mean SCF iterations per step over all steps and over the steps whose embedded MM molecules changed, the
share of those steps, and how many past densities the guesses combined (1: the history had restarted).

    python benchmarks/bench_scf_iterations_water_box.py [--cutoff 0.8] [--box 1.86] [--steps 300] [--warmup 20]
                                                        [--no-switch] [--platform CPU]
"""

import argparse
import datetime
import platform as pyplatform

import numpy as np
import openmm as mm
import openmm.app as app
import openmm.unit as unit

import openmmdft


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cutoff", type=float, default=0.8)
    parser.add_argument("--box", type=float, default=1.86)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--no-switch", action="store_true")
    parser.add_argument("--platform", default="CPU")
    args = parser.parse_args()

    forceField = app.ForceField("amber14/tip3p.xml")
    modeller = app.Modeller(app.Topology(), [])
    modeller.addSolvent(forceField, model="tip3p", boxSize=mm.Vec3(args.box, args.box, args.box) * unit.nanometer)
    system = forceField.createSystem(modeller.topology, nonbondedMethod=app.CutoffPeriodic,
                                     nonbondedCutoff=args.cutoff * unit.nanometer, constraints=None, rigidWater=False)
    residues = list(modeller.topology.residues())
    qmAtoms = [a.index for a in residues[len(residues) // 2].atoms()]
    qmmm = openmmdft.createQMMMSystem(modeller.topology, system, qmAtoms, basisSet="6-31G*", grid=(30, 110),
                                      scfConvergence=1e-8)
    force = [f for f in qmmm.getForces() if isinstance(f, openmmdft.QMMMForce)][0]
    if not args.no_switch:
        force.setUseEmbeddingSwitchingFunction(True)
        force.setEmbeddingSwitchingDistance((args.cutoff - 0.1) * unit.nanometer)
    integrator = mm.VerletIntegrator(0.0005)
    context = mm.Context(qmmm, integrator, mm.Platform.getPlatformByName(args.platform))
    context.setPositions(modeller.positions)
    mm.LocalEnergyMinimizer.minimize(context, 10, 100)
    context.setVelocitiesToTemperature(300, 3)
    integrator.step(args.warmup)
    iterations, used, charges = [], [], []
    for _ in range(args.steps):
        integrator.step(1)
        results = force.getQMResults(context)
        iterations.append(results["scfIterations"])
        used.append(results["extrapolatedDensities"])
        charges.append(results["numMMCharges"])
    iterations, used, charges = np.array(iterations), np.array(used), np.array(charges)
    changed = np.r_[False, charges[1:] != charges[:-1]]
    print("machine: %s, %s; %s" % (pyplatform.node(), pyplatform.machine(), datetime.date.today()))
    print("QM water in a %.2f nm TIP3P box (%d waters), cutoff %.2f nm, %s, %d steps of 0.5 fs on %s"
          % (args.box, len(residues), args.cutoff, "no switch" if args.no_switch else "switched from %.2f nm" % (args.cutoff - 0.1),
             args.steps, args.platform))
    print("steps whose embedded MM molecules changed: %d (%.0f%%)" % (changed.sum(), 100 * changed.mean()))
    print("SCF iterations per step: all %.2f, on those steps %.2f, on the others %.2f"
          % (iterations.mean(), iterations[changed].mean() if changed.any() else float("nan"), iterations[~changed].mean()))
    print("past densities the guesses combined: mean %.2f, steps with only one (a restarted history): %d"
          % (used.mean(), (used <= 1).sum()))


if __name__ == "__main__":
    main()
