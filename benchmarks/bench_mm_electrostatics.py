"""Energy + forces of QMMMForce against NonbondedForce (Coulomb only, same cutoff method)
on the same platform, for boxes of water-like molecules of 1k, 5k and 20k atoms.

Prints the time per evaluation of each and the ratio NonbondedForce / QMMMForce
(> 1 means QMMMForce is faster). Each evaluation moves the atoms a little, as an MD
step does, so neighbor lists are exercised as in a run.

    python benchmarks/bench_mm_electrostatics.py [--platforms CPU,OpenCL] [--sizes 1000,5000,20000]
"""

import argparse
import platform as pyplatform
import time

import numpy as np
import openmm as mm
import openmm.unit as unit

import openmmdft


def waterBox(numAtoms, seed=1):
    """Water-like molecules on a jittered lattice at liquid density (~100 atoms/nm^3)."""
    rng = np.random.default_rng(seed)
    numMolecules = numAtoms // 3
    box = (numAtoms / 100.0) ** (1.0 / 3.0)
    perSide = int(np.ceil(numMolecules ** (1.0 / 3.0)))
    spacing = box / perSide
    positions, charges, bonds = [], [], []
    for m in range(numMolecules):
        i, j, k = m % perSide, (m // perSide) % perSide, m // perSide**2
        o = (np.array([i, j, k]) + 0.5) * spacing + rng.uniform(-0.02, 0.02, 3)
        h1 = o + np.array([0.09572, 0, 0])
        h2 = o + np.array([-0.024, 0.0927, 0])
        positions += [o, h1, h2]
        charges += [-0.834, 0.417, 0.417]
        bonds += [(3 * m, 3 * m + 1), (3 * m, 3 * m + 2)]
    return np.array(positions), charges, bonds, box


def timeForce(force, positions, box, platform, repeats):
    system = mm.System()
    for _ in range(len(positions)):
        system.addParticle(1.0)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(box, 0, 0), mm.Vec3(0, box, 0), mm.Vec3(0, 0, box))
    system.addForce(force)
    context = mm.Context(system, mm.VerletIntegrator(0.001), platform)
    rng = np.random.default_rng(2)
    current = positions.copy()
    context.setPositions(current)
    context.getState(getEnergy=True, getForces=True)  # build lists, compile kernels
    elapsed = 0.0
    for _ in range(repeats):
        current += rng.normal(0, 0.002, current.shape)  # ~ one MD step of thermal motion
        context.setPositions(current)
        start = time.perf_counter()
        state = context.getState(getEnergy=True, getForces=True)
        elapsed += time.perf_counter() - start
    return elapsed / repeats, state.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--platforms", default=None, help="comma-separated (default: every platform but Reference)")
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--cutoff", type=float, default=1.0)
    parser.add_argument("--methods", default="CutoffPeriodic,NoCutoff")
    args = parser.parse_args()
    names = args.platforms.split(",") if args.platforms else [
        mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())
        if mm.Platform.getPlatform(i).getName() != "Reference"]
    print("machine: %s, %s" % (pyplatform.node(), pyplatform.processor() or pyplatform.machine()))
    print("%-8s %7s  %-16s %14s %14s %8s %12s" % ("platform", "atoms", "method", "Nonbonded ms", "QMMMForce ms", "ratio", "|dE|/|E|"))
    for name in names:
        platform = mm.Platform.getPlatformByName(name)
        for size in [int(s) for s in args.sizes.split(",")]:
            positions, charges, bonds, box = waterBox(size)
            for method in args.methods.split(","):
                nonbonded = mm.NonbondedForce()
                qmmm = openmmdft.QMMMForce()
                for q in charges:
                    nonbonded.addParticle(q, 1.0, 0.0)
                    qmmm.addParticle(q)
                for b in bonds:
                    qmmm.addBond(*b)
                nonbonded.createExceptionsFromBonds(bonds, 0.5, 0.0)
                nonbonded.setNonbondedMethod(getattr(mm.NonbondedForce, method))
                qmmm.setNonbondedMethod(getattr(openmmdft.QMMMForce, method))
                nonbonded.setCutoffDistance(args.cutoff)
                qmmm.setCutoffDistance(args.cutoff)
                nonbonded.setUseDispersionCorrection(False)
                tNb, eNb = timeForce(nonbonded, positions, box, platform, args.repeats)
                tQm, eQm = timeForce(qmmm, positions, box, platform, args.repeats)
                print("%-8s %7d  %-16s %14.3f %14.3f %8.2f %12.1e" % (name, len(positions), method, 1e3 * tNb, 1e3 * tQm,
                                                                     tNb / tQm, abs(eQm - eNb) / abs(eNb)))


if __name__ == "__main__":
    main()
