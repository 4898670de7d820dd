"""QM/MM in PME Systems (QMMMForce method Ewald): the MM-MM Coulomb terms stay in OpenMM's PME, the QM region meets the
explicit MM charges within the cutoff and the periodic rest of them (and its own images) through an Ewald sum at the
level of its Mulliken charges.

- With no QM atoms a PME System with a QMMMForce has the energy of the System without it.
- The forces are the energy's derivative (five-point finite differences) on the QM atoms, on MM atoms inside the
  cutoff and on MM atoms far beyond it.
- A charged QM region (NH4+): its QM/MM energy changes with the cutoff much less with Ewald than with the cutoff
  alone (the table is printed; docs/VALIDATION.md has it).
- A short constant-energy run fluctuates as the all-MM run does.
- A QM water and a distant ion interact as the water's Mulliken charges and the ion do in OpenMM's own PME.
"""

import numpy as np
import openmm as mm
import openmm.app as app
import openmm.unit as unit
import pytest

import openmmdft
from finite_differences import assertForcesMatchEnergy
from pme_partner import addPMENonbondedForce

KJ = unit.kilojoule_per_mole
NM = unit.nanometer
FORCE = KJ / NM


def waterBox(size, seed=None):
    forcefield = app.ForceField("amber14/tip3p.xml")
    modeller = app.Modeller(app.Topology(), [])
    modeller.addSolvent(forcefield, model="tip3p", boxSize=mm.Vec3(size, size, size) * NM)
    return modeller, forcefield


def context(system, positions, platform="Reference"):
    c = mm.Context(system, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName(platform))
    c.setPositions(positions)
    return c


def qmForce(system):
    return next(f for f in system.getForces() if isinstance(f, openmmdft.QMMMForce))


def platformNames():
    return [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]


def doublePrecisionContext(system, positions, platform):
    properties = {"Precision": "double"} if platform in ("OpenCL", "CUDA") else {}
    c = mm.Context(system, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName(platform), properties)
    c.setPositions(positions)
    return c


@pytest.mark.parametrize("platform", ["Reference", "CPU", "OpenCL"])
def test_without_qm_atoms_the_energy_is_pmes(platform):
    if platform not in platformNames():
        pytest.skip("no %s platform" % platform)
    modeller, forcefield = waterBox(2.0)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=0.8 * NM)
    reference = doublePrecisionContext(system, modeller.positions, platform).getState(getEnergy=True).getPotentialEnergy()
    withForce = mm.XmlSerializer.clone(system)
    force = openmmdft.replaceCoulomb(withForce, modeller.topology)
    assert force.getNonbondedMethod() == openmmdft.QMMMForce.Ewald
    energy = doublePrecisionContext(withForce, modeller.positions, platform).getState(getEnergy=True).getPotentialEnergy()
    # The CPU platform's PME works in single precision and sums over threads in no fixed order: two Contexts of the
    # same System differ by ~1e-8 relative there; the others are double precision and deterministic.
    tolerance = 1e-4 if platform == "CPU" else 1e-6
    assert energy.value_in_unit(KJ) == pytest.approx(reference.value_in_unit(KJ), abs=tolerance)


def test_opencl_matches_reference():
    """The QMMMForce of the same QM/MM-Ewald System on OpenCL (double precision; the QM region through the same driver,
    the XC on the device) and on Reference: energies to 1e-4 kJ/mol, forces to 1e-3 kJ/mol/nm. (The PME of the two
    platforms' NonbondedForces differs more, ~1e-8 relative, so the QMMMForce is compared alone.)"""
    if "OpenCL" not in platformNames():
        pytest.skip("no OpenCL platform")
    modeller, _, qmmm, _ = qmWaterInPME(size=2.0, cutoff=0.8, convergence=1e-9)
    qmForce(qmmm).setForceGroup(1)
    states = [doublePrecisionContext(qmmm, modeller.positions, p).getState(getEnergy=True, getForces=True, groups={1})
              for p in ("Reference", "OpenCL")]
    energies = [s.getPotentialEnergy().value_in_unit(KJ) for s in states]
    assert energies[1] == pytest.approx(energies[0], abs=1e-4)
    forces = [s.getForces(asNumpy=True).value_in_unit(FORCE) for s in states]
    assert np.abs(forces[1] - forces[0]).max() < 1e-3


