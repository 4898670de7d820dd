"""openmmdft.createQMMMSystem against a System built by hand for the same QM/MM model (same energy and forces
on the CPU platform, to 1e-6 kJ/mol and 1e-5 kJ/mol/nm: the same arithmetic), and its refusals.

The test System: a methanol (the QM region) and two waters, with Coulomb and Lennard-Jones in a
NonbondedForce, harmonic bonds and angles, periodic torsions, a CMAP term and a CustomBondForce term, and RB,
custom angle and custom torsion terms, so every kind of bonded Force the builder edits is present with terms
inside and outside the QM region."""

import numpy as np
import openmm as mm
import openmm.app as app
import openmm.unit as unit
import pytest

import openmmdft

KJ = unit.kilojoule_per_mole
METHANOL = [("C", 6, (-0.0047, 0.0663, 0.0), 0.12), ("O", 8, (-0.0047, -0.0758, 0.0), -0.6),
            ("H1", 1, (-0.1035, 0.1086, 0.0), 0.03), ("H2", 1, (0.0504, 0.1004, 0.089), 0.03),
            ("H3", 1, (0.0504, 0.1004, -0.089), 0.03), ("HO", 1, (0.088, -0.1013, 0.0), 0.39)]
WATER = [("O", 8, (0.0, 0.0, 0.0), -0.834), ("H1", 1, (0.0757, 0.0586, 0.0), 0.417), ("H2", 1, (-0.0757, 0.0586, 0.0), 0.417)]


