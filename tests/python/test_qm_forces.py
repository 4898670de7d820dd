"""Analytic forces of the QM region (QMMMForce without energy-only mode) on the Reference and CPU platforms.

- Forces on the QM atoms and on the MM charges against five-point finite differences of the potential energy
  the Context reports (h = 1e-4 nm). The engine's gradient is the exact derivative of its energy (XC grid
  moving with the atoms, partition-weight derivatives included; checked to 1e-8 hartree/bohr against finite
  differences and to 5e-8 against PySCF's grad.rks in qmengine/tests), so the bound is the differences' own
  error: 2e-3 kJ/mol/nm (seen: ~1e-5).
- NVE dynamics of a QM water among MM waters conserves the total energy.
- Force groups, and the periodic cutoff (forces on the particles of imaged molecules).
"""

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft
from test_qm_region import buildSystem, watersAround

pytest.importorskip("pyscf")  # only for test_qm_region's helpers' imports

KJ = unit.kilojoule_per_mole
H = 1e-4  # nm


def energyAt(context, positions):
    context.setPositions(positions)
    return context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ)


def fivePoint(context, positions, particle, axis):
    def at(x):
        moved = positions.copy()
        moved[particle, axis] += x
        return energyAt(context, moved)
    return (-at(2 * H) + 8 * at(H) - 8 * at(-H) + at(-2 * H)) / (12 * H)


@pytest.mark.parametrize("platformName", ["Reference", "CPU"])
def test_forces_match_finite_differences(platformName):
    waters = watersAround([(0.29, 0.05, 0.0), (-0.1, 0.3, 0.12)])
    system, force, positions = buildSystem(waters, exact=False, energyOnly=False, grid=(40, 110))
    force.setSCFConvergence(1e-10)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName(platformName))
    context.setPositions(positions)
    forces = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    worst = 0.0
    for particle in range(len(positions)):
        for axis in range(3):
            numeric = -fivePoint(context, positions, particle, axis)
            worst = max(worst, abs(numeric - forces[particle, axis]))
    print("max |F - F_fd| = %.2e kJ/mol/nm" % worst)
    assert worst < 2e-3
    # The QM region is neutral and isolated with the MM waters (NoCutoff): the forces sum to zero.
    assert np.abs(forces.sum(axis=0)).max() < 1e-6


def test_exact_coulomb_forces_match_finite_differences():
    """Exact (non-fitted) Coulomb, through the Context: the QM atoms and an MM water, five-point differences."""
    system, force, positions = buildSystem(watersAround([(0.29, 0.05, 0.0)]), exact=True, energyOnly=False, grid=(40, 110))
    force.setSCFConvergence(1e-10)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("CPU"))
    context.setPositions(positions)
    forces = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    worst = max(abs(-fivePoint(context, positions, particle, axis) - forces[particle, axis])
                for particle in range(len(positions)) for axis in range(3))
    print("max |F - F_fd| = %.2e kJ/mol/nm" % worst)
    assert worst < 2e-3


def mdSystem():
    """A QM water among four MM waters (flexible: harmonic bonds and angles for the MM waters, TIP3P
    Lennard-Jones on the oxygens, QM-MM too, as QM/MM codes do)."""
    waters = watersAround([(0.29, 0.0, 0.0), (-0.29, 0.0, 0.0), (0.0, 0.29, 0.0), (0.0, 0.0, -0.29)])
    system, force, positions = buildSystem(waters, exact=False, energyOnly=False, grid=(40, 110))
    force.setSCFConvergence(1e-9)
    bonds, angles = mm.HarmonicBondForce(), mm.HarmonicAngleForce()
    for w in range(1, 5):
        o = 3 * w
        bonds.addBond(o, o + 1, 0.09572, 462750.4)
        bonds.addBond(o, o + 2, 0.09572, 462750.4)
        angles.addAngle(o + 1, o, o + 2, 1.82421813418, 836.8)
    system.addForce(bonds)
    system.addForce(angles)
    lj = mm.NonbondedForce()
    for i in range(system.getNumParticles()):
        lj.addParticle(0.0, 0.315061, 0.636386 if i % 3 == 0 else 0.0)
    lj.createExceptionsFromBonds([(3 * w, 3 * w + k) for w in range(5) for k in (1, 2)], 0.0, 0.0)
    system.addForce(lj)
    for i in range(system.getNumParticles()):
        system.setParticleMass(i, 15.999 if i % 3 == 0 else 1.008)
    return system, positions


