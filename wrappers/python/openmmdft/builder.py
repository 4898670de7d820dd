"""createQMMMSystem: a QM/MM System from an ordinary OpenMM System and the atoms of its QM region."""

import logging
import operator
import warnings

import openmm as mm
import openmm.app as app
import openmm.unit as unit

from .core import QMMMForce
from .mm import replaceCoulomb

# Bonded Forces whose terms are rebuilt without those inside the QM region, with the noun of their terms
# (getNumBonds, addAngle, getPerTorsionParameterName, ...).
_BONDED = {mm.HarmonicBondForce: "Bond", mm.HarmonicAngleForce: "Angle", mm.PeriodicTorsionForce: "Torsion",
           mm.RBTorsionForce: "Torsion", mm.CMAPTorsionForce: "Torsion", mm.CustomBondForce: "Bond",
           mm.CustomAngleForce: "Angle", mm.CustomTorsionForce: "Torsion"}
_PARTICLES = {"Bond": 2, "Angle": 3, "Torsion": 4}


def _qmIndices(qmAtoms, numParticles):
    indices = []
    for atom in qmAtoms:
        try:
            index = atom.index if isinstance(atom, app.topology.Atom) else operator.index(atom)
        except TypeError:
            raise TypeError("createQMMMSystem: qmAtoms must hold atom indices or app.Atom objects, not %r" % (atom,)) from None
        if index < 0 or index >= numParticles:
            raise ValueError("createQMMMSystem: QM atom index %d is out of range [0, %d)" % (index, numParticles))
        indices.append(index)
    if not indices:
        raise ValueError("createQMMMSystem: qmAtoms is empty")
    if len(set(indices)) != len(indices):
        raise ValueError("createQMMMSystem: qmAtoms lists an atom twice")
    return sorted(indices)


def _terms(force, noun):
    """(particles, the rest of the term's arguments) of every term of a bonded Force, in order."""
    get = getattr(force, "get%sParameters" % noun)
    for i in range(getattr(force, "getNum%ss" % noun)()):
        values = get(i)
        if isinstance(force, mm.CMAPTorsionForce):  # (map, a1, a2, a3, a4, b1, b2, b3, b4)
            yield tuple(values[1:]), (values[0],)
        else:
            yield tuple(values[:_PARTICLES[noun]]), tuple(values[_PARTICLES[noun]:])


def _withoutQMTerms(force, qm):
    """A copy of a bonded Force without the terms whose atoms are all QM atoms (None: nothing to remove)."""
    noun = _BONDED[type(force)]
    terms = list(_terms(force, noun))
    keep = [(p, rest) for p, rest in terms if not all(i in qm for i in p)]
    if len(keep) == len(terms):
        return None
    custom = hasattr(force, "getEnergyFunction")
    rebuilt = type(force)(force.getEnergyFunction()) if custom else type(force)()
    if isinstance(force, mm.CMAPTorsionForce):
        for m in range(force.getNumMaps()):
            rebuilt.addMap(*force.getMapParameters(m))
    if custom:
        for g in range(force.getNumGlobalParameters()):
            rebuilt.addGlobalParameter(force.getGlobalParameterName(g), force.getGlobalParameterDefaultValue(g))
        for p in range(getattr(force, "getNumPer%sParameters" % noun)()):
            getattr(rebuilt, "addPer%sParameter" % noun)(getattr(force, "getPer%sParameterName" % noun)(p))
        for d in range(force.getNumEnergyParameterDerivatives()):
            rebuilt.addEnergyParameterDerivative(force.getEnergyParameterDerivativeName(d))
    add = getattr(rebuilt, "add" + noun)
    for particles, rest in keep:
        if isinstance(force, mm.CMAPTorsionForce):
            add(rest[0], *particles)
        elif custom:
            add(*particles, list(rest[0]))
        else:
            add(*particles, *rest)
    rebuilt.setForceGroup(force.getForceGroup())
    rebuilt.setName(force.getName())
    rebuilt.setUsesPeriodicBoundaryConditions(force.usesPeriodicBoundaryConditions())
    return rebuilt


_log = logging.getLogger("openmmdft")


def _checkCutBonds(topology, qm):
    """Each bond across the boundary gets a link atom; its MM atom (M1) needs one QM neighbour and an MM neighbour
    that is not itself an M1, for its boundary charge (QMMMForce refuses the rest too, but only at Context creation)."""
    cut = [(a, b) if a.index in qm else (b, a) for a, b in topology.bonds() if (a.index in qm) != (b.index in qm)]
    m1s = {outside.index for _, outside in cut}
    qmNeighbours, mmNeighbours = {}, {}
    for a, b in topology.bonds():
        for x, y in ((a, b), (b, a)):
            if x.index in m1s:
                if y.index in qm:
                    qmNeighbours[x.index] = qmNeighbours.get(x.index, 0) + 1
                elif y.index not in m1s:
                    mmNeighbours[x.index] = mmNeighbours.get(x.index, 0) + 1
    for inside, outside in cut:
        where = "the bond between QM atom %d (%s %s) and MM atom %d (%s %s) crosses the QM/MM boundary" % (
            inside.index, inside.residue.name, inside.name, outside.index, outside.residue.name, outside.name)
        if inside.element is not None and inside.element.atomic_number == 1:
            raise ValueError("createQMMMSystem: %s, but a link atom caps a bond from a heavy QM atom: put the MM atom "
                             "into the QM region too, or leave the hydrogen out of it" % where)
        if mmNeighbours.get(outside.index, 0) == 0:
            raise ValueError("createQMMMSystem: %s, but the MM atom has no other MM neighbour to take its boundary "
                             "charge: put it into the QM region" % where)
        if qmNeighbours[outside.index] > 1:
            raise ValueError("createQMMMSystem: %s, and the MM atom is bonded to %d QM atoms: put it into the QM region "
                             "or cut elsewhere" % (where, qmNeighbours[outside.index]))


