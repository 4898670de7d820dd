"""Link atoms across a covalent QM/MM boundary: ethanol whose methyl group is the QM region (capped by a hydrogen
on the C1-C2 bond, so the QM system is methane), next to two MM waters.

- The QM energy equals PySCF's for methane with the same link position and the same embedding charges (the
  boundary charge schemes' charges, built independently here), to 1e-6 Eh.
- The forces are the energy's derivative (central finite differences) on Q1, M1, the M2s that carry boundary
  charges, the QM hydrogens and MM atoms further away.
"""

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft
from finite_differences import assertForcesMatchEnergy
from pme_partner import addPMENonbondedForce
from test_qm_region import BASIS_DIR, KJ_PER_HARTREE, NM_PER_BOHR, TIP3P, matchingRKS, pyscfMolecule, watersAround

pyscf = pytest.importorskip("pyscf")
from pyscf import qmmm  # noqa: E402

import os  # noqa: E402

# Ethanol, nm: C1 (QM, 0) with H 1-3 (QM); C2 (M1, 4) with H 5, 6 and O 7 (the M2s), HO 8 on O.
ETHANOL = [("C", 6, (0.0, 0.0, 0.0), -0.18), ("H", 1, (-0.0363, -0.0513, 0.0889), 0.06),
           ("H", 1, (-0.0363, -0.0513, -0.0889), 0.06), ("H", 1, (-0.0363, 0.1028, 0.0), 0.06),
           ("C", 6, (0.1526, 0.0, 0.0), 0.145), ("H", 1, (0.1889, -0.0513, 0.0889), 0.04),
           ("H", 1, (0.1889, -0.0513, -0.0889), 0.04), ("O", 8, (0.2003, 0.1348, 0.0), -0.683),
           ("H", 1, (0.2963, 0.1348, 0.0), 0.418)]
ETHANOL_BONDS = [(0, 1), (0, 2), (0, 3), (0, 4), (4, 5), (4, 6), (4, 7), (7, 8)]
QM_ATOMS = [0, 1, 2, 3]
M1, M2S = 4, [5, 6, 7]
WATER_CENTRES = [(-0.25, 0.15, 0.1), (0.1, -0.3, 0.05)]
KJ = unit.kilojoule_per_mole


def ethanolSystem(scheme, energyOnly=True, convergence=1e-9, waterCentres=WATER_CENTRES):
    system = mm.System()
    force = openmmdft.QMMMForce()
    for _, _, _, q in ETHANOL:
        system.addParticle(12.0)
        force.addParticle(q)
    for a, b in ETHANOL_BONDS:
        force.addBond(a, b)
    waters = watersAround(waterCentres, seed=7)
    for w in waters:
        first = system.getNumParticles()
        for atom in range(3):
            system.addParticle(16.0 if atom == 0 else 1.0)
            force.addParticle(TIP3P[atom])
        force.addBond(first, first + 1)
        force.addBond(first, first + 2)
    for particle in QM_ATOMS:
        force.addQMAtom(particle, ETHANOL[particle][1])
    force.setBoundaryChargeScheme(scheme)
    force.setBasisSet(os.path.join(BASIS_DIR, "6-31gs.nw"))
    force.setCoulombMethod(openmmdft.QMMMForce.Exact)
    force.setGrid(60, 302)
    force.setSCFConvergence(convergence)
    force.setQMEnergyOnly(energyOnly)
    system.addForce(force)
    positions = np.concatenate([np.array([p for _, _, p, _ in ETHANOL])] + waters)
    return system, force, positions


