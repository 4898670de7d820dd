"""Energy minimization (OpenMM's LocalEnergyMinimizer, L-BFGS) with a QM region.

L-BFGS tries long first steps (the first trial moves all atoms by 1 nm in total along the gradient), at
geometries where the SCF can fail. Two mechanisms make minimization work:
- the SCF restarts from the atomic densities with a level shift and damping, then from the core guess with a
  larger shift, before it gives up;
- inside the minimizer only, an SCF that still fails returns +infinity, which L-BFGS's line search treats
  as a rejected trial step (it halves the step); outside the minimizer the same failure raises.

Checks: the minimized geometry is a minimum of the QMMMForce energy (the RMS force component below the
minimizer's tolerance, 10 kJ/mol/nm, with 20% margin for its last line search), the energy went down, and the QM water has a sensible geometry (O-H 0.095-0.105 nm, H-O-H 95-115 degrees; LDA
6-31G gives about 0.0975 nm and 104 degrees).
"""

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft
from test_qm_forces import mdSystem
from test_qm_region import buildSystem, watersAround

KJ = unit.kilojoule_per_mole


def waterGeometry(positions):
    o, h1, h2 = positions[:3]
    d1, d2 = h1 - o, h2 - o
    r1, r2 = np.linalg.norm(d1), np.linalg.norm(d2)
    return r1, r2, np.degrees(np.arccos(d1 @ d2 / (r1 * r2)))


def minimize(system, positions):
    context = mm.Context(system, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName("CPU"))
    context.setPositions(positions)
    before = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ)
    mm.LocalEnergyMinimizer.minimize(context, 10.0, 0)
    state = context.getState(getEnergy=True, getForces=True, getPositions=True)
    return (context, before, state.getPotentialEnergy().value_in_unit(KJ),
            state.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer),
            state.getPositions(asNumpy=True).value_in_unit(unit.nanometer))


def qmForce(system):
    return next(f for f in system.getForces() if isinstance(f, openmmdft.QMMMForce))


def test_minimize_qm_water_among_mm_waters():
    system, positions = mdSystem()
    qmForce(system).setBasisSet("6-31G")
    context, before, after, forces, final = minimize(system, positions)
    print("energy %.3f -> %.3f kJ/mol, max |F| %.2f kJ/mol/nm, water %s" % (before, after, np.abs(forces).max(),
                                                                           waterGeometry(final)))
    assert after < before
    assert np.isfinite(forces).all() and np.sqrt(np.mean(forces**2)) < 12.0
    r1, r2, angle = waterGeometry(final)
    assert 0.095 < r1 < 0.105 and 0.095 < r2 < 0.105 and 95 < angle < 115


def test_minimize_from_a_distorted_geometry():
    """O-H bonds stretched to 0.16 and 0.13 nm, the angle opened to 150 degrees, an MM water too close."""
    system, force, positions = buildSystem(watersAround([(0.26, 0.05, 0.0)]), basis="6-31g", exact=False,
                                           energyOnly=False, grid=(40, 110))
    lj = mm.NonbondedForce()
    for i in range(system.getNumParticles()):
        lj.addParticle(0.0, 0.315061, 0.636386 if i % 3 == 0 else 0.0)
    lj.createExceptionsFromBonds([(3 * w, 3 * w + k) for w in range(2) for k in (1, 2)], 0.0, 0.0)
    system.addForce(lj)
    bonds = mm.HarmonicBondForce()
    bonds.addBond(3, 4, 0.09572, 462750.4)
    bonds.addBond(3, 5, 0.09572, 462750.4)
    system.addForce(bonds)
    positions = positions.copy()
    half = np.radians(75)
    positions[1] = positions[0] + 0.16 * np.array([0, np.sin(half), -np.cos(half)])
    positions[2] = positions[0] + 0.13 * np.array([0, -np.sin(half), -np.cos(half)])
    context, before, after, forces, final = minimize(system, positions)
    print("energy %.3f -> %.3f kJ/mol, max |F| %.2f kJ/mol/nm, water %s" % (before, after, np.abs(forces).max(),
                                                                           waterGeometry(final)))
    assert after < before - 100.0  # stretched bonds cost hundreds of kJ/mol
    assert np.isfinite(forces).all() and np.sqrt(np.mean(forces**2)) < 12.0
    r1, r2, angle = waterGeometry(final)
    assert 0.095 < r1 < 0.105 and 0.095 < r2 < 0.105 and 95 < angle < 115


def test_scf_failure_outside_the_minimizer_still_raises():
    """The +infinity of a rejected trial step is for the minimizer only: a single point, with the Verlet
    integrator asking for forces to compute the kinetic energy, raises as before."""
    system, force, positions = buildSystem(watersAround([(0.3, 0.0, 0.0)]), basis="sto-3g", exact=False,
                                           energyOnly=False, grid=(30, 110))
    force.setMaxSCFIterations(2)
    context = mm.Context(system, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    for forces in (False, True):
        with pytest.raises(mm.OpenMMException, match="SCF did not converge"):
            context.getState(getEnergy=True, getForces=forces)
    with pytest.raises(mm.OpenMMException, match="SCF did not converge"):
        context.getIntegrator().step(1)


def test_scf_failure_at_the_minimizers_start_raises():
    """The starting point cannot be a rejected trial step: an SCF that fails there (at most 2 iterations, a
    tight threshold) stops the minimizer with an error that names the SCF failure."""
    system, force, positions = buildSystem(watersAround([(0.3, 0.0, 0.0)]), basis="sto-3g", exact=False,
                                           energyOnly=False, grid=(30, 110))
    force.setMaxSCFIterations(2)
    context = mm.Context(system, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    with pytest.raises(mm.OpenMMException, match="SCF did not converge"):
        mm.LocalEnergyMinimizer.minimize(context, 1.0, 5)
