"""Moving the Coulomb part of a NonbondedForce into a QMMMForce.

A System made by ``ForceField.createSystem`` holds charges in a NonbondedForce whose
exceptions come from the bonds. ``replaceCoulomb`` builds the equivalent QMMMForce
from the same charges and bonds, and zeroes the charges (and exception charge
products) of the NonbondedForce, which keeps Lennard-Jones. The total energy is
unchanged; the tests check that. With PME or Ewald the NonbondedForce keeps its Coulomb
terms (OpenMM's own PME), and the QMMMForce (method Ewald) holds the charges and bonds
for a QM region's embedding only.
"""

import math

import openmm as mm

from .core import QMMMForce

_METHODS = {
    mm.NonbondedForce.NoCutoff: QMMMForce.NoCutoff,
    mm.NonbondedForce.CutoffNonPeriodic: QMMMForce.CutoffNonPeriodic,
    mm.NonbondedForce.CutoffPeriodic: QMMMForce.CutoffPeriodic,
    mm.NonbondedForce.Ewald: QMMMForce.Ewald,
    mm.NonbondedForce.PME: QMMMForce.Ewald,
    mm.NonbondedForce.LJPME: QMMMForce.Ewald,
}


def _bareCharge(value):
    return value.value_in_unit(mm.unit.elementary_charge) if mm.unit.is_quantity(value) else value


def coulomb14ScaleOf(nonbonded):
    """The 1-4 Coulomb scale of a NonbondedForce, read from its exceptions (chargeProd / q1 q2).

    Raises ValueError when the exceptions do not share one scale."""
    scales = []
    for i in range(nonbonded.getNumExceptions()):
        p1, p2, chargeProd, _, _ = nonbonded.getExceptionParameters(i)
        qq = _bareCharge(nonbonded.getParticleParameters(p1)[0]) * _bareCharge(nonbonded.getParticleParameters(p2)[0])
        chargeProd = chargeProd.value_in_unit(mm.unit.elementary_charge**2)
        if chargeProd != 0 and abs(qq) > 1e-12:
            scales.append(chargeProd / qq)
    if not scales:
        return 0.5
    scale = sum(scales) / len(scales)
    if any(not math.isclose(s, scale, rel_tol=1e-4, abs_tol=1e-6) for s in scales):
        raise ValueError("the NonbondedForce's 1-4 exceptions do not share one Coulomb scale")
    return scale


def replaceCoulomb(system, topology, coulomb14Scale=None):
    """Move the Coulomb interactions of ``system``'s NonbondedForce into a new QMMMForce.

    ``topology`` gives the bonds (``topology.bonds()``); ``coulomb14Scale`` defaults to the
    scale found in the NonbondedForce's exceptions. Returns the QMMMForce (already added
    to the System).

    With NoCutoff, CutoffNonPeriodic and CutoffPeriodic the Coulomb terms move: the QMMMForce computes
    them (reaction field with a cutoff) and the NonbondedForce's charges become zero. With PME, Ewald
    and LJPME they stay in the NonbondedForce (OpenMM's PME on every platform), and the QMMMForce gets
    method Ewald, the charges, bonds, cutoff and Ewald tolerance, for the embedding of a QM region; QM
    atoms added later must then have their NonbondedForce charges (and exception charge products)
    set to zero, as createQMMMSystem does.
    """
    nonbonded = [f for f in system.getForces() if isinstance(f, mm.NonbondedForce)]
    if len(nonbonded) != 1:
        raise ValueError("replaceCoulomb needs exactly one NonbondedForce in the System, found %d" % len(nonbonded))
    nonbonded = nonbonded[0]
    method = nonbonded.getNonbondedMethod()
    if method not in _METHODS:
        raise ValueError("replaceCoulomb: the NonbondedForce uses unknown method %d" % method)
    force = QMMMForce()
    force.setNonbondedMethod(_METHODS[method])
    force.setCutoffDistance(nonbonded.getCutoffDistance())
    keepCoulomb = _METHODS[method] == QMMMForce.Ewald
    if keepCoulomb:
        force.setEwaldErrorTolerance(nonbonded.getEwaldErrorTolerance())
    force.setReactionFieldDielectric(nonbonded.getReactionFieldDielectric())
    force.setCoulomb14Scale(coulomb14ScaleOf(nonbonded) if coulomb14Scale is None else coulomb14Scale)
    for i in range(nonbonded.getNumParticles()):
        charge, sigma, epsilon = nonbonded.getParticleParameters(i)
        force.addParticle(charge)
        if not keepCoulomb:
            nonbonded.setParticleParameters(i, 0.0, sigma, epsilon)
    for bond in topology.bonds():
        force.addBond(bond[0].index, bond[1].index)
    for i in range(nonbonded.getNumExceptions() if not keepCoulomb else 0):
        p1, p2, chargeProd, sigma, epsilon = nonbonded.getExceptionParameters(i)
        nonbonded.setExceptionParameters(i, p1, p2, 0.0, sigma, epsilon)
    system.addForce(force)
    return force
