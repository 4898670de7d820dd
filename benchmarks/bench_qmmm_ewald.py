"""Cost of the QM region's long-range embedding (QMMMForce method Ewald, for PME Systems) against the cutoff-only
embedding (CutoffPeriodic), per MD step, same machine, one run: a QM water (SVWN5/6-31G*, density fitting, grid
(50, 194), SCF 1e-8) at the corner of a cubic box of TIP3P water (flexible, 0.5 fs), cutoff 1.0 nm with the
embedding switch from 0.8 nm. Ewald: the MM-MM Coulomb terms in OpenMM's PME; cutoff: in the QMMMForce (reaction
field). Prints seconds per step, the ratio, and the Ewald term's own time (its potentials are computed with the SCF
set-up, its gradient as "gradient.ewald").

    python benchmarks/bench_qmmm_ewald.py [--boxes 3.0,4.5] [--steps 5]
"""

import argparse
import os
import platform as pyplatform
import time

import openmm as mm
import openmm.app as app
import openmm.unit as unit

import openmmdft

NM = unit.nanometer


def stepTime(size, method, steps):
    forcefield = app.ForceField("amber14/tip3p.xml")
    modeller = app.Modeller(app.Topology(), [])
    modeller.addSolvent(forcefield, model="tip3p", boxSize=mm.Vec3(size, size, size) * NM)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=method, nonbondedCutoff=1.0 * NM,
                                     constraints=None, rigidWater=False)
    water = next(modeller.topology.residues())
    qmmm = openmmdft.createQMMMSystem(modeller.topology, system, water.atoms(), basisSet="6-31G*", grid=(50, 194),
                                      scfConvergence=1e-8, useEmbeddingSwitchingFunction=True,
                                      embeddingSwitchingDistance=0.8 * NM)
    force = next(f for f in qmmm.getForces() if isinstance(f, openmmdft.QMMMForce))
    integrator = mm.VerletIntegrator(0.0005)
    context = mm.Context(qmmm, integrator, mm.Platform.getPlatformByName("CPU"))
    context.setPositions(modeller.positions)
    context.setVelocitiesToTemperature(300, 1)
    integrator.step(2)
    start = time.perf_counter()
    integrator.step(steps)
    seconds = (time.perf_counter() - start) / steps
    results = force.getQMResults(context)
    ewald = results["timings"].get("gradient.ewald", 0 * unit.second).value_in_unit(unit.second)
    return modeller.topology.getNumAtoms(), seconds, ewald, results["numMMCharges"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boxes", default="3.0,4.5")
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    print("machine: %s, %d threads, %s" % (pyplatform.processor() or pyplatform.machine(), os.cpu_count(),
                                          time.strftime("%Y-%m-%d")))
    print("| box (nm) | atoms | explicit MM charges | cutoff only: s per step | Ewald: s per step | Ewald / cutoff | "
          "Ewald gradient s |")
    print("|---|---|---|---|---|---|---|")
    for size in [float(b) for b in args.boxes.split(",")]:
        atoms, cutoffTime, _, charges = stepTime(size, app.CutoffPeriodic, args.steps)
        _, ewaldTime, ewaldGradient, _ = stepTime(size, app.PME, args.steps)
        print("| %.1f | %d | %d | %.3f | %.3f | %.2f | %.3f |" % (size, atoms, charges, cutoffTime, ewaldTime,
                                                                ewaldTime / cutoffTime, ewaldGradient), flush=True)


if __name__ == "__main__":
    main()
