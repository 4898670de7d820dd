"""QM/MM MD of a protein side chain in water: the serine of villin (OpenMM's own openmm/app/data/test.pdb, the
villin headpiece in a box of TIP3P water with chloride ions, Amber14) becomes a Kohn-Sham LDA region (SVWN5,
6-31G*, density fitting) cut from the backbone at its CA-CB bond, where a hydrogen link atom caps it
(openmmdft.createQMMMSystem makes the link atom; boundary charges by RCD, docs/QMMM-MD.md).

The box is periodic with PME for the MM-MM Coulomb terms (OpenMM's own); the QM region meets the explicit MM charges
of the molecules within 1 nm (switched off smoothly from 0.8 nm) and the periodic rest of them through QM/MM-Ewald
(QMMMForce method Ewald, which createQMMMSystem chooses for a PME System). The run: MM minimization, then Langevin dynamics at 300 K with 1 fs steps (X-H bonds
constrained, in the QM side chain too), recorded by openmmdft.QMMMReporter into side_chain.csv and plotted.

    python examples/protein_side_chain.py [--steps N] [--output-dir DIR]
"""

import argparse
import logging
import os
import sys
import time

import openmm as mm
import openmm.app as app
import openmm.unit as unit

import openmmdft


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--output-dir", default="side-chain-demo")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    pdb = app.PDBFile(os.path.join(os.path.dirname(app.__file__), "data", "test.pdb"))
    forcefield = app.ForceField("amber14-all.xml", "amber14/tip3p.xml")
    system = forcefield.createSystem(pdb.topology, nonbondedMethod=app.PME, nonbondedCutoff=1.0 * unit.nanometer,
                                     constraints=app.HBonds)
    serine = next(r for r in pdb.topology.residues() if r.name == "SER")
    sideChain = [a for a in serine.atoms() if a.name in ("CB", "HB2", "HB3", "OG", "HG")]
    print("villin in water: %d atoms; QM region: %s %s side chain %s" % (system.getNumParticles(), serine.name, serine.id,
                                                                         [a.name for a in sideChain]))
    qmmm = openmmdft.createQMMMSystem(pdb.topology, system, sideChain, basisSet="6-31G*", removeConstraints=False,
                                      grid=(50, 194), useEmbeddingSwitchingFunction=True,
                                      embeddingSwitchingDistance=0.8 * unit.nanometer)
    force = next(f for f in qmmm.getForces() if isinstance(f, openmmdft.QMMMForce))
    for k in range(force.getNumLinkAtoms()):
        q1, m1, length = force.getLinkAtomParameters(k)
        print("link atom %d: H on the bond from QM atom %d to MM atom %d, %s from the QM atom" % (k, q1, m1, length))

    platform = mm.Platform.getPlatformByName("CPU")
    minimizer = app.Simulation(pdb.topology, system, mm.VerletIntegrator(0.001), platform)
    minimizer.context.setPositions(pdb.positions)
    minimizer.minimizeEnergy(maxIterations=100)

    simulation = app.Simulation(pdb.topology, qmmm, mm.LangevinMiddleIntegrator(300 * unit.kelvin, 1 / unit.picosecond,
                                                                                 0.001 * unit.picoseconds), platform)
    simulation.context.setState(minimizer.context.getState(getPositions=True))
    simulation.context.setVelocitiesToTemperature(300 * unit.kelvin, 1)
    os.makedirs(args.output_dir, exist_ok=True)
    csvPath = os.path.join(args.output_dir, "side_chain.csv")
    reporter = openmmdft.QMMMReporter(csvPath, max(1, args.steps // 20))
    simulation.reporters.append(reporter)
    simulation.reporters.append(app.StateDataReporter(sys.stdout, max(1, args.steps // 5), step=True,
                                                      potentialEnergy=True, temperature=True))
    start = time.time()
    simulation.step(args.steps)
    print("%d QM/MM steps in %.1f s" % (args.steps, time.time() - start))
    del simulation.reporters[:]
    del reporter
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plot_qmmm
    png = os.path.join(args.output_dir, "side_chain.png")
    plot_qmmm.plot(plot_qmmm.readColumns(csvPath), png)
    results = force.getQMResults(simulation.context)
    print("last step: QM energy %s (of which the Ewald remainder %s), %d SCF iterations, %d explicit MM charges in the QM "
          "Hamiltonian; wrote %s and %s" % (results["totalEnergy"], results["longRangeEnergy"], results["scfIterations"],
                                            results["numMMCharges"], csvPath, png))
    return 0


if __name__ == "__main__":
    sys.exit(main())
