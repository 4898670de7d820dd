"""The SCF's starting density along MD (QMMMForce.setDensityExtrapolation): ASPC (Kolafa 2004) against
PreviousDensity on the same trajectory. The converged energies must not depend on the guess (tolerance:
the SCF's own, 1e-9 in the orbital gradient gives ~1e-10 Eh here; checked at 1e-6 kJ/mol), ASPC must take
fewer SCF iterations, and the history must restart where the trajectory is broken."""

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft
from test_qm_forces import mdSystem
from test_qm_region import buildSystem, watersAround

KJ = unit.kilojoule_per_mole
QMMMForce = openmmdft.QMMMForce


def qmForce(system):
    return [f for f in system.getForces() if isinstance(f, QMMMForce)][0]


def run(method, order=3, steps=10, recycled=None, response=None):
    system, positions = mdSystem()
    force = qmForce(system)
    force.setDensityExtrapolation(method, order)
    if recycled is not None:
        force.setRecycledSubspaceSize(recycled)
    if response is not None:
        force.setCoulombResponseSteps(response)
    integrator = mm.VerletIntegrator(0.0005)
    context = mm.Context(system, integrator, mm.Platform.getPlatformByName("CPU"))
    context.setPositions(positions)
    context.setVelocitiesToTemperature(300, 5)
    energies, iterations, used, pairs = [], [], [], []
    for _ in range(steps):
        integrator.step(1)
        r = force.getQMResults(context)
        energies.append(r["totalEnergy"].value_in_unit(KJ))
        iterations.append(r["scfIterations"])
        used.append(r["extrapolatedDensities"])
        pairs.append(r["recycledDIISPairs"])
    run.recycledPairs = pairs
    return np.array(energies), iterations, used, (system, force, context, integrator)


def test_default_and_validation():
    force = QMMMForce()
    assert force.getDensityExtrapolation() == QMMMForce.ASPC
    assert force.getDensityExtrapolationOrder() == 3
    force.setDensityExtrapolation(QMMMForce.PreviousDensity)
    assert force.getDensityExtrapolation() == QMMMForce.PreviousDensity
    for order in (0, 7):
        with pytest.raises(mm.OpenMMException, match="order must be between 1 and 6"):
            force.setDensityExtrapolation(QMMMForce.ASPC, order)
    with pytest.raises(mm.OpenMMException, match="between 3 and 7 for XLBOMD"):
        force.setDensityExtrapolation(QMMMForce.XLBOMD, 2)
    with pytest.raises(mm.OpenMMException, match="between 1 and 6 for PolynomialExtrapolation"):
        force.setDensityExtrapolation(QMMMForce.PolynomialExtrapolation, 7)
    for method in (QMMMForce.ASPC, QMMMForce.PolynomialExtrapolation):
        force.setDensityExtrapolation(method, 5)
        copy = mm.XmlSerializer.deserialize(mm.XmlSerializer.serialize(force))
        assert (copy.getDensityExtrapolation(), copy.getDensityExtrapolationOrder()) == (method, 5)


def test_aspc_takes_fewer_iterations_and_gives_the_same_energies():
    previous, previousIterations, previousUsed, _ = run(QMMMForce.PreviousDensity, recycled=0)
    aspc, aspcIterations, aspcUsed, _ = run(QMMMForce.ASPC, 3, recycled=0)
    print("SCF iterations per step: PreviousDensity %s, ASPC(3) %s" % (previousIterations, aspcIterations))
    assert np.abs(aspc - previous).max() < 1e-6
    assert previousUsed == [0] + [1] * (len(previousUsed) - 1)
    # The first step reuses the Context's evaluation at x(0) (setVelocitiesToTemperature made it, from atomic
    # densities), then the history fills up to order + 1 densities.
    assert aspcUsed[:6] == [0, 1, 2, 3, 4, 4]
    # The first steps are alike (one past density); afterwards ASPC saves iterations.
    assert sum(aspcIterations[3:]) < sum(previousIterations[3:])


def test_recycled_diis_subspace_takes_fewer_iterations_and_gives_the_same_energies():
    # The default: the previous steps' DIIS pairs join each step's SCF (Krylov-subspace recycling).
    assert QMMMForce().getRecycledSubspaceSize() == 96
    with pytest.raises(mm.OpenMMException, match="must not be negative"):
        QMMMForce().setRecycledSubspaceSize(-1)
    plain, plainIterations, _, _ = run(QMMMForce.ASPC, 3, steps=12, recycled=0)
    assert run.recycledPairs == [0] * 12
    recycled, recycledIterations, _, _ = run(QMMMForce.ASPC, 3, steps=12)
    print("SCF iterations per step: plain DIIS %s, recycled subspace %s" % (plainIterations, recycledIterations))
    assert np.abs(recycled - plain).max() < 1e-6
    # From the second step on the SCF has pairs (the first reuses the evaluation at x(0)).
    assert all(p > 0 for p in run.recycledPairs[2:])
    # Measured 7-8 iterations per step without, 3-5 with (benchmarks/bench_scf_iterations.py); at least one fewer
    # per step over the last 8 steps.
    assert sum(recycledIterations[4:]) <= sum(plainIterations[4:]) - 8