def embeddingCharges(scheme, positions):
    """The charges the QM region should see, built from the schemes' definitions: M1's charge q0 = q/3 per M1-M2 bond;
    RCD: 2 q0 at each bond's middle, M2 charge - q0; charge shift: M2 charge + q0 and -q0/(2a), +q0/(2a) at
    M2 +- a (M2 - M1), a = 0.06."""
    charges = [q for _, _, _, q in ETHANOL] + list(TIP3P) * len(WATER_CENTRES)
    q0 = charges[M1] / len(M2S)
    points, values = [], []
    for i in range(len(charges)):
        if i in QM_ATOMS or i == M1:
            continue
        points.append(positions[i])
        values.append(charges[i] + (0 if i not in M2S else (-q0 if scheme == openmmdft.QMMMForce.RedistributedChargeAndDipole else q0)))
    for m2 in M2S:
        bond = positions[m2] - positions[M1]
        if scheme == openmmdft.QMMMForce.RedistributedChargeAndDipole:
            points.append(positions[M1] + 0.5 * bond)
            values.append(2 * q0)
        else:
            points += [positions[m2] + 0.06 * bond, positions[m2] - 0.06 * bond]
            values += [-q0 / 0.12, q0 / 0.12]
    return np.array(points), np.array(values)


def pyscfCappedMethane(positions, scheme):
    link = positions[0] + 0.109 * (positions[M1] - positions[0]) / np.linalg.norm(positions[M1] - positions[0])
    atoms = [(ETHANOL[i][1], positions[i]) for i in QM_ATOMS] + [(1, link)]
    mol = pyscfMolecule(atoms)
    points, values = embeddingCharges(scheme, positions)
    mf = qmmm.mm_charge(matchingRKS(mol), points / NM_PER_BOHR, values, unit="Bohr")
    energy = mf.kernel()
    assert mf.converged
    return energy, len(values)


SCHEMES = [openmmdft.QMMMForce.RedistributedChargeAndDipole, openmmdft.QMMMForce.ChargeShift]


def test_link_atoms_are_found_from_the_bonds():
    system, force, _ = ethanolSystem(SCHEMES[0])  # the System owns the Force: keep it
    assert force.getNumLinkAtoms() == 1
    qm, mmParticle, length = force.getLinkAtomParameters(0)
    assert (qm, mmParticle) == (0, M1) and length == 0.109 * unit.nanometer
    force.setLinkAtomBondLength(6, 0.11)
    assert force.getLinkAtomParameters(0)[2] == 0.11 * unit.nanometer
    with pytest.raises(mm.OpenMMException, match="link atom index 1"):
        force.getLinkAtomParameters(1)
    with pytest.raises(mm.OpenMMException, match="no link atom bond length for element 17"):
        force.getLinkAtomBondLength(17)


@pytest.mark.parametrize("scheme", SCHEMES, ids=["RCD", "chargeShift"])
def test_capped_qm_region_matches_pyscf(scheme):
    system, force, positions = ethanolSystem(scheme)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    context.getState(getEnergy=True)
    results = force.getQMResults(context)
    reference, numCharges = pyscfCappedMethane(positions, scheme)
    assert results["totalEnergy"].value_in_unit(KJ) / KJ_PER_HARTREE == pytest.approx(reference, abs=1e-6)
    assert results["numMMCharges"] == numCharges


@pytest.mark.parametrize("scheme", SCHEMES, ids=["RCD", "chargeShift"])
def test_link_atom_forces_are_the_energys_derivative(scheme):
    """Five-point central differences (h = 1e-4 nm, error O(h^4)) of the System's energy (QM region and MM Coulomb) on
    Q1, a QM hydrogen, M1, the M2s (H and O, which carry boundary charges), the hydroxyl H, and a water oxygen. Forces
    here reach 1000 kJ/mol/nm (the geometry is not relaxed); the SCF converges to 1e-10, so the differences are good
    to about 1e-4 kJ/mol/nm; the tolerance is 5e-3."""
    system, force, positions = ethanolSystem(scheme, energyOnly=False, convergence=1e-10)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    forces = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    assertForcesMatchEnergy(context, positions, forces, [0, 1, M1, 5, 7, 8, 9], 5e-3)