def buildSystem(method=mm.NonbondedForce.NoCutoff, qmModel=False):
    """The MM System; with qmModel, the QM/MM System the builder should make from it for QM = the methanol,
    built directly: no terms or constraints inside the methanol, Coulomb in a QMMMForce with the methanol
    as its QM region, no Lennard-Jones between methanol atoms."""
    topology = app.Topology()
    chain = topology.addChain()
    positions, charges, atoms = [], [], []
    for name, molecule, offset in [("MOH", METHANOL, (0, 0, 0)), ("HOH", WATER, (0.35, 0, 0)), ("HOH", WATER, (-0.2, 0.32, 0.1))]:
        residue = topology.addResidue(name, chain)
        first = len(atoms)
        for atomName, z, xyz, q in molecule:
            atoms.append(topology.addAtom(atomName, app.Element.getByAtomicNumber(z), residue))
            positions.append(np.array(xyz) + np.array(offset))
            charges.append(q)
        bonds = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 5)] if name == "MOH" else [(0, 1), (0, 2)]
        for a, b in bonds:
            topology.addBond(atoms[first + a], atoms[first + b])
    qm = set(range(6)) if qmModel else set()
    keep = lambda *particles: not all(p in qm for p in particles)
    system = mm.System()
    for atom in atoms:
        system.addParticle(atom.element.mass)
    nonbonded = mm.NonbondedForce()
    nonbonded.setNonbondedMethod(method)
    for q, atom in zip(charges, atoms):
        heavy = atom.element.atomic_number > 1
        nonbonded.addParticle(0.0 if qmModel else q, 0.3 if heavy else 0.1, 0.5 if heavy else 0.05)
    nonbonded.createExceptionsFromBonds([(a.index, b.index) for a, b in topology.bonds()], 0.8333, 0.5)
    if qmModel:
        for i in range(nonbonded.getNumExceptions()):
            a, b, _, sigma, epsilon = nonbonded.getExceptionParameters(i)
            nonbonded.setExceptionParameters(i, a, b, 0.0, sigma, epsilon)
        for i in range(6):
            for j in range(i + 1, 6):
                nonbonded.addException(i, j, 0.0, 1.0, 0.0, True)
    nonbonded.setForceGroup(2)
    bondsForce, anglesForce, torsions = mm.HarmonicBondForce(), mm.HarmonicAngleForce(), mm.PeriodicTorsionForce()
    for a, b in topology.bonds():
        if keep(a.index, b.index):
            bondsForce.addBond(a.index, b.index, 0.1, 2e5)
    for a, b, c, theta, k in [(2, 0, 1, 1.9, 300.0), (0, 1, 5, 1.9, 300.0), (7, 6, 8, 1.82, 600.0)]:
        if keep(a, b, c):
            anglesForce.addAngle(a, b, c, theta, k)
    for a, b, c, d in [(2, 0, 1, 5), (3, 0, 1, 5)]:
        if keep(a, b, c, d):
            torsions.addTorsion(a, b, c, d, 3, 0.0, 1.0)
    cmap = mm.CMAPTorsionForce()
    cmap.addMap(4, list(np.linspace(0, 3, 16)))
    if keep(2, 0, 1, 5, 3, 0, 1, 5):
        cmap.addTorsion(0, 2, 0, 1, 5, 3, 0, 1, 5)
    custom = mm.CustomBondForce("k*(r-r0)^2")
    custom.addGlobalParameter("k", 100.0)
    custom.addPerBondParameter("r0")
    for a, b, r0 in [(0, 5, 0.19), (1, 6, 0.3)]:  # inside the QM region, and QM-MM
        if keep(a, b):
            custom.addBond(a, b, [r0])
    rb = mm.RBTorsionForce()
    if keep(2, 0, 1, 5):
        rb.addTorsion(2, 0, 1, 5, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0)
    customAngle = mm.CustomAngleForce("ka*(theta-t0)^2")
    customAngle.addGlobalParameter("ka", 50.0)
    customAngle.addPerAngleParameter("t0")
    for a, b, c in [(3, 0, 1), (0, 1, 6)]:  # inside the QM region, and QM-QM-MM
        if keep(a, b, c):
            customAngle.addAngle(a, b, c, [1.9])
    customTorsion = mm.CustomTorsionForce("kt*(1+cos(theta))")
    customTorsion.addPerTorsionParameter("kt")
    if keep(4, 0, 1, 5):
        customTorsion.addTorsion(4, 0, 1, 5, [2.0])
    customTorsion.addTorsion(7, 6, 8, 1, [0.5])  # MM-MM-MM-QM: kept
    for group, force in enumerate([bondsForce, anglesForce, torsions, cmap, custom, rb, customAngle, customTorsion]):
        force.setForceGroup(3 + group)
        system.addForce(force)
    system.addForce(nonbonded)
    if keep(0, 2):
        system.addConstraint(0, 2, 0.109)
    system.addConstraint(6, 7, 0.09572)
    if qmModel:
        force = openmmdft.QMMMForce()
        for q in charges:
            force.addParticle(q)
        for a, b in topology.bonds():
            force.addBond(a.index, b.index)
        force.setCoulomb14Scale(0.8333)
        force.setNonbondedMethod({mm.NonbondedForce.NoCutoff: openmmdft.QMMMForce.NoCutoff,
                                  mm.NonbondedForce.CutoffNonPeriodic: openmmdft.QMMMForce.CutoffNonPeriodic}[method])
        for i in range(6):
            force.addQMAtom(i, atoms[i].element.atomic_number)
        force.setBasisSet("6-31G*")
        applySettings(force)
        force.setForceGroup(2)
        system.addForce(force)
    return topology, system, np.array(positions)


SETTINGS = dict(grid=(30, 110), scfConvergence=1e-8)


def applySettings(force):
    force.setGrid(30, 110)
    force.setSCFConvergence(1e-8)


def energyAndForces(system, positions, platform="CPU"):
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName(platform))
    context.setPositions(positions)
    state = context.getState(getEnergy=True, getForces=True)
    return state.getPotentialEnergy().value_in_unit(KJ), state.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)


