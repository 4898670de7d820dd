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


def virtualSiteParent(system, particle):
    """The particle a virtual site sits on for the bond graph: the one with the largest weight in its position (the
    origin of an OutOfPlaneSite), e.g. the oxygen of a TIP4P water's M site."""
    site = system.getVirtualSite(particle)
    count = site.getNumParticles()
    if isinstance(site, (mm.TwoParticleAverageSite, mm.ThreeParticleAverageSite)):
        weights = [abs(site.getWeight(k)) for k in range(count)]
    elif isinstance(site, mm.LocalCoordinatesSite):
        weights = [abs(w) for w in site.getOriginWeights()]
    else:
        weights = [1.0] + [0.0] * (count - 1)
    return site.getParticle(max(range(count), key=lambda k: weights[k]))


def _bondGraph(system, topology, skipSites=()):
    """The Topology's bonds, and each virtual site (but those in skipSites) tied as a leaf to its parent: ForceField
    excludes a site together with its parent, which a bond to the parent reproduces for small molecules (TIP4P/5P)."""
    bonds = {(min(a.index, b.index), max(a.index, b.index)) for a, b in topology.bonds()}
    for i in range(system.getNumParticles()):
        if system.isVirtualSite(i) and i not in skipSites:
            parent = virtualSiteParent(system, i)
            bonds.add((min(i, parent), max(i, parent)))
    return sorted(bonds)


def _checkExceptionsMatchBonds(nonbonded, bonds, scale14, ignored=()):
    """Raise ValueError unless the bond graph's exclusions (0 below 3 bonds, scale14 at 3) reproduce the Coulomb part
    of every NonbondedForce exception, and every pair below 4 bonds apart has one: otherwise the QMMMForce would
    compute other electrostatics than the force field (pairs with a particle in ``ignored`` are not checked)."""
    n = nonbonded.getNumParticles()
    neighbours = [set() for _ in range(n)]
    for a, b in bonds:
        neighbours[a].add(b)
        neighbours[b].add(a)
    distance = {}  # (i, j), i < j: bonds apart, up to 3
    for i in range(n):
        if i in ignored:
            continue
        frontier, seen = {i}, {i}
        for d in (1, 2, 3):
            frontier = {k for f in frontier for k in neighbours[f]} - seen
            seen |= frontier
            for j in frontier:
                if j > i and j not in ignored:
                    distance[(i, j)] = d
    charge = [_bareCharge(nonbonded.getParticleParameters(i)[0]) for i in range(n)]
    problems, covered = [], set()
    for e in range(nonbonded.getNumExceptions()):
        p1, p2, chargeProd, _, _ = nonbonded.getExceptionParameters(e)
        pair = (min(p1, p2), max(p1, p2))
        if p1 in ignored or p2 in ignored:
            continue
        covered.add(pair)
        d = distance.get(pair, 4)
        expected = charge[p1] * charge[p2] * (0.0 if d < 3 else scale14 if d == 3 else 1.0)
        actual = chargeProd.value_in_unit(mm.unit.elementary_charge**2) if mm.unit.is_quantity(chargeProd) else chargeProd
        if not math.isclose(actual, expected, rel_tol=1e-5, abs_tol=1e-9):
            problems.append("particles %d-%d: exception charge product %g, the bond graph gives %g (%s)"
                            % (p1, p2, actual, expected, "%d bonds apart" % d if d < 4 else "not within 3 bonds"))
    for pair, d in distance.items():
        if pair not in covered and charge[pair[0]] * charge[pair[1]] != 0:
            problems.append("particles %d-%d: %d bonds apart but no exception (full Coulomb in the NonbondedForce)"
                            % (pair[0], pair[1], d))
    if problems:
        raise ValueError("the bonds of the Topology (with virtual sites tied to their parent atoms) do not reproduce the "
                         "NonbondedForce's Coulomb exclusions and 1-4 scaling, so a QMMMForce would compute other "
                         "electrostatics: " + "; ".join(problems[:5]) + ("; ... (%d in all)" % len(problems)
                                                                          if len(problems) > 5 else ""))


def replaceCoulomb(system, topology, coulomb14Scale=None, _qmSites=()):
    """Move the Coulomb interactions of ``system``'s NonbondedForce into a new QMMMForce.

    ``topology`` gives the bonds (``topology.bonds()``); each virtual site (e.g. the M site of a TIP4P water) is tied
    to its parent atom (``virtualSiteParent``) as a bond. ``coulomb14Scale`` defaults to the scale found in the
    NonbondedForce's exceptions. The exclusions and 1-4 scaling that these bonds give are checked against the
    NonbondedForce's exceptions (ValueError if they differ, e.g. a force field with several 1-4 scales). Returns the
    QMMMForce (already added to the System).

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
    # Virtual sites of a QM region (createQMMMSystem) carry no charge and no bond: the QM density replaces the
    # molecule's MM charges, and a bond to a QM atom would be a cut bond to cap.
    bonds = _bondGraph(system, topology, skipSites=_qmSites)
    _checkExceptionsMatchBonds(nonbonded, bonds, force.getCoulomb14Scale(), ignored=set(_qmSites))
    for i in range(nonbonded.getNumParticles()):
        charge, sigma, epsilon = nonbonded.getParticleParameters(i)
        force.addParticle(0.0 if i in _qmSites else charge)
        if not keepCoulomb:
            nonbonded.setParticleParameters(i, 0.0, sigma, epsilon)
    for a, b in bonds:
        force.addBond(a, b)
    for i in range(nonbonded.getNumExceptions() if not keepCoulomb else 0):
        p1, p2, chargeProd, sigma, epsilon = nonbonded.getExceptionParameters(i)
        nonbonded.setExceptionParameters(i, p1, p2, 0.0, sigma, epsilon)
    system.addForce(force)
    return force