def qmWaterInPME(size=2.2, cutoff=0.9, convergence=1e-10, switching=True, rigid=False):
    modeller, forcefield = waterBox(size)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=cutoff * NM,
                                     constraints=None if not rigid else app.HBonds, rigidWater=rigid)
    water = next(modeller.topology.residues())
    settings = dict(basisSet="6-31G*", grid=(40, 146), scfConvergence=convergence)
    if switching:
        settings.update(useEmbeddingSwitchingFunction=True, embeddingSwitchingDistance=(cutoff - 0.2) * NM)
    qmmm = openmmdft.createQMMMSystem(modeller.topology, system, water.atoms(), **settings)
    return modeller, system, qmmm, [a.index for a in water.atoms()]


def test_forces_are_the_energys_derivative_near_and_far():
    """QM water in 346 flexible TIP3P waters, PME, cutoff 0.9 nm with the embedding switch from 0.7 nm; the QMMMForce
    alone (its own force group). Five-point differences, h = 1e-4 nm; SCF 1e-10: agreement to ~1e-5 kJ/mol/nm,
    tolerance 1e-3 (the force on a far atom is ~1 kJ/mol/nm, all of it the Ewald term)."""
    modeller, _, qmmm, qmAtoms = qmWaterInPME()
    for i in range(qmmm.getNumForces()):
        qmmm.getForce(i).setForceGroup(1 if isinstance(qmmm.getForce(i), openmmdft.QMMMForce) else 0)
    positions = np.array(modeller.positions.value_in_unit(NM))
    c = context(qmmm, positions)
    forces = c.getState(getForces=True, groups={1}).getForces(asNumpy=True).value_in_unit(FORCE)

    box = 2.2
    distance = np.linalg.norm((positions - positions[qmAtoms[0]] + box / 2) % box - box / 2, axis=1)
    order = [i for i in np.argsort(distance) if i not in qmAtoms]
    near, far = order[:2], order[-2:]
    assert distance[far].min() > 1.5
    assertForcesMatchEnergy(c, positions, forces, qmAtoms + near + far, 1e-3, groups={1})


AMMONIUM = np.array([[0, 0, 0], [0.0585, 0.0585, 0.0585], [-0.0585, -0.0585, 0.0585], [-0.0585, 0.0585, -0.0585],
                     [0.0585, -0.0585, -0.0585]])


def ammoniumEnergies(method, cutoffs):
    """QM energy (kJ/mol) of NH4+ at the centre of a 2.5 nm box of TIP3P waters (those within 0.3 nm removed) for each
    cutoff: only the QMMMForce, whose QM energy is what the embedding changes."""
    modeller, _ = waterBox(2.5)
    centre = np.array([1.25, 1.25, 1.25])
    positions = np.array(modeller.positions.value_in_unit(NM))
    waters = [r for r in modeller.topology.residues()
              if min(np.linalg.norm(positions[a.index] - centre) for a in r.atoms()) > 0.3]
    charges = {"O": -0.834, "H1": 0.417, "H2": 0.417}
    energies = []
    for cutoff in cutoffs:
        system = mm.System()
        system.setDefaultPeriodicBoxVectors(*modeller.topology.getPeriodicBoxVectors())
        force = openmmdft.QMMMForce()
        coordinates = list(AMMONIUM + centre)
        for k, z in enumerate((7, 1, 1, 1, 1)):
            system.addParticle(1.0)
            force.addParticle(0.0)
            force.addQMAtom(k, z)
            if k > 0:
                force.addBond(0, k)
        for r in waters:
            first = system.getNumParticles()
            for a in r.atoms():
                system.addParticle(1.0)
                force.addParticle(charges[a.name])
                coordinates.append(positions[a.index])
            force.addBond(first, first + 1)
            force.addBond(first, first + 2)
        force.setQMCharge(1)
        force.setBasisSet("6-31G*")
        force.setGrid(40, 146)
        force.setSCFConvergence(1e-8)
        force.setQMEnergyOnly(True)
        force.setNonbondedMethod(method)
        force.setCutoffDistance(cutoff)
        system.addForce(force)
        if method == openmmdft.QMMMForce.Ewald:
            addPMENonbondedForce(system, force)  # the MM-MM terms, which Ewald leaves to a NonbondedForce
        c = context(system, np.array(coordinates), "CPU")
        c.getState(getEnergy=True)
        energies.append(force.getQMResults(c)["totalEnergy"].value_in_unit(KJ))
    return energies


