"""The NonbondedForce that QMMMForce's Ewald method leaves the MM-MM Coulomb terms to, for tests that build their
Systems by hand (openmmdft.createQMMMSystem makes it for users): PME with the QMMMForce's cutoff, tolerance and MM
charges (the QM atoms' are zero), and the exceptions of its bond graph (1-2 and 1-3 excluded, 1-4 scaled)."""
import openmm as mm


def addPMENonbondedForce(system, force):
    nonbonded = mm.NonbondedForce()
    nonbonded.setNonbondedMethod(mm.NonbondedForce.PME)
    nonbonded.setCutoffDistance(force.getCutoffDistance())
    nonbonded.setEwaldErrorTolerance(force.getEwaldErrorTolerance())
    qm = {force.getQMAtomParameters(i)[0] for i in range(force.getNumQMAtoms())}
    for p in range(force.getNumParticles()):
        nonbonded.addParticle(0.0 if p in qm else force.getParticleParameters(p), 0.1, 0.0)
    bonds = [force.getBondParameters(b) for b in range(force.getNumBonds())]
    nonbonded.createExceptionsFromBonds(bonds, force.getCoulomb14Scale(), 0.5)
    system.addForce(nonbonded)
    return nonbonded
