"""The QM region in a force group of its own (QMMMForce.setQMForceGroup), for multiple time stepping:
the groups split the energy exactly (QM part = getQMResults' total energy, MM part = the Force without QM
atoms), on every platform present; MTSIntegrator then evaluates the QM region once per outer step."""

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft
from test_qm_forces import mdSystem

KJ = unit.kilojoule_per_mole
QMMMForce = openmmdft.QMMMForce


def qmForce(system):
    return [f for f in system.getForces() if isinstance(f, QMMMForce)][0]


def energy(context, groups):
    return context.getState(getEnergy=True, groups=groups).getPotentialEnergy().value_in_unit(KJ)


def test_setting_and_serialization():
    force = QMMMForce()
    assert force.getQMForceGroup() == -1
    force.setQMForceGroup(3)
    assert mm.XmlSerializer.deserialize(mm.XmlSerializer.serialize(force)).getQMForceGroup() == 3
    for bad in (-2, 32):
        with pytest.raises(mm.OpenMMException, match="QM force group"):
            force.setQMForceGroup(bad)


def test_groups_split_the_energy(platformName):
    system, positions = mdSystem()
    force = qmForce(system)
    for f in system.getForces():
        f.setForceGroup(0)
    force.setForceGroup(1)
    force.setQMForceGroup(2)
    context = mm.Context(system, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName(platformName))
    context.setPositions(positions)
    qm = energy(context, {2})
    assert qm == pytest.approx(force.getQMResults(context)["totalEnergy"].value_in_unit(KJ), abs=1e-6)
    mmCoulomb = energy(context, {1})
    # The same Force without QM atoms, the QM atoms' charges zeroed (they interact through the QM region),
    # gives the MM electrostatics alone.
    noQM = mm.System()
    for i in range(system.getNumParticles()):
        noQM.addParticle(system.getParticleMass(i))
    plain = QMMMForce()
    qmParticles = {force.getQMAtomParameters(i)[0] for i in range(force.getNumQMAtoms())}
    for i in range(force.getNumParticles()):
        plain.addParticle(0.0 if i in qmParticles else force.getParticleParameters(i))
    for i in range(force.getNumBonds()):
        plain.addBond(*force.getBondParameters(i))
    noQM.addForce(plain)
    reference = mm.Context(noQM, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName("Reference"))
    reference.setPositions(positions)
    assert mmCoulomb == pytest.approx(energy(reference, {0}), abs=1e-4)
    total = energy(context, {0, 1, 2})
    assert total == pytest.approx(energy(context, {0}) + mmCoulomb + qm, abs=1e-4)
    # Forces of the QM group alone: those of the QM region (nonzero on QM atoms and the MM charges it sees).
    forces = context.getState(getForces=True, groups={2}).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    assert np.abs(forces[:3]).max() > 1.0


def test_mts_integrator_evaluates_the_qm_region_once_per_outer_step():
    system, positions = mdSystem()
    force = qmForce(system)
    force.setQMForceGroup(1)  # everything else stays in group 0
    integrator = mm.MTSIntegrator(0.001, [(1, 1), (0, 2)])  # QM every 1 fs, MM every 0.5 fs
    context = mm.Context(system, integrator, mm.Platform.getPlatformByName("CPU"))
    context.setPositions(positions)
    context.setVelocitiesToTemperature(300, 3)
    integrator.step(1)
    computed = []
    for _ in range(4):
        integrator.step(1)
        computed.append(force.getQMResults(context)["extrapolatedDensities"])
    # One QM evaluation per outer step, so the density history fills as in plain MD.
    assert computed[-1] >= 3