def test_matches_a_hand_built_system():
    topology, system, positions = buildSystem()
    before = mm.XmlSerializer.serialize(system)
    methanol = list(next(topology.residues()).atoms())
    built = openmmdft.createQMMMSystem(topology, system, methanol, basisSet="6-31G*", **SETTINGS)
    assert mm.XmlSerializer.serialize(system) == before  # the input is untouched
    _, expected, _ = buildSystem(qmModel=True)
    e1, f1 = energyAndForces(built, positions)
    e2, f2 = energyAndForces(expected, positions)
    print("QM/MM energy: builder %.8f, by hand %.8f kJ/mol" % (e1, e2))
    assert e1 == pytest.approx(e2, abs=1e-6)
    assert np.abs(f1 - f2).max() < 1e-5
    # Terms inside the QM region are gone, the others kept, and so are the force groups.
    count = lambda s, kind, getter: [getattr(f, getter)() for f in s.getForces() if type(f) is kind][0]
    assert count(built, mm.HarmonicBondForce, "getNumBonds") == 4      # 9 bonds, 5 in methanol
    assert count(built, mm.HarmonicAngleForce, "getNumAngles") == 1
    assert count(built, mm.PeriodicTorsionForce, "getNumTorsions") == 0
    assert count(built, mm.CMAPTorsionForce, "getNumTorsions") == 0
    assert count(built, mm.CustomBondForce, "getNumBonds") == 1
    assert count(built, mm.RBTorsionForce, "getNumTorsions") == 0
    assert count(built, mm.CustomAngleForce, "getNumAngles") == 1
    assert count(built, mm.CustomTorsionForce, "getNumTorsions") == 1
    assert built.getNumConstraints() == 1
    groups = sorted(f.getForceGroup() for f in built.getForces())
    assert groups == sorted(f.getForceGroup() for f in expected.getForces())
    qm = [f for f in built.getForces() if isinstance(f, openmmdft.QMMMForce)][0]
    assert [tuple(qm.getQMAtomParameters(i)) for i in range(qm.getNumQMAtoms())] == [(i, z) for i, z in enumerate((6, 8, 1, 1, 1, 1))]


def test_accepts_indices_and_refuses_bad_input():
    topology, system, positions = buildSystem()
    built = openmmdft.createQMMMSystem(topology, system, range(6), **SETTINGS)
    assert [f for f in built.getForces() if isinstance(f, openmmdft.QMMMForce)][0].getNumQMAtoms() == 6
    with pytest.raises(ValueError, match="crosses the QM/MM boundary, but the MM atom has no other MM neighbour"):
        openmmdft.createQMMMSystem(topology, system, [0, 1, 2, 3, 4])  # the hydroxyl H left out
    with pytest.raises(ValueError, match="out of range"):
        openmmdft.createQMMMSystem(topology, system, [0, 99])
    with pytest.raises(ValueError, match="twice"):
        openmmdft.createQMMMSystem(topology, system, [6, 7, 8, 6])
    with pytest.raises(TypeError, match="no setting 'gridd'"):
        openmmdft.createQMMMSystem(topology, system, range(6), gridd=(1, 2))
    with pytest.raises(TypeError, match="atom indices"):
        openmmdft.createQMMMSystem(topology, system, [0.5])
    with pytest.raises(ValueError, match="already has a QMMMForce"):
        openmmdft.createQMMMSystem(topology, built, range(6))
    with pytest.raises(ValueError, match="QM atom index -1 is out of range"):
        openmmdft.createQMMMSystem(topology, system, [-1])
    # A QM hydrogen whose heavy atom is MM: once a link atom of length 0 nm and an error about link bond lengths later.
    with pytest.raises(ValueError, match="link atom caps a bond from a heavy QM atom"):
        openmmdft.createQMMMSystem(topology, system, [5])
    # A QM charge unlike the force field's (methanol: 0 e) is most often a slip: a warning, not an error.
    with pytest.warns(UserWarning, match="QM atoms carry 0.00 e in the force field, but qmCharge is 2"):
        openmmdft.createQMMMSystem(topology, system, range(6), qmCharge=2)


