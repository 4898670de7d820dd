"""Energy and analytic forces of water clusters (H2O)n: openmm-dft's QMMMForce (a Context's getState with
energy and forces) against PySCF (SCF, then grad.rks with grid_response = True: the same exact derivative),
same settings, same machine, same threads (the settings of bench_qm_energy.py: SVWN5, DZVP, density fitting
with def2-universal-jfit, grid (50, 194), Becke partition). Prints the times of energy + gradient, the ratio
PySCF / openmm-dft (> 1: openmm-dft faster), the gradient part of each program's time, and the largest
difference of the two gradients (Eh/bohr).

    python benchmarks/bench_qm_forces.py [--sizes 1,8] [--platform CPU]
"""

import argparse
import os
import platform as pyplatform
import time

import numpy as np
import openmm.unit as unit

from bench_qm_energy import KJ_PER_HARTREE, NM_PER_BOHR, pyscfRKS, qmContext, water_cluster


def openmmdftEvaluate(atoms, platformName, energyOnly):
    """One evaluation in a fresh Context (SAD guess): energy-only, or energy and forces. Returns (gradient, s)."""
    context, _ = qmContext(atoms, platformName, energyOnly)
    start = time.perf_counter()
    state = context.getState(getEnergy=True, getForces=not energyOnly)
    elapsed = time.perf_counter() - start
    if energyOnly:
        return None, elapsed
    forces = state.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer)
    return -forces / KJ_PER_HARTREE * NM_PER_BOHR, elapsed  # Eh/bohr


def pyscfForces(atoms):
    mf = pyscfRKS(atoms)
    start = time.perf_counter()
    mf.kernel()
    scf = time.perf_counter() - start
    g = mf.nuc_grad_method()
    g.grid_response = True
    g.verbose = 0
    start = time.perf_counter()
    gradient = g.kernel()
    return gradient, scf + time.perf_counter() - start, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1,8")
    parser.add_argument("--platform", default="CPU")
    args = parser.parse_args()
    from pyscf import lib
    print("machine: %s, %s, %d threads (PySCF %d), %s" % (pyplatform.node(), pyplatform.processor() or pyplatform.machine(),
                                                          os.cpu_count(), lib.num_threads(), time.strftime("%Y-%m-%d")))
    print("%4s %6s %14s %12s %8s %16s %16s %17s" % ("n", "atoms", "openmm-dft s", "PySCF s", "ratio", "ours: gradient s",
                                                   "PySCF: gradient s", "max |dG| Eh/bohr"))
    for n in [int(s) for s in args.sizes.split(",")]:
        atoms = water_cluster(n)
        gOurs, tOurs = openmmdftEvaluate(atoms, args.platform, False)
        _, tEnergy = openmmdftEvaluate(atoms, args.platform, True)
        gPy, tPy, tGradPy = pyscfForces(atoms)
        print("%4d %6d %14.2f %12.2f %8.2f %16.2f %16.2f %17.2e" % (n, len(atoms), tOurs, tPy, tPy / tOurs, tOurs - tEnergy,
                                                                   tGradPy, np.abs(gOurs - gPy).max()))


if __name__ == "__main__":
    main()
