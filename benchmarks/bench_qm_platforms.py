"""QM/MM MD step cost on every platform present: (H2O)n as the QM region (SVWN5, DZVP, density fitting with
def2-universal-jfit, grid (50, 194), SCF convergence 1e-8) inside a shell of MM TIP3P waters (no cutoff),
velocity Verlet at 0.5 fs from the previous step's density. For each platform: seconds per MD step, SCF
iterations per step, seconds per SCF iteration (the step's time divided by its iterations: gradient
included), where the XC work ran, and the ratio of the CPU platform's step time to this platform's
(> 1: faster than CPU), all in one run on one machine.

On OpenCL through PoCL the "device" is the same CPU cores: the numbers then show the cost structure of
the device path (kernel launches, transfers), not GPU speed.

    python benchmarks/bench_qm_platforms.py [--sizes 1,4,8,24] [--steps 5] [--platforms CPU,OpenCL,CUDA]
"""

import argparse
import os
import platform as pyplatform
import time

import numpy as np
import openmm as mm
import openmm.unit as unit

import openmmdft
from bench_qm_energy import GRID, water_cluster

TIP3P = (-0.834, 0.417, 0.417)


def mmShell(qmPositions, count, seed=7):
    """count MM waters on a shell from 0.35 nm outside the QM cluster's centre, no closer than 0.28 nm to any atom: 0.8 nm
    out for up to 60 waters, beyond that as far as about 1.6 times liquid water's volume per molecule needs (as
    BenchQMRegion.cpp does), so that any number fits."""
    rng = np.random.default_rng(seed)
    centre = qmPositions.mean(axis=0)
    radius = np.linalg.norm(qmPositions - centre, axis=1).max()
    outer = ((radius + 0.35) ** 3 + count * 0.03 * 3 / (4 * np.pi) * 1.6) ** (1 / 3)
    outer = max(radius + 0.8, outer) if count > 60 else radius + 0.8
    water = np.array([[0.0, 0.0, 0.0], [0.075695, 0.058588, 0.0], [-0.075695, 0.058588, 0.0]])  # TIP3P geometry
    placed, oxygens = [], list(qmPositions)
    while len(placed) < count:
        direction = rng.normal(size=3)
        o = centre + direction / np.linalg.norm(direction) * rng.uniform(radius + 0.35, outer)
        if min(np.linalg.norm(o - p) for p in oxygens) < 0.28:
            continue
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        placed.append(o + water @ q.T)
        oxygens.append(o)
    return placed


def buildSystem(n, mmWaters, basis="DZVP"):
    atoms = water_cluster(n)
    qm = np.array([xyz for _, xyz in atoms]) * 0.1  # angstrom -> nm
    system = mm.System()
    force = openmmdft.QMMMForce()
    positions = []
    for i, (z, _) in enumerate(atoms):
        system.addParticle(15.999 if z == 8 else 1.008)
        force.addParticle(0.0)
        force.addQMAtom(i, z)
        positions.append(qm[i])
    for i in range(0, len(atoms), 3):  # water_cluster lists O, H, H per molecule
        force.addBond(i, i + 1)
        force.addBond(i, i + 2)
    for water in mmShell(qm, mmWaters):
        first = system.getNumParticles()
        for atom in range(3):
            system.addParticle(15.999 if atom == 0 else 1.008)
            force.addParticle(TIP3P[atom])
            positions.append(water[atom])
        force.addBond(first, first + 1)
        force.addBond(first, first + 2)
        # Rigid TIP3P geometry (the benchmark times the QM part; MM waters need no bonded terms then).
        system.addConstraint(first, first + 1, 0.09572)
        system.addConstraint(first, first + 2, 0.09572)
        system.addConstraint(first + 1, first + 2, 0.15139)
    force.setBasisSet(basis)
    force.setAuxiliaryBasisSet("def2-universal-jfit")
    force.setGrid(*GRID)
    force.setSCFConvergence(1e-8)
    system.addForce(force)
    return system, force, np.array(positions)


def measure(system, force, positions, platformName, steps):
    integrator = mm.VerletIntegrator(0.0005)
    context = mm.Context(system, integrator, mm.Platform.getPlatformByName(platformName))
    context.setPositions(positions)
    context.setVelocitiesToTemperature(300, 1)
    integrator.step(1)  # first step: SAD guess, kernel compilation
    iterations, start = 0, time.perf_counter()
    for _ in range(steps):
        integrator.step(1)
        iterations += force.getQMResults(context)["scfIterations"]
    elapsed = (time.perf_counter() - start) / steps
    results = force.getQMResults(context)
    return elapsed, iterations / steps, results["xcBackend"], results["basisValueBytes"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1,4")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--mm-waters", type=int, default=60)
    parser.add_argument("--platforms", default="CPU,OpenCL,CUDA")
    args = parser.parse_args()
    present = {mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())}
    print("machine: %s, %s, %d threads, %s" % (pyplatform.node(), pyplatform.processor() or pyplatform.machine(),
                                                os.cpu_count(), time.strftime("%Y-%m-%d")))
    print("%4s %-8s %12s %10s %12s %8s %14s %12s" % ("n", "platform", "s per step", "SCF iter", "s per iter", "XC",
                                                      "basis MiB", "CPU / this"))
    for n in [int(s) for s in args.sizes.split(",")]:
        cpuTime = None
        for name in args.platforms.split(","):
            if name not in present:
                continue
            system, force, positions = buildSystem(n, args.mm_waters)
            try:
                perStep, iterations, backend, stored = measure(system, force, positions, name, args.steps)
            except Exception as e:
                print("%4d %-8s unavailable: %s" % (n, name, str(e).splitlines()[0][:80]))
                continue
            if name == "CPU":
                cpuTime = perStep
            ratio = "%.2f" % (cpuTime / perStep) if cpuTime else "-"
            print("%4d %-8s %12.3f %10.1f %12.4f %8s %14.1f %12s" % (n, name, perStep, iterations, perStep / iterations,
                                                                     backend, stored / 1048576.0, ratio), flush=True)


if __name__ == "__main__":
    main()