def test_pme_system_keeps_its_coulomb_terms_and_zeroes_the_qm_charges():
    """With PME the NonbondedForce keeps the MM Coulomb terms (OpenMM's PME); the QM atoms' charges and their
    exceptions' charge products there become zero, and the QMMMForce (method Ewald) embeds the QM region."""
    topology, pme, _ = buildSystem(method=mm.NonbondedForce.PME)
    pme.setDefaultPeriodicBoxVectors(mm.Vec3(2.5, 0, 0), mm.Vec3(0, 2.5, 0), mm.Vec3(0, 0, 2.5))
    built = openmmdft.createQMMMSystem(topology, pme, range(6))
    qm = [f for f in built.getForces() if isinstance(f, openmmdft.QMMMForce)][0]
    nb = [f for f in built.getForces() if isinstance(f, mm.NonbondedForce)][0]
    original = [f for f in pme.getForces() if isinstance(f, mm.NonbondedForce)][0]
    assert qm.getNonbondedMethod() == openmmdft.QMMMForce.Ewald
    assert qm.getEwaldErrorTolerance() == original.getEwaldErrorTolerance()
    for i in range(nb.getNumParticles()):
        charge = nb.getParticleParameters(i)[0].value_in_unit(unit.elementary_charge)
        expected = 0.0 if i < 6 else original.getParticleParameters(i)[0].value_in_unit(unit.elementary_charge)
        assert charge == expected
        assert qm.getParticleParameters(i) == original.getParticleParameters(i)[0]
    for e in range(nb.getNumExceptions()):
        p1, p2, chargeProd, _, _ = nb.getExceptionParameters(e)
        if p1 < 6 or p2 < 6:
            assert chargeProd.value_in_unit(unit.elementary_charge**2) == 0


def test_qm_water_in_md():
    """A water of the test System as the QM region runs MD (constraints inside it removed)."""
    topology, system, positions = buildSystem()
    waters = [r for r in topology.residues() if r.name == "HOH"]
    built = openmmdft.createQMMMSystem(topology, system, waters[0].atoms(), **SETTINGS)
    assert built.getNumConstraints() == 1  # the MM methanol's; the QM water's one is gone
    integrator = mm.VerletIntegrator(0.0005)
    context = mm.Context(built, integrator, mm.Platform.getPlatformByName("CPU"))
    context.setPositions(positions)
    integrator.step(3)
    qm = [f for f in built.getForces() if isinstance(f, openmmdft.QMMMForce)][0]
    assert qm.getQMResults(context)["scfIterations"] > 0


def tip4pWaters(count=6):
    """The first `count` TIP4P-Ew waters of OpenMM's tip4pew.pdb (4 particles each, M a virtual site), no cutoff."""
    import os
    pdb = app.PDBFile(os.path.join(os.path.dirname(app.__file__), "data", "tip4pew.pdb"))
    modeller = app.Modeller(pdb.topology, pdb.positions)
    modeller.delete(list(modeller.topology.residues())[count:])
    system = app.ForceField("tip4pew.xml").createSystem(modeller.topology, nonbondedMethod=app.NoCutoff, rigidWater=False)
    return modeller.topology, system, modeller.positions


def test_four_site_water_keeps_its_electrostatics():
    # The M site of a TIP4P water is a virtual site without a bond in the Topology: tied to its oxygen in the bond graph,
    # replaceCoulomb gives the force field's energy (once -10342 kJ/mol off: M met its own O and H at 0.0125 nm).
    topology, system, positions = tip4pWaters()
    reference, _ = energyAndForces(system, positions, "Reference")  # double precision: the CPU platform's LJ is single
    replaced = mm.XmlSerializer.clone(system)
    force = openmmdft.replaceCoulomb(replaced, topology)
    e, _ = energyAndForces(replaced, positions, "Reference")
    assert e == pytest.approx(reference, abs=1e-6)
    assert force.getNumBonds() == 6 * 3  # O-H1, O-H2, and M tied to O


def openclContext(system):
    try:  # an OpenCL device at all (PoCL in CI)
        empty = mm.System()
        empty.addParticle(1.0)
        mm.Context(empty, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("OpenCL"))
    except Exception as e:
        pytest.skip("no OpenCL device: %s" % e)
    return mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("OpenCL"), {"Precision": "double"})


