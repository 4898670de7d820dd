"""Smooth embedding with a cutoff (QMMMForce.setUseEmbeddingSwitchingFunction): an MM water pulled out of the
QM region's cutoff changes the energy continuously (without the switch it jumps), the forces are the energy's
derivative inside the switching shell (finite differences, 5 points, to 1e-4 kJ/mol/nm), and the setting is
checked, serialized and the same on every platform."""

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft
from test_qm_region import WATER_NM, buildSystem

KJ = unit.kilojoule_per_mole
CUTOFF, SWITCH = 0.6, 0.45


def switchedSystem(distance, switching=True, periodic=False):
    """A QM water and one (turned) MM water whose oxygen is `distance` nm from the QM oxygen along x (and a second
    MM water well inside the cutoff), CutoffNonPeriodic with the embedding switch between 0.45 and 0.6 nm."""
    c, s = np.cos(0.7), np.sin(0.7)
    turned = WATER_NM @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T  # no ties for the closest MM-QM pair
    waters = [turned + np.array([distance, 0.0, 0.02]), WATER_NM @ np.diag([1, -1, 1]) + np.array([-0.3, 0.05, 0.0])]
    method = openmmdft.QMMMForce.CutoffPeriodic if periodic else openmmdft.QMMMForce.CutoffNonPeriodic
    system, force, positions = buildSystem(waters, method=method, cutoff=CUTOFF, exact=False, energyOnly=False,
                                           grid=(30, 110), box=2.0 if periodic else None)
    if periodic:  # the MM water across the box face from the QM region: embedded by its periodic image
        positions[3:6, 0] -= 2.0
    force.setSCFConvergence(1e-10)
    force.setUseEmbeddingSwitchingFunction(switching)
    force.setEmbeddingSwitchingDistance(SWITCH)
    return system, force, positions


def energy(system, positions, platform="Reference"):
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName(platform))
    context.setPositions(positions)
    return context, context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ)


def test_energy_is_continuous_where_the_plain_cutoff_jumps():
    # The closest MM-QM pair is an MM hydrogen or oxygen; scan the MM water outwards through the cutoff.
    def scan(switching):
        values = []
        for d in np.linspace(0.55, 0.75, 101):  # steps of 2e-3 nm
            system, force, positions = switchedSystem(d, switching)
            values.append(energy(system, positions)[1])
        return np.array(values)
    smooth, plain = scan(True), scan(False)
    print("largest step between neighbours: %.4f (switched), %.4f (plain) kJ/mol"
          % (np.abs(np.diff(smooth)).max(), np.abs(np.diff(plain)).max()))
    # The plain cutoff jumps by the water's whole interaction energy in one step; the switched energy only
    # changes as much as moving the water by 2e-3 nm does.
    assert np.abs(np.diff(plain)).max() > 0.5
    assert np.abs(np.diff(smooth)).max() < 0.1 * np.abs(np.diff(plain)).max()
    # Beyond the cutoff both are the energy without that water.
    assert smooth[-1] == pytest.approx(plain[-1], abs=1e-8)


@pytest.mark.parametrize("periodic", [False, True])
def test_forces_are_the_derivative_inside_the_switching_shell(periodic):
    system, force, positions = switchedSystem(0.56, periodic=periodic)
    context, _ = energy(system, positions)
    results = force.getQMResults(context)
    forces = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    h = 2e-4

    def at(particle, axis, shift):
        moved = positions.copy()
        moved[particle, axis] += shift
        context.setPositions(moved)
        return context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ)

    worst = 0
    for particle in (0, 1, 2, 3, 4, 5):  # the QM water and the switched MM water
        for axis in range(3):
            numeric = -(-at(particle, axis, 2 * h) + 8 * at(particle, axis, h) - 8 * at(particle, axis, -h)
                        + at(particle, axis, -2 * h)) / (12 * h)
            worst = max(worst, abs(numeric - forces[particle, axis]))
            assert numeric == pytest.approx(forces[particle, axis], abs=1e-4), (particle, axis)
    print("largest force error %.2e kJ/mol/nm" % worst)
    assert results["numMMCharges"] == 6


def test_switching_distance_must_be_below_the_cutoff_and_round_trips():
    system, force, positions = switchedSystem(0.5)
    force.setEmbeddingSwitchingDistance(CUTOFF)
    with pytest.raises(mm.OpenMMException, match="switching distance"):
        energy(system, positions)
    force.setEmbeddingSwitchingDistance(0.4)
    copy = mm.XmlSerializer.deserialize(mm.XmlSerializer.serialize(force))
    assert copy.getUseEmbeddingSwitchingFunction()
    assert copy.getEmbeddingSwitchingDistance() == 0.4 * unit.nanometer
    with pytest.raises(mm.OpenMMException, match="non-negative"):
        force.setEmbeddingSwitchingDistance(-1)


def test_same_on_every_platform(platformName):
    system, force, positions = switchedSystem(0.56)
    _, reference = energy(system, positions)
    context, value = energy(system, positions, platformName)
    assert value == pytest.approx(reference, abs=1e-4)