def test_link_atoms_that_cannot_be_made_are_refused():
    # QM = C1 and two of its hydrogens: the third hydrogen would be an M1 with no other MM neighbour.
    system, force, positions = ethanolSystem(SCHEMES[0])
    qm = openmmdft.QMMMForce()
    for i in range(force.getNumParticles()):
        qm.addParticle(force.getParticleParameters(i))
    for i in range(force.getNumBonds()):
        qm.addBond(*force.getBondParameters(i))
    for particle in (0, 1, 2):
        qm.addQMAtom(particle, ETHANOL[particle][1])
    qm.setQMCharge(-1)
    copy = mm.System()
    for i in range(system.getNumParticles()):
        copy.addParticle(1.0)
    copy.addForce(qm)
    with pytest.raises(mm.OpenMMException, match="has no other MM neighbour"):
        mm.Context(copy, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    # An odd electron count with the link hydrogens counted says so.
    force.setQMCharge(1)
    with pytest.raises(mm.OpenMMException, match="odd number of electrons.*link hydrogens"):
        mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))


def test_link_bond_of_zero_length_is_named():
    # The MM end of the cut bond (particle 4) on its QM atom (0): the link atom's direction is undefined.
    system, force, positions = ethanolSystem(SCHEMES[0])
    bad = positions.copy()
    bad[4] = bad[0]
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(bad)
    with pytest.raises(mm.OpenMMException, match="MM particle 4 is 0 nm from QM atom 0.*no direction"):
        context.getState(getEnergy=True)


def test_link_bond_length_update_matches_a_fresh_context():
    # setLinkAtomBondLength + updateParametersInContext once kept the Context's old length silently.
    system, force, positions = ethanolSystem(SCHEMES[0], convergence=1e-8)
    def energy(context):
        return context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    before = energy(context)
    force.setLinkAtomBondLength(6, 0.100)
    force.updateParametersInContext(context)
    updated = energy(context)
    fresh = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    fresh.setPositions(positions)
    assert abs(updated - before) > 1.0
    assert updated == pytest.approx(energy(fresh), abs=1e-5)


def test_link_settings_round_trip_through_xml():
    system, force, _ = ethanolSystem(openmmdft.QMMMForce.ChargeShift)
    force.setLinkAtomBondLength(16, 0.135)
    copy = mm.XmlSerializer.deserialize(mm.XmlSerializer.serialize(force))
    assert copy.getBoundaryChargeScheme() == openmmdft.QMMMForce.ChargeShift
    assert copy.getLinkAtomBondLength(16) == 0.135 * unit.nanometer
    assert copy.getLinkAtomBondLength(6) == 0.109 * unit.nanometer
    assert copy.getNumLinkAtoms() == 1