def test_four_site_qm_water_runs_on_the_gpu_platforms():
    # The QM water's M site has no bond in the QMMMForce (a bond to a QM atom would be a cut bond), while the
    # NonbondedForce excludes it from its water; the GPU platforms' tiles take one set of exclusions for every Force,
    # so the pairs with that uncharged site follow the NonbondedForce's. The Context was once refused there.
    topology, system, positions = tip4pWaters()
    water = [a for a in next(topology.residues()).atoms()]
    built = openmmdft.createQMMMSystem(topology, system, [a for a in water if a.element is not None], basisSet="STO-3G",
                                       grid=(30, 110), scfConvergence=1e-8)
    reference, referenceForces = energyAndForces(built, positions, "Reference")
    context = openclContext(built)
    context.setPositions(positions)
    state = context.getState(getEnergy=True, getForces=True)
    # OpenCL double against Reference: the tolerances of test_qm_gpu_platforms.py (the SCF converges to 1e-8).
    assert state.getPotentialEnergy().value_in_unit(KJ) == pytest.approx(reference, abs=2e-5)
    assert np.abs(state.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer) - referenceForces).max() < 5e-3


def test_four_site_qm_water_takes_its_virtual_site_along():
    # A QM TIP4P water's M site belongs to the QM region: its charge leaves the embedding (the QM density replaces
    # the water's charges). By hand: the same System with M's charge zero and the water's atoms QM.
    topology, system, positions = tip4pWaters()
    water = [a for a in next(topology.residues()).atoms()]
    qmAtoms = [a for a in water if a.element is not None]
    site = [a.index for a in water if a.element is None][0]
    built = openmmdft.createQMMMSystem(topology, system, qmAtoms, basisSet="STO-3G", grid=(30, 110), scfConvergence=1e-8)
    qm = [f for f in built.getForces() if isinstance(f, openmmdft.QMMMForce)][0]
    assert qm.getParticleParameters(site) == 0.0 * unit.elementary_charge and qm.getNumLinkAtoms() == 0
    context = mm.Context(built, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("CPU"))
    context.setPositions(positions)
    context.getState(getEnergy=True)
    assert qm.getQMResults(context)["numMMCharges"] == 5 * 3  # H, H and M of the other waters (TIP4P's O has none)
    # By hand: the Coulomb terms as a QMMMForce with the Topology's bonds and each MM water's M tied to its O.
    byHand = mm.XmlSerializer.clone(system)
    nonbonded = [f for f in byHand.getForces() if isinstance(f, mm.NonbondedForce)][0]
    handForce = openmmdft.QMMMForce()
    for i in range(nonbonded.getNumParticles()):
        charge, sigma, epsilon = nonbonded.getParticleParameters(i)
        handForce.addParticle(0.0 if i == site else charge)
        nonbonded.setParticleParameters(i, 0.0, sigma, epsilon)
    for e in range(nonbonded.getNumExceptions()):
        p1, p2, _, sigma, epsilon = nonbonded.getExceptionParameters(e)
        nonbonded.setExceptionParameters(e, p1, p2, 0.0, sigma, epsilon)
    for a, b in topology.bonds():
        handForce.addBond(a.index, b.index)
    for residue in list(topology.residues())[1:]:
        atoms = list(residue.atoms())
        handForce.addBond(atoms[0].index, [a.index for a in atoms if a.element is None][0])
    byHand.addForce(handForce)
    waterIndices = {a.index for a in water}
    for f in byHand.getForces():  # the QM water's own bonded terms are part of the QM energy
        if isinstance(f, mm.HarmonicBondForce):
            for k in range(f.getNumBonds()):
                p1, p2, length, _ = f.getBondParameters(k)
                if {p1, p2} <= waterIndices:
                    f.setBondParameters(k, p1, p2, length, 0.0)
        elif isinstance(f, mm.HarmonicAngleForce):
            for k in range(f.getNumAngles()):
                p1, p2, p3, angle, _ = f.getAngleParameters(k)
                if {p1, p2, p3} <= waterIndices:
                    f.setAngleParameters(k, p1, p2, p3, angle, 0.0)
    for atom in qmAtoms:
        handForce.addQMAtom(atom.index, atom.element.atomic_number)
    handForce.setBasisSet("STO-3G")
    handForce.setGrid(30, 110)
    handForce.setSCFConvergence(1e-8)
    for i in [a.index for a in water]:
        for j in [a.index for a in water]:
            if i < j:
                nonbonded.addException(i, j, 0.0, 1.0, 0.0, True)
    e1, f1 = energyAndForces(built, positions)
    e2, f2 = energyAndForces(byHand, positions)
    assert e1 == pytest.approx(e2, abs=1e-6)
    assert np.abs(f1 - f2).max() < 1e-5