def totalEnergyRange(timeStep, steps):
    system, positions = mdSystem()
    integrator = mm.VerletIntegrator(timeStep)
    context = mm.Context(system, integrator, mm.Platform.getPlatformByName("CPU"))
    context.setPositions(positions)
    context.setVelocitiesToTemperature(300, 11)
    totals, kinetic = [], []
    for _ in range(20):
        integrator.step(steps // 20)
        state = context.getState(getEnergy=True)
        k = state.getKineticEnergy().value_in_unit(KJ)
        totals.append(k + state.getPotentialEnergy().value_in_unit(KJ))
        kinetic.append(k)
    return np.ptp(totals), np.ptp(kinetic)


def test_nve_dynamics_conserves_energy():
    """100 fs of velocity Verlet at 0.5 and 0.25 fs. With consistent forces the total energy only fluctuates
    by Verlet's own O(dt^2) error: the range shrinks about 4x when the step halves (seen: 0.32 -> 0.077 kJ/mol),
    while a force that is not the energy's derivative would leave a step-independent drift."""
    coarse, kinetic = totalEnergyRange(0.0005, 200)
    fine, _ = totalEnergyRange(0.00025, 400)
    print("total energy range %.4f (0.5 fs), %.4f (0.25 fs) kJ/mol; kinetic range %.1f" % (coarse, fine, kinetic))
    assert kinetic > 10.0  # things do move
    assert fine < 0.15
    assert coarse / fine > 3.0


def test_force_groups_and_energy_only_mode():
    waters = watersAround([(0.3, 0.0, 0.0)])
    system, force, positions = buildSystem(waters, exact=False, energyOnly=False, grid=(40, 110))
    force.setForceGroup(3)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    withForces = context.getState(getForces=True, groups={3}).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    assert np.abs(withForces[:3]).max() > 10.0  # the QM water feels its own forces
    none = context.getState(getForces=True, groups={0}).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    assert np.abs(none).max() == 0.0
    # Energy-only mode: the same energy, no QM forces (only the MM-MM Coulomb, zero here: one MM molecule).
    e1 = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ)
    force.setQMEnergyOnly(True)
    force.updateParametersInContext(context)
    e2 = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ)
    assert e2 == pytest.approx(e1, abs=1e-6)
    with pytest.raises(mm.OpenMMException, match="cannot be used for dynamics"):
        context.getIntegrator().step(1)


def test_periodic_cutoff_forces_act_on_imaged_particles():
    """A molecule across the box face enters the QM Hamiltonian as an image; its forces act on the particles
    themselves (translation invariance of the box), so finite differences of the particles match."""
    box = 1.3  # QM extent (0.15 nm) + 2 x cutoff must fit
    waters = watersAround([(0.45, 0.0, 0.0)])
    waters[0][:, 0] -= box  # put the MM water at its image on the other side: x around -0.75 nm
    system, force, positions = buildSystem(waters, method=openmmdft.QMMMForce.CutoffPeriodic, cutoff=0.55, box=box,
                                           exact=False, energyOnly=False, grid=(40, 110))
    force.setSCFConvergence(1e-10)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    forces = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    assert force.getQMResults(context)["numMMCharges"] == 3
    worst = max(abs(-fivePoint(context, positions, p, a) - forces[p, a]) for p in range(3, 6) for a in range(3))
    assert worst < 2e-3
