"""Periodic embedding of the QM region (CutoffPeriodic): the QM region is made whole, every MM
molecule is selected by its minimum-image distance to every QM atom, and a box too small for the
QM region plus twice the cutoff is refused.

The reference for each periodic case is the same configuration, unwrapped, in a box so large that
periodicity plays no part (the energy and forces must agree to 1e-6 kJ/mol and 1e-5 kJ/mol/nm: the
same arithmetic up to summation order). The periodic cases wrap every atom by its own random
lattice vector, so molecules (QM and MM) are split across box faces, in rectangular and triclinic
boxes.
"""

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft

KJ = unit.kilojoule_per_mole
CUTOFF = 0.9  # nm
H2 = np.array([[0.0, 0.0, -0.037], [0.0, 0.0, 0.037]])  # nm


def wideQMSystem(box, withWaters=True, qm=True):
    """Two H2 molecules (the QM region, 4 atoms, ~1 nm wide along x), a Na+ ion 0.73 nm beyond the
    last QM atom, and MM waters around. Returns (system, force, positions in nm, particle of the ion)."""
    system = mm.System()
    force = openmmdft.QMMMForce()
    positions = []

    def add(xyz, charge):
        system.addParticle(1.0)
        force.addParticle(charge)
        positions.append(xyz)
        return len(positions) - 1

    for center in ([0.0, 0.0, 0.0], [1.0, 0.05, 0.0]):
        a, b = (add(np.array(center) + atom, 0.0) for atom in H2)
        force.addBond(a, b)
        if qm:
            force.addQMAtom(a, 1)
            force.addQMAtom(b, 1)
    lastQM = positions[-1]
    ion = add(lastQM + np.array([0.73, 0.0, 0.0]), 1.0)
    if withWaters:
        water = np.array([[0.0, 0.0, 0.0], [0.0757, 0.0586, 0.0], [-0.0757, 0.0586, 0.0]])
        for center in ([-0.5, 0.3, 0.2], [1.3, -0.6, 0.1], [0.5, 0.0, 0.7], [0.4, 1.2, -0.3]):
            o, h1, h2 = (add(np.array(center) + atom, q) for atom, q in zip(water, (-0.834, 0.417, 0.417)))
            force.addBond(o, h1)
            force.addBond(o, h2)
    force.setBasisSet("STO-3G")
    force.setGrid(30, 110)
    force.setSCFConvergence(1e-9)
    force.setNonbondedMethod(openmmdft.QMMMForce.CutoffPeriodic)
    force.setCutoffDistance(CUTOFF)
    system.setDefaultPeriodicBoxVectors(*[mm.Vec3(*v) for v in box])
    system.addForce(force)
    return system, force, np.array(positions), ion


def evaluate(system, force, positions, box):
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPeriodicBoxVectors(*[mm.Vec3(*v) for v in box])
    context.setPositions(positions)
    state = context.getState(getEnergy=True, getForces=True)
    return (state.getPotentialEnergy().value_in_unit(KJ),
            state.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer),
            force.getQMResults(context) if force.getNumQMAtoms() else None)


def qmPart(box, positions):
    """Energy, forces and results of the QM region alone: the Context's minus those of the same System
    without QM atoms (the MM Coulomb among MM charges legitimately differs between a box and a large one)."""
    withQM = evaluate(*wideQMSystem(box)[:2], positions, box)
    mmOnly = evaluate(*wideQMSystem(box, qm=False)[:2], positions, box)
    return withQM[0] - mmOnly[0], withQM[1] - mmOnly[1], withQM[2]


def wrapped(positions, box, seed):
    """Every atom moved by its own random lattice vector: molecules end up split across faces."""
    rng = np.random.default_rng(seed)
    box = np.asarray(box)
    return positions + rng.integers(-2, 3, size=(len(positions), 3)) @ box


LARGE = [[10.0, 0, 0], [0, 10.0, 0], [0, 0, 10.0]]
RECTANGULAR = [[3.0, 0, 0], [0, 3.0, 0], [0, 0, 3.0]]
TRICLINIC = [[3.0, 0, 0], [0.9, 3.0, 0], [-1.2, 1.1, 3.0]]  # OpenMM's reduced form, smallest width 3 nm