def test_exclusions_the_bonds_do_not_give_are_refused():
    # A NonbondedForce whose exceptions differ from what the Topology's bonds give (here one 1-3 pair of a water
    # made a full interaction) would be computed differently by the QMMMForce: an error names the pair.
    topology, system, positions = tip4pWaters(2)
    nonbonded = [f for f in system.getForces() if isinstance(f, mm.NonbondedForce)][0]
    for e in range(nonbonded.getNumExceptions()):
        p1, p2, _, sigma, epsilon = nonbonded.getExceptionParameters(e)
        if {p1, p2} == {1, 2}:  # H1-H2 of the first water
            q1, q2 = nonbonded.getParticleParameters(1)[0], nonbonded.getParticleParameters(2)[0]
            nonbonded.setExceptionParameters(e, p1, p2, q1 * q2, sigma, epsilon)
    with pytest.raises(ValueError, match="particles 1-2: exception charge product .*2 bonds apart"):
        openmmdft.replaceCoulomb(mm.XmlSerializer.clone(system), topology)


def charmmWaters():
    """Three waters in CHARMM36, whose force field keeps Lennard-Jones in a CustomNonbondedForce (NBFIX)."""
    topology = app.Topology()
    chain = topology.addChain()
    positions = []
    for k, centre in enumerate([(0.0, 0.0, 0.0), (0.28, 0.0, 0.0), (0.0, 0.3, 0.1)]):
        residue = topology.addResidue("HOH", chain)
        atoms = [topology.addAtom(name, app.element.Element.getByAtomicNumber(z), residue) for name, z, _, _ in WATER]
        topology.addBond(atoms[0], atoms[1])
        topology.addBond(atoms[0], atoms[2])
        positions += [np.array(xyz) + centre for _, _, xyz, _ in WATER]
    system = app.ForceField("charmm36.xml", "charmm36/water.xml").createSystem(topology, nonbondedMethod=app.NoCutoff,
                                                                               rigidWater=False)
    return topology, system, np.array(positions)


def groupEnergy(system, positions, group):
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    return context.getState(getEnergy=True, groups={group}).getPotentialEnergy().value_in_unit(KJ)


def test_custom_nonbonded_lennard_jones_leaves_out_the_qm_pairs():
    """CHARMM36 keeps Lennard-Jones in a CustomNonbondedForce: the builder once removed it between QM atoms only from
    the NonbondedForce (whose epsilons are 0 there), so two QM waters kept +5 kJ/mol of Lennard-Jones with each other,
    and the CPU platform refused the System for its unequal exclusions. The custom force's energy must drop by exactly
    its QM-QM part, and the System must run on the CPU platform."""
    topology, system, positions = charmmWaters()
    custom = [f for f in system.getForces() if isinstance(f, mm.CustomNonbondedForce)]
    assert len(custom) == 1
    custom[0].setForceGroup(5)
    qm = list(range(6))
    onlyQM = mm.XmlSerializer.clone(system)
    [f for f in onlyQM.getForces() if isinstance(f, mm.CustomNonbondedForce)][0].addInteractionGroup(qm, qm)
    qmPairs = groupEnergy(onlyQM, positions, 5)
    assert abs(qmPairs) > 1.0  # the two QM waters do interact through it
    built = openmmdft.createQMMMSystem(topology, system, qm, **SETTINGS)
    assert groupEnergy(built, positions, 5) == pytest.approx(groupEnergy(system, positions, 5) - qmPairs, abs=1e-9)
    context = mm.Context(built, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("CPU"))
    context.setPositions(positions)
    assert np.isfinite(context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ))
