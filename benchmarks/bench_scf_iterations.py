"""SCF iterations and seconds per QM/MM MD step for the SCF's starting points, in one run on one machine.

(H2O)n as the QM region (SVWN5, DZVP, density fitting, grid (50, 194), SCF convergence 1e-8) inside a shell of rigid
MM TIP3P waters (bench_qm_platforms.buildSystem), velocity Verlet at 0.5 and 1 fs from the same velocities (300 K).
Variants:
  0 PreviousDensity: the last converged density, plain DIIS (the code path before density extrapolation);
  1 ASPC(3): Kolafa's extrapolation of the last 4 densities, plain DIIS;
  2 ASPC(3) + recycled DIIS: the same guess, and the DIIS subspace starts with the previous steps' pairs
    (QMMMForce.setRecycledSubspaceSize, default 96);
  3 ASPC(3) + recycled DIIS + Coulomb response: and after each DIIS step the orbitals are corrected for the Coulomb
    response (QMMMForce.setCoulombResponseSteps, default 2; the default settings);
  4 Polynomial(5) + recycled DIIS + Coulomb response: the polynomial through the last 6 densities
    (QMMMForce.PolynomialExtrapolation, --polynomial-order) instead of ASPC.
Variants 0-2 run without the Coulomb-response step.
Per variant: mean SCF iterations per MD step over the steps after the warm-up, seconds per step (energy + forces),
its ratio to PreviousDensity's (> 1: faster), and the largest difference of the potential energy from
PreviousDensity's along the same steps (the SCF converges either way, so it stays at the level the convergence
threshold allows).

    python benchmarks/bench_scf_iterations.py [--sizes 1,4,8] [--steps 20] [--warmup 8] [--timesteps 0.5,1.0]
                                              [--platform CPU] [--mm-waters 30] [--markdown file]
                                              [--variants 0,1,2,3,4] [--recycled 96] [--order 3] [--basis DZVP]
                                              [--polynomial-order 5]
"""

import argparse
import datetime
import os
import platform as pyplatform
import time

import openmm as mm
import openmm.unit as unit

import openmmdft
from bench_qm_platforms import buildSystem

# (name, density extrapolation, whether the DIIS subspace is recycled: --recycled pairs, Coulomb-response steps)
VARIANTS = [
    ("PreviousDensity", openmmdft.QMMMForce.PreviousDensity, False, 0),
    ("ASPC(3)", openmmdft.QMMMForce.ASPC, False, 0),
    ("ASPC(3) + recycled DIIS", openmmdft.QMMMForce.ASPC, True, 0),
    ("ASPC(3) + recycled DIIS + Coulomb response", openmmdft.QMMMForce.ASPC, True, 2),
    ("Polynomial(5) + recycled DIIS + Coulomb response", openmmdft.QMMMForce.PolynomialExtrapolation, True, 2),
]


def run(n, mmWaters, timestep, method, recycled, response, platformName, warmup, steps, order=3, basis="DZVP"):
    system, force, positions = buildSystem(n, mmWaters, basis)
    force.setDensityExtrapolation(method, order)
    force.setRecycledSubspaceSize(recycled)
    force.setCoulombResponseSteps(response)
    integrator = mm.VerletIntegrator(timestep * unit.femtoseconds)
    context = mm.Context(system, integrator, mm.Platform.getPlatformByName(platformName))
    context.setPositions(positions)
    context.setVelocitiesToTemperature(300, 1)
    integrator.step(warmup)
    iterations, energies, elapsed = [], [], 0.0
    for _ in range(steps):
        # The step moves the atoms; getState evaluates energy and forces there, which the next step reuses: one QM
        # evaluation per step, timed together.
        start = time.perf_counter()
        integrator.step(1)
        energy = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
        elapsed += time.perf_counter() - start
        iterations.append(force.getQMResults(context)["scfIterations"])
        energies.append(energy)
    return sum(iterations) / len(iterations), max(iterations), elapsed / steps, energies


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,4,8")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=8)
    parser.add_argument("--timesteps", default="0.5,1.0")
    parser.add_argument("--platform", default="CPU")
    parser.add_argument("--mm-waters", type=int, default=30)
    parser.add_argument("--markdown")
    parser.add_argument("--variants", default=",".join(str(i) for i in range(len(VARIANTS))),
                        help="which variants to run, by index (the first one present is the reference)")
    parser.add_argument("--recycled", type=int, default=96, help="pairs for the recycled-DIIS variant")
    parser.add_argument("--order", type=int, default=3, help="ASPC order of the ASPC variants")
    parser.add_argument("--polynomial-order", type=int, default=5, help="order of the PolynomialExtrapolation variant")
    parser.add_argument("--basis", default="DZVP", help="orbital basis of the QM waters (the issue's first runs: 6-31G*)")
    args = parser.parse_args()
    header = ("| QM waters | dt (fs) | start | SCF iterations per step (mean, max) | s per step | "
              "speed-up vs PreviousDensity | largest energy difference from PreviousDensity (kJ/mol) |")
    lines = [header, "|---|---|---|---|---|---|---|"]
    print("bench_scf_iterations: %s, %s, %d cores, platform %s, %s, %d MM waters, %d warm-up + %d timed steps, %s" %
          (pyplatform.node(), pyplatform.processor() or pyplatform.machine(), os.cpu_count(), args.platform,
           args.basis, args.mm_waters, args.warmup, args.steps, datetime.date.today()))
    print(header)
    print(lines[1])
    for n in [int(x) for x in args.sizes.split(",")]:
        for dt in [float(x) for x in args.timesteps.split(",")]:
            reference = None
            for index in [int(x) for x in args.variants.split(",")]:
                name, method, recycling, response = VARIANTS[index]
                recycled = args.recycled if recycling else 0
                if recycling:
                    name += " (%d)" % recycled
                order = args.polynomial_order if method == openmmdft.QMMMForce.PolynomialExtrapolation else args.order
                name = name.replace("ASPC(3)", "ASPC(%d)" % order).replace("Polynomial(5)", "Polynomial(%d)" % order)
                mean, most, seconds, energies = run(n, args.mm_waters, dt, method, recycled, response, args.platform,
                                                    args.warmup, args.steps, order, args.basis)
                if reference is None:
                    reference = (seconds, energies)
                deviation = max(abs(a - b) for a, b in zip(energies, reference[1]))
                line = "| %d | %.2g | %s | %.2f, %d | %.3f | %.2f | %.1e |" % (n, dt, name, mean, most, seconds,
                                                                          reference[0] / seconds, deviation)
                lines.append(line)
                print(line, flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