def createQMMMSystem(topology, system, qmAtoms, qmCharge=0, basisSet="6-31G*", removeConstraints=True, **settings):
    """A new System (``system`` is not changed) in which the atoms ``qmAtoms`` (indices or ``app.Atom`` objects
    of ``topology``) are the QM region of a QMMMForce:

    - the QMMMForce carries every charge and the bonds of ``topology`` (as ``replaceCoulomb``: virtual sites tied to
      their parent atoms, the exclusions checked against the NonbondedForce's), and the QM atoms with their elements
      from ``topology``, the total charge ``qmCharge`` and ``basisSet``;
    - virtual sites placed from QM atoms only (the M site of a QM TIP4P water) go with the QM region: their charges
      leave the embedding and their Lennard-Jones with the QM atoms is removed;
    - the NonbondedForce keeps Lennard-Jones between MM atoms and between QM and MM atoms; between QM atoms
      it is removed;
    - bonds, angles, torsions and CMAP terms (standard and Custom{Bond,Angle,Torsion}Force) whose atoms are
      all QM are removed, terms that touch an MM atom are kept;
    - constraints between QM atoms are removed when ``removeConstraints`` (the QM forces move those atoms);
    - the Forces keep their force groups;
    - a covalent bond between a QM atom and an MM atom is capped by a hydrogen link atom (QMMMForce.getNumLinkAtoms,
      getLinkAtomParameters; boundary charges by QMMMForce.setBoundaryChargeScheme): the QM region may cut through a
      molecule, e.g. a residue's side chain at its CA-CB bond. The link atoms made are logged (logger "openmmdft",
      level INFO).

    ``settings`` are QMMMForce settings by name, matched to the setters without regard to case:
    ``grid=(50, 194)`` calls ``setGrid(50, 194)``, ``scfConvergence=1e-8`` calls ``setSCFConvergence(1e-8)``.

    With PME, Ewald or LJPME the NonbondedForce keeps the MM-MM Coulomb terms (OpenMM's PME), the QM atoms'
    charges there become zero, and the QMMMForce (method Ewald) embeds the QM region in the explicit charges
    within the cutoff plus the Ewald remainder (docs/QMMM-MD.md).

    Raises ValueError for a cut bond whose MM atom has no other MM neighbour (put it into the QM region: e.g. a
    hydrogen left out) or more than one QM neighbour, or whose QM atom is a hydrogen, and for QM atoms that are
    virtual sites. Warns (UserWarning) when ``qmCharge`` differs by 0.5 e or more from the QM atoms' force-field
    charges. A CustomNonbondedForce (CHARMM36's Lennard-Jones) gets the QM pairs as exclusions, as the
    NonbondedForce does.
    """
    if topology.getNumAtoms() != system.getNumParticles():
        raise ValueError("createQMMMSystem: the Topology has %d atoms but the System %d particles"
                         % (topology.getNumAtoms(), system.getNumParticles()))
    qm = set(_qmIndices(qmAtoms, system.getNumParticles()))
    atoms = list(topology.atoms())
    _checkCutBonds(topology, qm)
    for i in sorted(qm):
        if system.isVirtualSite(i):
            raise ValueError("createQMMMSystem: QM atom %d is a virtual site" % i)
        if atoms[i].element is None:
            raise ValueError("createQMMMSystem: QM atom %d (%s) has no element in the Topology" % (i, atoms[i].name))
    if any(isinstance(f, QMMMForce) for f in system.getForces()):
        raise ValueError("createQMMMSystem: the System already has a QMMMForce; pass the System as the force field made "
                         "it (with its Coulomb interactions in the NonbondedForce)")
    nonbonded = [f for f in system.getForces() if isinstance(f, mm.NonbondedForce)]
    if len(nonbonded) != 1:
        raise ValueError("createQMMMSystem needs exactly one NonbondedForce in the System, found %d" % len(nonbonded))
    copy = mm.XmlSerializer.clone(system)
    # Bonded terms inside the QM region go; each Force is replaced where it was, so indices and groups stay.
    for index in range(copy.getNumForces()):
        force = copy.getForce(index)
        if type(force) in _BONDED:
            rebuilt = _withoutQMTerms(force, qm)
            if rebuilt is not None:
                # System has no replaceForce: remove everything from this index on and add it back.
                tail = [mm.XmlSerializer.clone(copy.getForce(i)) for i in range(index + 1, copy.getNumForces())]
                for _ in range(copy.getNumForces() - index):
                    copy.removeForce(index)
                copy.addForce(rebuilt)
                for f in tail:
                    copy.addForce(f)
    if removeConstraints:
        for i in reversed(range(copy.getNumConstraints())):
            p1, p2, _ = copy.getConstraintParameters(i)
            if p1 in qm and p2 in qm:
                copy.removeConstraint(i)

    nb = [f for f in copy.getForces() if isinstance(f, mm.NonbondedForce)][0]
    # Virtual sites on QM atoms (a QM TIP4P water's M site) belong to the QM region: the QM density replaces their
    # charges. A site whose position mixes QM and MM atoms has no side to be on.
    qmSites = set()
    for i in range(copy.getNumParticles()):
        if copy.isVirtualSite(i):
            site = copy.getVirtualSite(i)
            parents = {site.getParticle(k) for k in range(site.getNumParticles())}
            if parents <= qm:
                qmSites.add(i)
            elif parents & qm:
                raise ValueError("createQMMMSystem: virtual site %d is placed from QM atoms %s and MM atoms %s; put all of "
                                 "them on one side" % (i, sorted(parents & qm), sorted(parents - qm)))
    force = replaceCoulomb(copy, topology, _qmSites=qmSites)
    force.setForceGroup(nb.getForceGroup())
    # Lennard-Jones between QM atoms (and their sites) is part of the QM energy: zero it (and any exception) for
    # every QM pair.
    qmAll = qm | qmSites
    qmList = sorted(qmAll)
    qmPairs = [(i, j) for k, i in enumerate(qmList) for j in qmList[k + 1:]]
    for i, j in qmPairs:
        nb.addException(i, j, 0.0, 1.0, 0.0, True)
    # Force fields that keep Lennard-Jones in a CustomNonbondedForce (CHARMM36's, with NBFIX) must leave the QM pairs
    # out there too; the exclusions then also stay those of the NonbondedForce, as OpenMM's CPU and GPU platforms require.
    for custom in copy.getForces():
        if isinstance(custom, mm.CustomNonbondedForce):
            excluded = {tuple(sorted(custom.getExclusionParticles(e))) for e in range(custom.getNumExclusions())}
            for pair in qmPairs:
                if pair not in excluded:
                    custom.addExclusion(*pair)
    if force.getNonbondedMethod() == QMMMForce.Ewald:
        # PME/Ewald: the NonbondedForce keeps the MM-MM Coulomb terms; the QM atoms' electrostatics are QMMMForce's.
        for i in qmList:
            _, sigma, epsilon = nb.getParticleParameters(i)
            nb.setParticleParameters(i, 0.0, sigma, epsilon)
        for e in range(nb.getNumExceptions()):
            p1, p2, _, sigma, epsilon = nb.getExceptionParameters(e)
            if p1 in qmAll or p2 in qmAll:
                nb.setExceptionParameters(e, p1, p2, 0.0, sigma, epsilon)
    for i in sorted(qm):
        force.addQMAtom(i, atoms[i].element.atomic_number)
    # A QM charge far from what the force field gives the QM atoms is most often a slip (the SCF of a region with the
    # wrong charge tends not to converge, and its error cannot say why): warn, since it may also be meant. A QM
    # water's virtual site counts with its water.
    fieldCharge = sum(nonbonded[0].getParticleParameters(i)[0].value_in_unit(unit.elementary_charge) for i in qmAll)
    if abs(fieldCharge - qmCharge) >= 0.5:
        warnings.warn("createQMMMSystem: the QM atoms carry %.2f e in the force field, but qmCharge is %d; check the "
                      "QM region's charge" % (fieldCharge, qmCharge), stacklevel=2)
    force.setQMCharge(qmCharge)
    force.setBasisSet(basisSet)
    for k in range(force.getNumLinkAtoms()):
        q1, m1, _ = force.getLinkAtomParameters(k)
        _log.info("createQMMMSystem: link atom %d caps the bond from QM atom %d (%s %s %s) to MM atom %d (%s %s %s)", k, q1,
                  atoms[q1].residue.name, atoms[q1].residue.id, atoms[q1].name, m1, atoms[m1].residue.name,
                  atoms[m1].residue.id, atoms[m1].name)
    # Setting names match the setters without regard to case: scfConvergence -> setSCFConvergence.
    setters = {attribute.lower(): attribute for attribute in dir(force) if attribute.startswith("set")}
    for name, value in settings.items():
        if ("set" + name).lower() not in setters:
            raise TypeError("createQMMMSystem: QMMMForce has no setting '%s' (no method set%s%s)"
                            % (name, name[:1].upper(), name[1:]))
        setter = getattr(force, setters[("set" + name).lower()])
        setter(*value) if isinstance(value, (tuple, list)) else setter(value)
    return copy