def test_charged_qm_region_depends_on_the_cutoff_far_less_with_ewald():
    cutoffs = [0.6, 0.8, 1.0]
    ewald = ammoniumEnergies(openmmdft.QMMMForce.Ewald, cutoffs)
    plain = ammoniumEnergies(openmmdft.QMMMForce.CutoffPeriodic, cutoffs)
    print("| cutoff (nm) | Ewald: QM energy - at 1.0 nm (kJ/mol) | cutoff only: QM energy - at 1.0 nm (kJ/mol) |")
    for c, e, p in zip(cutoffs, ewald, plain):
        print("| %.1f | %.2f | %.2f |" % (c, e - ewald[-1], p - plain[-1]))
    assert np.ptp(ewald) < 0.2 * np.ptp(plain)


def totalEnergyFluctuation(system, positions, steps=20):
    integrator = mm.VerletIntegrator(0.0005)
    c = mm.Context(system, integrator, mm.Platform.getPlatformByName("Reference"))
    c.setPositions(positions)
    c.setVelocitiesToTemperature(300, 11)
    totals = []
    for _ in range(steps):
        integrator.step(1)
        state = c.getState(getEnergy=True)
        totals.append((state.getPotentialEnergy() + state.getKineticEnergy()).value_in_unit(KJ))
    return np.std(totals)


def test_constant_energy_run_fluctuates_as_the_mm_run_does():
    """QM water in 346 flexible waters with PME, 20 steps of 0.5 fs from the same state: the total energy's RMS
    fluctuation is the all-MM run's (within 1.5x + 0.2 kJ/mol)."""
    modeller, system, qmmm, _ = qmWaterInPME(convergence=1e-8)
    mmFluctuation = totalEnergyFluctuation(system, modeller.positions)
    qmFluctuation = totalEnergyFluctuation(qmmm, modeller.positions)
    assert qmFluctuation < 1.5 * mmFluctuation + 0.2, (qmFluctuation, mmFluctuation)


def test_distant_ion_interacts_as_in_pme():
    """A QM water and a +1 charge 1.2 nm away (beyond the 0.8 nm cutoff) in an otherwise empty 2.6 nm periodic box. The
    QM energy changes, when the ion is charged, by the Ewald interaction of the ion with the water's Mulliken charges
    (OpenMM's own PME: E(water + ion) - E(water) - E(ion)), up to the water's polarization by the ion (second order,
    ~0.01 kJ/mol at this distance) and PME's error: tolerance 0.05 kJ/mol of an interaction of ~1 kJ/mol."""
    water = np.array([[0.0, 0.0, 0.01173], [0.0, 0.07572, -0.04692], [0.0, -0.07572, -0.04692]]) + 1.0
    ion = np.array([[1.0, 1.0, 2.2]])
    box = [mm.Vec3(2.6, 0, 0), mm.Vec3(0, 2.6, 0), mm.Vec3(0, 0, 2.6)]

    def qmEnergy(ionCharge):
        system = mm.System()
        system.setDefaultPeriodicBoxVectors(*box)
        force = openmmdft.QMMMForce()
        for k, z in enumerate((8, 1, 1)):
            system.addParticle(1.0)
            force.addParticle(0.0)
            force.addQMAtom(k, z)
        force.addBond(0, 1)
        force.addBond(0, 2)
        system.addParticle(1.0)
        force.addParticle(ionCharge)
        force.setBasisSet("6-31G*")
        force.setGrid(50, 194)
        force.setSCFConvergence(1e-9)
        force.setQMEnergyOnly(True)
        force.setNonbondedMethod(openmmdft.QMMMForce.Ewald)
        force.setCutoffDistance(0.8)
        force.setEwaldErrorTolerance(1e-6)
        system.addForce(force)
        addPMENonbondedForce(system, force)
        c = context(system, np.concatenate([water, ion]))
        c.getState(getEnergy=True)
        r = force.getQMResults(c)
        assert r["numMMCharges"] == 0  # the ion is beyond the cutoff: Ewald term only
        return r["totalEnergy"].value_in_unit(KJ), [q.value_in_unit(unit.elementary_charge) for q in r["mullikenCharges"]]

    charged, mulliken = qmEnergy(1.0)
    neutral, _ = qmEnergy(0.0)

    def pmeEnergy(charges):
        system = mm.System()
        system.setDefaultPeriodicBoxVectors(*box)
        nb = mm.NonbondedForce()
        nb.setNonbondedMethod(mm.NonbondedForce.PME)
        nb.setCutoffDistance(0.8)
        nb.setEwaldErrorTolerance(1e-6)
        for q in charges:
            system.addParticle(1.0)
            nb.addParticle(q, 0.1, 0.0)
        nb.addException(0, 1, 0, 0.1, 0)
        nb.addException(0, 2, 0, 0.1, 0)
        nb.addException(1, 2, 0, 0.1, 0)
        system.addForce(nb)
        return context(system, np.concatenate([water, ion])).getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ)

    interaction = pmeEnergy(mulliken + [1.0]) - pmeEnergy(mulliken + [0.0]) - pmeEnergy([0, 0, 0, 1.0])
    assert abs(interaction) > 0.5
    assert charged - neutral == pytest.approx(interaction, abs=0.05)