def test_ion_near_last_qm_atom_is_embedded():
    """The reported case: an ion 0.73 nm from the last QM atom (beyond half the box from the first)."""
    system, force, positions, ion = wideQMSystem(RECTANGULAR, withWaters=False)
    _, _, results = evaluate(system, force, positions, RECTANGULAR)
    assert results["numMMCharges"] == 1
    system, force, positions, ion = wideQMSystem(LARGE, withWaters=False)
    _, _, results = evaluate(system, force, positions, LARGE)
    assert results["numMMCharges"] == 1


@pytest.mark.parametrize("box", [RECTANGULAR, TRICLINIC], ids=["rectangular", "triclinic"])
def test_wrapped_configuration_matches_large_box(box):
    positions, ion = wideQMSystem(box)[2:]
    reference = qmPart(LARGE, positions)
    for seed in (1, 2):
        energy, forces, results = qmPart(box, wrapped(positions, box, seed))
        assert results["numMMCharges"] == reference[2]["numMMCharges"] == 1 + 3 * 3  # the 4th water is beyond the cutoff
        assert abs(energy - reference[0]) < 1e-6
        assert np.abs(forces - reference[1]).max() < 1e-5
        assert np.abs(forces[ion]).max() > 0.1  # the ion feels the QM region (H2 quadrupole: ~0.65)


@pytest.mark.parametrize("distance, embedded", [(0.8, True), (1.0, False)])
def test_molecule_selected_by_minimum_image_to_any_qm_atom(distance, embedded):
    """The 4th water moved to `distance` from the last QM atom along -y, across the box face at y = 0."""
    system, force, positions, ion = wideQMSystem(RECTANGULAR)
    positions = positions.copy()
    lastQM = positions[3]
    positions[-3:] += lastQM + np.array([0.0, -distance, 0.0]) - positions[-3]
    positions[-3:, 1] += 3.0  # wrapped into the box
    _, _, results = evaluate(system, force, positions, RECTANGULAR)
    assert results["numMMCharges"] == 1 + 3 * (4 if embedded else 3)


def test_box_too_small_for_qm_region_is_refused():
    """QM extent (~1.07 nm) + 2 x 0.9 nm > 2.8 nm: the embedding would be ambiguous."""
    small = [[2.8, 0, 0], [0, 2.8, 0], [0, 0, 2.8]]
    system, force, positions, ion = wideQMSystem(small, withWaters=False)
    with pytest.raises(mm.OpenMMException, match="does not fit in the periodic box"):
        evaluate(system, force, positions, small)


def chainSystem(box):
    """A QM region wider than half the box: four H2 molecules 0.6 nm apart along x (1.87 nm in all),
    bonded in a chain (bonds only shape exclusions; they keep the region one molecule), and a water."""
    system = mm.System()
    force = openmmdft.QMMMForce()
    positions = []
    for k in range(4):
        for atom in H2:
            system.addParticle(1.0)
            force.addParticle(0.0)
            positions.append(np.array([0.6 * k, 0.0, 0.0]) + atom[[2, 1, 0]])  # H2 along x
            force.addQMAtom(len(positions) - 1, 1)
    for i in range(7):
        force.addBond(i, i + 1)
    water = np.array([[0.0, 0.0, 0.0], [0.0757, 0.0586, 0.0], [-0.0757, 0.0586, 0.0]])
    for atom, q in zip(water, (-0.834, 0.417, 0.417)):
        system.addParticle(1.0)
        force.addParticle(q)
        positions.append(np.array([1.9, 0.4, 0.0]) + atom)
    force.addBond(8, 9)
    force.addBond(8, 10)
    force.setBasisSet("STO-3G")
    force.setGrid(30, 110)
    force.setSCFConvergence(1e-9)
    force.setNonbondedMethod(openmmdft.QMMMForce.CutoffPeriodic)
    force.setCutoffDistance(0.5)
    system.setDefaultPeriodicBoxVectors(*[mm.Vec3(*v) for v in box])
    system.addForce(force)
    return system, force, np.array(positions)


def test_qm_region_wider_than_half_the_box_stays_whole():
    """Made whole along its bonds, not by minimum image from its first atom (which folds the far end)."""
    reference = evaluate(*chainSystem(LARGE), LARGE)
    system, force, positions = chainSystem(RECTANGULAR)
    energy, forces, results = evaluate(system, force, wrapped(positions, RECTANGULAR, 3), RECTANGULAR)
    assert results["numMMCharges"] == reference[2]["numMMCharges"] == 3
    assert abs(energy - reference[0]) < 1e-6  # one MM molecule: no MM-MM Coulomb differs
    assert np.abs(forces - reference[1]).max() < 1e-5