def test_qm_side_chain_of_a_protein_conserves_energy_as_mm_does():
    """Villin (OpenMM's test.pdb, waters and ions removed; Amber14, no cutoff, flexible bonds) with the side chain of
    its serine (CB, HB2, HB3, OG, HG) as the QM region, made by createQMMMSystem: one link atom on CA-CB. Velocity
    Verlet at 0.5 fs from the same minimized state and velocities: the total energy fluctuates as in the all-MM run
    (its RMS within 1.5x + 0.2 kJ/mol of the MM run's), so the link atom's forces are the energy's derivative."""
    import openmm.app as app

    data = os.path.join(os.path.dirname(app.__file__), "data")
    pdb = app.PDBFile(os.path.join(data, "test.pdb"))
    modeller = app.Modeller(pdb.topology, pdb.positions)
    modeller.delete([r for r in modeller.topology.residues() if r.name in ("HOH", "Cl", "CL", "Na", "NA")])
    system = app.ForceField("amber14-all.xml").createSystem(modeller.topology, nonbondedMethod=app.NoCutoff, constraints=None)
    serine = next(r for r in modeller.topology.residues() if r.name == "SER")
    qmAtoms = [a for a in serine.atoms() if a.name in ("CB", "HB2", "HB3", "OG", "HG")]
    qmmm = openmmdft.createQMMMSystem(modeller.topology, system, qmAtoms, basisSet="6-31G*", grid=(40, 146),
                                      scfConvergence=1e-8)
    force = next(f for f in qmmm.getForces() if isinstance(f, openmmdft.QMMMForce))
    assert force.getNumLinkAtoms() == 1
    ca = next(a for a in serine.atoms() if a.name == "CA")
    cb = next(a for a in serine.atoms() if a.name == "CB")
    assert force.getLinkAtomParameters(0)[:2] == [cb.index, ca.index]
    cpu = mm.Platform.getPlatformByName("CPU")
    minimizer = mm.Context(system, mm.VerletIntegrator(0.0005), cpu)
    minimizer.setPositions(modeller.positions)
    mm.LocalEnergyMinimizer.minimize(minimizer, 10, 200)
    start = minimizer.getState(getPositions=True).getPositions()
    fluctuations = []
    for s in (system, qmmm):
        integrator = mm.VerletIntegrator(0.0005)
        context = mm.Context(s, integrator, cpu)
        context.setPositions(start)
        context.setVelocitiesToTemperature(300, 3)
        totals = []
        for _ in range(15):
            integrator.step(2)
            state = context.getState(getEnergy=True)
            totals.append((state.getPotentialEnergy() + state.getKineticEnergy()).value_in_unit(KJ))
        fluctuations.append(np.std(totals))
    assert fluctuations[1] < 1.5 * fluctuations[0] + 0.2, fluctuations


def test_opencl_matches_reference():
    """Link atoms on OpenCL (double precision; the XC of the capped region on the device) as on Reference."""
    if "OpenCL" not in [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]:
        pytest.skip("no OpenCL platform")
    system, force, positions = ethanolSystem(SCHEMES[1], energyOnly=False)
    states = []
    for name, properties in (("Reference", {}), ("OpenCL", {"Precision": "double"})):
        c = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName(name), properties)
        c.setPositions(positions)
        states.append(c.getState(getEnergy=True, getForces=True))
    energies = [s.getPotentialEnergy().value_in_unit(KJ) for s in states]
    assert energies[1] == pytest.approx(energies[0], abs=1e-4)
    forces = [s.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer) for s in states]
    assert np.abs(forces[1] - forces[0]).max() < 1e-3


def test_link_atom_forces_with_ewald_embedding():
    """The same ethanol in a periodic 1.6 nm box with five waters, QM/MM-Ewald (cutoff 0.5 nm, switched from 0.35 nm):
    the boundary charges take part in the Ewald sum as well, and their forces reach M1 and the M2s by their weights.
    Five-point differences (h = 1e-4 nm) on Q1, M1, the M2s, the hydroxyl H, a near and a far water oxygen."""
    centres = WATER_CENTRES + [(0.6, 0.5, 0.4), (-0.6, -0.5, 0.6), (0.7, -0.6, -0.5)]
    system, force, positions = ethanolSystem(SCHEMES[1], energyOnly=False, convergence=1e-10, waterCentres=centres)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(1.6, 0, 0), mm.Vec3(0, 1.6, 0), mm.Vec3(0, 0, 1.6))
    force.setNonbondedMethod(openmmdft.QMMMForce.Ewald)
    force.setCutoffDistance(0.5)
    force.setUseEmbeddingSwitchingFunction(True)
    force.setEmbeddingSwitchingDistance(0.35)
    force.setCoulombMethod(openmmdft.QMMMForce.DensityFitting)
    force.setGrid(40, 146)
    addPMENonbondedForce(system, force)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    forces = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    assert force.getQMResults(context)["longRangeEnergy"].value_in_unit(KJ) != 0

    assertForcesMatchEnergy(context, positions, forces, [0, M1, 5, 7, 8, 9, 18], 5e-3)