def test_ewald_settings_round_trip_through_xml_and_are_checked():
    force = openmmdft.QMMMForce()
    force.setNonbondedMethod(openmmdft.QMMMForce.Ewald)
    force.setEwaldErrorTolerance(1e-5)
    copy = mm.XmlSerializer.deserialize(mm.XmlSerializer.serialize(force))
    assert copy.getNonbondedMethod() == openmmdft.QMMMForce.Ewald and copy.getEwaldErrorTolerance() == 1e-5
    assert copy.usesPeriodicBoundaryConditions()
    for bad in (0, 1, -1e-4):
        with pytest.raises(mm.OpenMMException, match="Ewald error tolerance"):
            force.setEwaldErrorTolerance(bad)


def test_qm_atom_charged_in_the_nonbonded_force_is_refused():
    modeller, forcefield = waterBox(2.0)
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=0.8 * NM)
    force = openmmdft.replaceCoulomb(system, modeller.topology)
    for atom in next(modeller.topology.residues()).atoms():
        force.addQMAtom(atom.index, atom.element.atomic_number)
    with pytest.raises(mm.OpenMMException, match="QM atom 0 has charge .* NonbondedForce"):
        context(system, modeller.positions)


def test_reporter_writes_the_long_range_energy(tmp_path):
    import csv
    modeller, _, qmmm, _ = qmWaterInPME(size=2.0, cutoff=0.8, convergence=1e-8)
    simulation = app.Simulation(modeller.topology, qmmm, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName("CPU"))
    simulation.context.setPositions(modeller.positions)
    path = str(tmp_path / "ewald.csv")
    reporter = openmmdft.QMMMReporter(path, 1)
    simulation.reporters.append(reporter)
    simulation.step(1)
    del simulation.reporters[:]
    del reporter
    with open(path, newline="") as f:
        row = list(csv.DictReader(f))[0]
    results = qmForce(qmmm).getQMResults(simulation.context)
    assert float(row["longRangeEnergy (kJ/mol)"]) == pytest.approx(results["longRangeEnergy"].value_in_unit(KJ), abs=1e-6)
    assert float(row["longRangeEnergy (kJ/mol)"]) != 0


def test_forces_in_a_triclinic_box():
    """A QM water in a rhombic dodecahedron of 307 waters (Modeller, padding 1.2 nm), PME cutoff 0.6 nm, switched from
    0.45 nm: five-point differences on the QM atoms and on MM atoms across the box, tolerance 1e-3 kJ/mol/nm."""
    forcefield = app.ForceField("amber14/tip3p.xml")
    topology = app.Topology()
    residue = topology.addResidue("HOH", topology.addChain())
    atoms = [topology.addAtom(name, app.Element.getBySymbol(name[0]), residue) for name in ("O", "H1", "H2")]
    topology.addBond(atoms[0], atoms[1])
    topology.addBond(atoms[0], atoms[2])
    water = [mm.Vec3(0, 0, 0.01173), mm.Vec3(0, 0.07572, -0.04692), mm.Vec3(0, -0.07572, -0.04692)] * NM
    modeller = app.Modeller(topology, water)
    modeller.addSolvent(forcefield, model="tip3p", padding=1.2 * NM, boxShape="dodecahedron")
    assert modeller.topology.getPeriodicBoxVectors()[2][0].value_in_unit(NM) > 0  # triclinic
    system = forcefield.createSystem(modeller.topology, nonbondedMethod=app.PME, nonbondedCutoff=0.6 * NM,
                                     constraints=None, rigidWater=False)
    qmmm = openmmdft.createQMMMSystem(modeller.topology, system, [0, 1, 2], basisSet="6-31G*", grid=(40, 146),
                                      scfConvergence=1e-10, useEmbeddingSwitchingFunction=True,
                                      embeddingSwitchingDistance=0.45 * NM)
    qmForce(qmmm).setForceGroup(1)
    positions = np.array(modeller.positions.value_in_unit(NM))
    c = context(qmmm, positions)
    forces = c.getState(getForces=True, groups={1}).getForces(asNumpy=True).value_in_unit(FORCE)

    assertForcesMatchEnergy(c, positions, forces, [0, 1, 2, 10, 400, len(positions) - 1], 1e-3, groups={1})