def test_coulomb_response_step_takes_fewer_iterations_and_gives_the_same_energies():
    # The default: after each DIIS step the orbitals are corrected for the Coulomb response (CoulombResponse.h).
    assert QMMMForce().getCoulombResponseSteps() == 2
    with pytest.raises(mm.OpenMMException, match="must not be negative"):
        QMMMForce().setCoulombResponseSteps(-1)
    plain, plainIterations, _, _ = run(QMMMForce.ASPC, 3, steps=10, response=0)
    corrected, correctedIterations, _, _ = run(QMMMForce.ASPC, 3, steps=10)
    print("SCF iterations per step: without the response step %s, with it %s" % (plainIterations, correctedIterations))
    assert np.abs(corrected - plain).max() < 1e-6
    assert sum(correctedIterations) < sum(plainIterations)


def test_polynomial_extrapolation_takes_fewer_iterations_than_aspc_and_gives_the_same_energies():
    # Without the recycled subspace the guess alone decides the first iterations: the polynomial through 6 densities
    # starts an order of magnitude closer than ASPC (docs/QMMM-MD.md).
    aspc, aspcIterations, _, _ = run(QMMMForce.ASPC, 3, steps=12, recycled=0)
    polynomial, polynomialIterations, used, _ = run(QMMMForce.PolynomialExtrapolation, 5, steps=12, recycled=0)
    print("SCF iterations per step: ASPC(3) %s, PolynomialExtrapolation(5) %s" % (aspcIterations, polynomialIterations))
    assert np.abs(polynomial - aspc).max() < 1e-6
    assert used[-1] == 6
    assert sum(polynomialIterations[7:]) < sum(aspcIterations[7:])


def test_xlbomd_gives_the_same_energies():
    previous, previousIterations, _, _ = run(QMMMForce.PreviousDensity)
    xlbomd, xlbomdIterations, used, _ = run(QMMMForce.XLBOMD, 5)
    print("SCF iterations per step: PreviousDensity %s, XLBOMD(5) %s" % (previousIterations, xlbomdIterations))
    assert np.abs(xlbomd - previous).max() < 1e-6
    assert used[-1] == 5


def test_history_restarts_where_the_trajectory_breaks():
    _, _, used, (system, force, context, integrator) = run(QMMMForce.ASPC, 3, steps=5)
    assert used[-1] == 4
    # getState between steps evaluates the next point early (the step then reuses that evaluation): the history
    # stays.
    context.getState(getEnergy=True, getForces=True)
    integrator.step(2)
    assert force.getQMResults(context)["extrapolatedDensities"] == 4
    # setPositions: the last density alone, then the history fills again.
    state = context.getState(getPositions=True)
    context.setPositions(state.getPositions(asNumpy=True) + 0.01 * unit.nanometer)
    integrator.step(1)
    assert force.getQMResults(context)["extrapolatedDensities"] == 1
    integrator.step(2)
    assert force.getQMResults(context)["extrapolatedDensities"] == 2
    # A checkpoint from an earlier step.
    checkpoint = context.createCheckpoint()
    integrator.step(3)
    context.loadCheckpoint(checkpoint)
    integrator.step(1)
    assert force.getQMResults(context)["extrapolatedDensities"] == 1
    # New parameters: no density of the old settings is reused.
    force.setSCFConvergence(1e-8)
    force.updateParametersInContext(context)
    integrator.step(1)
    assert force.getQMResults(context)["extrapolatedDensities"] == 0


def test_history_continues_when_a_molecule_enters_the_cutoff():
    """An MM water crossing the cutoff changes the embedding, not the trajectory: the extrapolation and the recycled
    DIIS pairs go on (once such a step restarted both, a quarter of the steps of a water in a TIP3P box at 0.8 nm)."""
    system, force, positions = buildSystem(watersAround([(0.29, 0.0, 0.0), (0.0, 0.765, 0.0)]), exact=False,
                                           energyOnly=False, grid=(30, 110), method=QMMMForce.CutoffNonPeriodic,
                                           cutoff=0.6)
    force.setSCFConvergence(1e-8)
    integrator = mm.VerletIntegrator(0.0005)
    context = mm.Context(system, integrator, mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    velocities = np.zeros((system.getNumParticles(), 3))
    velocities[6:9] = (0.0, -12.0, 0.0)  # the far water comes in, 0.006 nm per step
    context.setVelocities(velocities)
    charges, used, pairs = [], [], []
    for _ in range(8):
        integrator.step(1)
        r = force.getQMResults(context)
        charges.append(r["numMMCharges"])
        used.append(r["extrapolatedDensities"])
        pairs.append(r["recycledDIISPairs"])
    entered = [k for k in range(1, 8) if charges[k] != charges[k - 1]]
    assert len(entered) == 1 and charges[entered[0]] > charges[entered[0] - 1], charges  # the test's premise
    assert used[entered[0]] == min(entered[0], 4) and pairs[entered[0]] > 0, (used, pairs, entered)
