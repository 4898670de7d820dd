"""Single-point KS-LDA energy of water clusters (H2O)n: openmm-dft's QMMMForce against PySCF
with the same settings on the same machine and the same number of threads.

Settings (both programs): SVWN5, DZVP basis (spherical), density fitting with
def2-universal-jfit, Treutler-Ahlrichs radial / Lebedev angular grid (50, 194), Becke
partition without atomic-size adjustment, no pruning, SAD guess, converged to 1e-7 in the
orbital gradient (openmm-dft) and 1e-9 Eh in the energy (PySCF). Prints times, the ratio
PySCF / openmm-dft (> 1: openmm-dft is faster), SCF iterations, the energy difference and the
difference of the formation energies E_n - n E_1 (seed 001, Table 5.1) in kcal/mol.

    python benchmarks/bench_qm_energy.py [--sizes 1,8,24] [--platform CPU]
"""

import argparse
import os
import platform as pyplatform
import sys
import time

import numpy as np
import openmm as mm
import openmm.unit as unit

import openmmdft

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "qmengine", "tests"))
from generate_pyscf_references import water_cluster  # noqa: E402  (the clusters of the engine's reference tests)

NM_PER_BOHR = 0.0529177210903
KJ_PER_HARTREE = 2625.4996394798254
BASIS_DIR = os.path.join(HERE, "..", "qmengine", "data", "basis")
GRID = (50, 194)


def qmContext(atoms, platformName, energyOnly):
    """A Context whose System is the cluster as one QM region, with this benchmark's settings."""
    system = mm.System()
    force = openmmdft.QMMMForce()
    for i, (z, _) in enumerate(atoms):
        system.addParticle(1.0)
        force.addParticle(0.0)
        force.addQMAtom(i, z)
    force.setBasisSet("DZVP")
    force.setAuxiliaryBasisSet("def2-universal-jfit")
    force.setGrid(*GRID)
    force.setQMEnergyOnly(energyOnly)
    system.addForce(force)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName(platformName))
    context.setPositions([np.array(xyz) * 0.1 for _, xyz in atoms])  # angstrom -> nm
    return context, force


def openmmdftEnergy(atoms, platformName):
    context, force = qmContext(atoms, platformName, True)  # single-point energies: no QM forces needed
    start = time.perf_counter()
    energy = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    elapsed = time.perf_counter() - start
    return energy / KJ_PER_HARTREE, elapsed, force.getQMResults(context)["scfIterations"]


def pyscfRKS(atoms):
    """PySCF's RKS with the settings of this benchmark (see the top of this file)."""
    from pyscf import dft, gto
    from pyscf.dft import gen_grid, radi
    mol = gto.Mole()
    mol.atom = [(z, tuple(np.array(xyz) * 0.1 / NM_PER_BOHR)) for z, xyz in atoms]
    mol.unit = "Bohr"
    path = os.path.join(BASIS_DIR, "dzvp.nw")
    mol.basis = {el: gto.basis.load(path, el) for el in ("O", "H")}
    mol.verbose = 0
    mol.build()
    mf = dft.RKS(mol)
    mf.xc = "LDA,VWN"
    mf.grids.atom_grid = GRID
    mf.grids.prune = None
    mf.grids.radii_adjust = None
    mf.grids.becke_scheme = gen_grid.original_becke
    mf.grids.radi_method = radi.treutler
    mf.conv_tol = 1e-9
    aux = os.path.join(BASIS_DIR, "def2-universal-jfit.nw")
    return mf.density_fit(auxbasis={el: gto.basis.load(aux, el) for el in ("O", "H")})


def pyscfEnergy(atoms):
    mf = pyscfRKS(atoms)
    cycles = []
    mf.callback = lambda envs: cycles.append(envs["cycle"])
    start = time.perf_counter()
    energy = mf.kernel()
    return energy, time.perf_counter() - start, len(cycles)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1,8,24")
    parser.add_argument("--platform", default="CPU")
    args = parser.parse_args()
    from pyscf import lib
    print("machine: %s, %s, %d threads (PySCF %d), %s" % (pyplatform.node(), pyplatform.processor() or pyplatform.machine(),
                                                          os.cpu_count(), lib.num_threads(), time.strftime("%Y-%m-%d")))
    print("%4s %6s %12s %12s %8s %10s %10s %12s %14s" % ("n", "atoms", "openmm-dft s", "PySCF s", "ratio", "iter ours",
                                                         "iter PySCF", "dE (Eh)", "dE_F kcal/mol"))
    monomer = water_cluster(1)
    e1Ours, e1Py = openmmdftEnergy(monomer, args.platform)[0], pyscfEnergy(monomer)[0]
    for n in [int(s) for s in args.sizes.split(",")]:
        atoms = water_cluster(n)
        eOurs, tOurs, itOurs = openmmdftEnergy(atoms, args.platform)
        ePy, tPy, itPy = pyscfEnergy(atoms)
        formation = ((eOurs - n * e1Ours) - (ePy - n * e1Py)) * 627.5094740631
        print("%4d %6d %12.2f %12.2f %8.2f %10d %10d %12.2e %14.2e" % (n, len(atoms), tOurs, tPy, tPy / tOurs, itOurs, itPy,
                                                                     eOurs - ePy, formation))


if __name__ == "__main__":
    main()
