"""Hostile and careless use of QMMMForce that once gave silently wrong results, and now raises a clear
OpenMMException or gives the right answer (see docs/VALIDATION.md for the whole list):

- energy-only mode refuses integrator steps (CustomIntegrators that ask for energy and forces included) and
  energy minimization, and gives NaN forces on the QM atoms to getState(getEnergy=True, getForces=True);
- updateParametersInContext: every setter either gives what a fresh Context gives (energy to 1e-6
  kJ/mol, forces to 1e-5 kJ/mol/nm: the same arithmetic from the same starting density) or is refused
  with nothing changed;
- getQMResults after a failed evaluation raises instead of returning the previous geometry's results;
- an MM charge on a nucleus, setMaxSCFIterations(1), the CPU platform's Threads property (and the same bits on
  every evaluation with threads), and the default platform.
"""

import os

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft
from pme_partner import addPMENonbondedForce
from test_qm_region import addWaters, buildSystem, watersAround

KJ = unit.kilojoule_per_mole
QMMMForce = openmmdft.QMMMForce


def smallSystem(energyOnly=False):
    """A QM water (STO-3G, density fitting, small grid) with two MM waters, no cutoff."""
    system, force, positions = buildSystem(watersAround([(0.3, 0.0, 0.0), (-0.05, 0.31, 0.1)]), basis="sto-3g",
                                           exact=False, energyOnly=energyOnly, grid=(30, 110))
    return system, force, positions


def contextFor(system, positions, platform="Reference", properties=None):
    platform = mm.Platform.getPlatformByName(platform)
    context = mm.Context(system, mm.VerletIntegrator(0.0005), platform, properties or {})
    context.setPositions(positions)
    return context


def energyAndForces(context, forces=True):
    state = context.getState(getEnergy=True, getForces=forces)
    energy = state.getPotentialEnergy().value_in_unit(KJ)
    return energy, (state.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer) if forces else None)


# ---- Energy-only mode --------------------------------------------------------------------------

def test_energy_only_refuses_the_minimizer():
    system, force, positions = smallSystem(energyOnly=True)
    context = contextFor(system, positions)
    context.getState(getEnergy=True)  # a single point is what the mode is for
    with pytest.raises(mm.OpenMMException, match="energy-only mode"):
        mm.LocalEnergyMinimizer.minimize(context, 1.0, 20)


def test_energy_only_refuses_a_custom_integrator_that_asks_for_energy_and_forces():
    system, force, positions = smallSystem(energyOnly=True)
    integrator = mm.CustomIntegrator(0.0005)
    integrator.addGlobalVariable("e", 0)
    integrator.addComputeGlobal("e", "energy")
    integrator.addComputePerDof("v", "v + dt*f/m")
    integrator.addComputePerDof("x", "x + dt*v")
    context = mm.Context(system, integrator, mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    with pytest.raises(mm.OpenMMException, match="energy-only mode"):
        integrator.step(1)


def test_energy_only_gives_nan_forces_on_qm_atoms_and_refuses_integrators():
    system, force, positions = smallSystem(energyOnly=True)
    context = contextFor(system, positions)
    energyOnly = context.getState(getEnergy=True).getPotentialEnergy()
    state = context.getState(getEnergy=True, getForces=True)
    assert state.getPotentialEnergy().value_in_unit(KJ) == pytest.approx(energyOnly.value_in_unit(KJ), abs=1e-6)
    forces = state.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)
    assert np.isnan(forces[:3]).all() and np.isfinite(forces[3:]).all()
    with pytest.raises(mm.OpenMMException, match="energy-only mode"):
        context.getState(getForces=True)
    with pytest.raises(mm.OpenMMException, match="energy-only mode"):
        context.getIntegrator().step(1)


# ---- updateParametersInContext -----------------------------------------------------------------

WATER_O, MM_O = 0, 3  # particle indices: the QM oxygen, the first MM oxygen

ACCEPTED = {
    "mm charge": lambda f: f.setParticleParameters(MM_O, -0.9),
    "qm atom's mm charge": lambda f: f.setParticleParameters(WATER_O, 0.3),
    "1-4 scale": lambda f: f.setCoulomb14Scale(0.8),
    "qm charge": lambda f: f.setQMCharge(-2),
    "basis set": lambda f: f.setBasisSet("6-31G"),
    "angular functions": lambda f: (f.setBasisSet("6-31G*"), f.setAngularFunctions(QMMMForce.Spherical)),
    "auxiliary basis": lambda f: f.setAuxiliaryBasisSet("DGauss-A1-DFT-Cfit"),
    "functional": lambda f: f.setFunctional("SVWN_RPA"),
    "grid": lambda f: f.setGrid(40, 146),
    "radial scheme": lambda f: f.setRadialScheme(QMMMForce.BeckeChebyshev),
    "atomic partition": lambda f: f.setAtomicPartition(QMMMForce.StratmannScuseriaFrisch),
    "grid pruning": lambda f: f.setGridPruning(QMMMForce.NWChemPruning),
    "grid grouping": lambda f: f.setGridGrouping(0.2 * unit.nanometer, 0.5),
    "significance threshold": lambda f: f.setSignificanceThreshold(12.0),
    "basis function storage": lambda f: f.setBasisFunctionStorage(QMMMForce.Recompute),
    "basis storage limit": lambda f: f.setBasisStorageLimit(0.01),
    "scf convergence": lambda f: f.setSCFConvergence(1e-10),
    "max scf iterations": lambda f: f.setMaxSCFIterations(40),
    "diis subspace": lambda f: f.setDIISSubspaceSize(4),
    "recycled diis subspace": lambda f: f.setRecycledSubspaceSize(0),
    "coulomb response": lambda f: f.setCoulombResponseSteps(0),
    "energy-only mode": lambda f: f.setQMEnergyOnly(True),
    "esp charges": lambda f: f.setESPChargeMethod(QMMMForce.CHELPG),
    "exact coulomb": lambda f: f.setCoulombMethod(QMMMForce.Exact),
    "density extrapolation": lambda f: f.setDensityExtrapolation(QMMMForce.PreviousDensity),
}

# Settings that change the energy (the others change how it is computed, not what it is).
CHANGE_THE_ENERGY = ("mm charge", "qm charge", "basis set", "angular functions", "auxiliary basis", "functional", "grid",
                     "radial scheme", "atomic partition", "exact coulomb")

REFUSED = {
    "nonbonded method": (lambda f: (f.setNonbondedMethod(QMMMForce.CutoffNonPeriodic), f.setCutoffDistance(0.6)),
                         "fixed for the life of a Context"),
    "cutoff": (lambda f: f.setCutoffDistance(0.7), "fixed for the life of a Context"),
    "reaction-field dielectric": (lambda f: f.setReactionFieldDielectric(10.0), "fixed for the life of a Context"),
    "bond": (lambda f: f.addBond(3, 6), "bond graph has changed"),
    "qm atom": (lambda f: f.addQMAtom(6, 8), "QM atoms have changed"),
    "particle": (lambda f: f.addParticle(0.0), "number of particles"),
    "odd electron count": (lambda f: f.setQMCharge(1), "odd number of electrons"),
    "unknown basis with a new charge": (lambda f: (f.setParticleParameters(MM_O, -0.9), f.setBasisSet("no-such-basis")),
                                        "no-such-basis"),
    "unknown auxiliary basis with energy-only mode": (lambda f: (f.setQMEnergyOnly(True),
                                                                 f.setAuxiliaryBasisSet("no-such-fit")), "no-such-fit"),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_update_matches_a_fresh_context(name):
    system, force, positions = smallSystem()
    context = contextFor(system, positions)
    before = energyAndForces(context)
    ACCEPTED[name](force)
    force.updateParametersInContext(context)
    updated = energyAndForces(context)
    fresh = energyAndForces(contextFor(system, positions))
    assert abs(updated[0] - fresh[0]) < 1e-6
    results = force.getQMResults(context)
    assert results["xcBackend"] == "host"  # Reference: the XC work and the DF contractions run on the host
    assert results["coulombContractions"] == "host"
    assert (results["densityFittingBytes"] > 0) == (force.getCoulombMethod() == openmmdft.QMMMForce.DensityFitting)
    assert np.array_equal(np.isnan(updated[1]), np.isnan(fresh[1]))  # energy-only mode: NaN on the QM atoms in both
    finite = np.isfinite(fresh[1])
    assert np.abs(updated[1][finite] - fresh[1][finite]).max() < 1e-5 + 1e-9 * np.abs(fresh[1][finite]).max()
    if name == "esp charges":
        charges = force.getQMResults(context)["espCharges"]
        assert len(charges) == 3 and charges[0].value_in_unit(unit.elementary_charge) < -0.1
    if name in CHANGE_THE_ENERGY:
        assert abs(updated[0] - before[0]) > 1e-6, "the setter must change the energy for this test to mean anything"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_update_changes_nothing(name):
    system, force, positions = smallSystem()
    context = contextFor(system, positions)
    before = energyAndForces(context)
    change, message = REFUSED[name]
    change(force)
    with pytest.raises(mm.OpenMMException, match=message):
        force.updateParametersInContext(context)
    context.setPositions(positions)  # a new evaluation, from the converged density (not the first one's guess)
    after = energyAndForces(context)  # forces too: energy-only mode was not applied
    assert abs(after[0] - before[0]) < 1e-6
    assert np.abs(after[1] - before[1]).max() < 1e-4  # the SCF convergence (1e-9) from two starting densities


# ---- Results, charges on nuclei, SCF settings, threads -------------------------------------------

def test_qm_results_after_a_failed_evaluation_raise():
    system, force, positions = smallSystem()
    context = contextFor(system, positions)
    energyAndForces(context)
    assert force.getQMResults(context)["scfIterations"] > 0
    bad = positions.copy()
    bad[1] = np.nan
    context.setPositions(bad)
    with pytest.raises(mm.OpenMMException, match="NaN"):
        context.getState(getEnergy=True)
    with pytest.raises(mm.OpenMMException, match="last QM computation in this Context failed"):
        force.getQMResults(context)
    context.setPositions(positions)
    energyAndForces(context)
    assert force.getQMResults(context)["scfIterations"] > 0


@pytest.mark.parametrize("platform", ["Reference", "OpenCL"])
def test_nan_position_in_a_periodic_box_names_every_particle_it_reached(platform):
    # OpenCL moves each molecule into the periodic box whole, so a NaN in one MM atom's position reaches the other
    # atoms of its water; the error must list them all (it once named only the first, not the atom that was set).
    if platform not in [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]:
        pytest.skip(platform + " is not available")
    system, force, positions = buildSystem(watersAround([(0.3, 0.0, 0.0), (-0.05, 0.31, 0.1)]), basis="sto-3g", exact=False,
                                           method=QMMMForce.CutoffPeriodic, cutoff=0.7, box=2.0, grid=(30, 110), energyOnly=False)
    bad = positions.copy()
    bad[5, 1] = np.nan  # the second H of the first MM water (particles 3-5), in a new Context
    context = contextFor(system, bad, platform)
    expected = "particle 5 is" if platform == "Reference" else "particles 3, 4, 5 are"
    with pytest.raises(mm.OpenMMException, match=expected + " NaN or infinite"):
        context.getState(getEnergy=True)


def test_mm_charge_on_a_nucleus_is_named():
    system, force, positions = smallSystem()
    bad = positions.copy()
    bad[MM_O + 1] = bad[WATER_O]  # an MM hydrogen exactly on the QM oxygen
    context = contextFor(system, bad)
    with pytest.raises(mm.OpenMMException, match="sits on the nucleus of QM atom 0"):
        context.getState(getEnergy=True)


def test_basis_storage_limit_recomputes_with_a_notice():
    """Precompute beyond its memory limit recomputes the rest (same energy) and says so; a limit must be positive."""
    system, force, positions = smallSystem()
    full = energyAndForces(contextFor(system, positions))
    force.setBasisStorageLimit(0.001)
    context = contextFor(system, positions)
    limited = energyAndForces(context)
    results = force.getQMResults(context)
    assert "recomputed" in results["basisStorageNotice"]
    assert abs(limited[0] - full[0]) < 1e-6
    with pytest.raises(mm.OpenMMException, match="basis storage limit"):
        force.setBasisStorageLimit(0)


def test_one_scf_iteration_is_refused():
    with pytest.raises(mm.OpenMMException, match="at least 2"):
        QMMMForce().setMaxSCFIterations(1)
    QMMMForce().setMaxSCFIterations(2)


# Run in a fresh interpreter, so that no earlier test has started the engine's worker threads: the thread ids of the
# process after context creation, after the first evaluation and during a later one.
_THREADS_SCRIPT = r"""
import json, os, sys, threading, time
sys.path.insert(0, sys.argv[1])
from test_reliability import contextFor
from test_qm_region import buildSystem, watersAround

def tids():
    return set(os.listdir("/proc/self/task"))

def seenDuring(call):
    seen, done = set(tids()), threading.Event()
    def sample():
        while not done.is_set():
            seen.update(tids())
            time.sleep(0.0002)
    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        call()
    finally:
        done.set()
        sampler.join()
    return seen - {str(sampler.native_id)}

system, force, positions = buildSystem(watersAround([(0.3, 0.0, 0.0)]), basis="6-31gs", exact=False,
                                       energyOnly=True, grid=(50, 194))
result = {}
for threads in ("1", "2"):
    context = contextFor(system, positions, "CPU", {"Threads": threads})
    created = tids()
    context.getState(getEnergy=True)
    first = tids()
    context.setPositions(positions + 1e-4)
    later = seenDuring(lambda: context.getState(getEnergy=True))
    result[threads] = {"startedByFirst": len(first - created), "startedByLater": len(later - first),
                       "endedByFirst": len(created - first)}
print(json.dumps(result))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2, reason="needs Linux and 2 cores")
def test_qm_engine_honours_the_cpu_threads_property():
    """The engine's parallel loops run on the CPU platform's Threads (the caller and Threads - 1 workers), and on
    workers started once and kept: a later evaluation starts no thread."""
    import json
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT, os.path.dirname(os.path.abspath(__file__))],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    print(result)
    assert result["1"]["startedByFirst"] == 0  # Threads = 1: the engine works on the caller's thread alone
    assert result["2"]["startedByFirst"] == 1  # Threads = 2: one worker beside the caller
    assert result["1"]["startedByLater"] == 0 and result["2"]["startedByLater"] == 0  # kept, not started again
    assert result["2"]["endedByFirst"] == 0


def test_default_platform_computes_the_qm_region():
    """A Context created without naming a platform gets the fastest one (OpenCL or CUDA where present),
    which computes the QM region as Reference does (it once refused QM atoms)."""
    system, force, positions = smallSystem()
    context = mm.Context(system, mm.VerletIntegrator(0.0005))
    context.setPositions(positions)
    energy = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ)
    reference = energyAndForces(contextFor(system, positions))[0]
    print("default platform:", context.getPlatform().getName())
    assert abs(energy - reference) < 1e-3  # the MM pair kernels may run in single precision there


@pytest.mark.parametrize("platform", ["Reference", "CPU", "OpenCL"])
@pytest.mark.parametrize("method", ["NoCutoff", "CutoffNonPeriodic"])
def test_pairs_without_interaction_at_zero_distance_are_skipped(platform, method):
    # A bonded (excluded) pair at r = 0, as a Drude particle on its parent, and a pair of zero charges at r = 0
    # contribute nothing; 0 * (1/0) must not turn the energy into NaN. The reference is NonbondedForce with the
    # excluded pair and the zero charges apart (NonbondedForce itself gives NaN for zero charges at r = 0).
    if platform not in [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]:
        pytest.skip(platform + " is not available")
    positions = [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.8, 0.5, 0.5], [0.6, 0.7, 0.5], [0.6, 0.7, 0.5]]
    charges = [0.8, -0.8, 0.3, 0.0, 0.0]
    results = []
    for kind in ("QMMMForce", "NonbondedForce"):
        system = mm.System()
        for _ in charges:
            system.addParticle(1.0)
        if kind == "QMMMForce":
            force = QMMMForce()
            for q in charges:
                force.addParticle(q)
            force.addBond(0, 1)
            force.setNonbondedMethod(getattr(QMMMForce, method))
        else:
            force = mm.NonbondedForce()
            for q in charges:
                force.addParticle(q, 0.1, 0.0)
            force.createExceptionsFromBonds([(0, 1)], 0.5, 0.5)
            force.setNonbondedMethod(getattr(mm.NonbondedForce, method))
            force.setReactionFieldDielectric(78.3)
        force.setCutoffDistance(1.0)
        system.addForce(force)
        placed = positions if kind == "QMMMForce" else positions[:4] + [[0.2, 0.3, 0.9]]
        state = contextFor(system, placed, platform).getState(getEnergy=True, getForces=True)
        results.append((state.getPotentialEnergy().value_in_unit(KJ),
                        state.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)))
    (e, f), (eRef, fRef) = results
    assert np.isfinite(e) and np.all(np.isfinite(f))
    assert e == pytest.approx(eRef, rel=1e-5, abs=1e-4)
    assert np.abs(f - fRef).max() < 1e-3 * max(1.0, np.abs(fRef).max())


def test_mm_particle_without_charge_on_a_nucleus_changes_nothing():
    system, force, positions = smallSystem()
    reference = contextFor(system, positions).getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ)
    system.addParticle(1.0)
    force.addParticle(0.0)
    context = contextFor(system, np.vstack([positions, positions[WATER_O]]))
    assert context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ) == pytest.approx(reference, abs=1e-6)


def test_ewald_embedding_refuses_a_box_it_cannot_sum():
    system, force, positions = smallSystem()
    force.setNonbondedMethod(QMMMForce.Ewald)
    force.setCutoffDistance(0.5)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(2, 0, 0), mm.Vec3(0, 2, 0), mm.Vec3(0, 0, 2))
    addPMENonbondedForce(system, force)
    context = contextFor(system, positions)
    assert np.isfinite(context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(KJ))
    context.setPeriodicBoxVectors(mm.Vec3(2, 0, 0), mm.Vec3(0, float("nan"), 0), mm.Vec3(0, 0, 2))
    with pytest.raises(mm.OpenMMException, match="periodic box vectors are not finite"):
        context.getState(getEnergy=True)
    context.setPeriodicBoxVectors(mm.Vec3(2, 0, 0), mm.Vec3(0, 1e10, 0), mm.Vec3(0, 0, 2))
    with pytest.raises(mm.OpenMMException, match="wave vectors"):
        context.getState(getEnergy=True)
    context.setPeriodicBoxVectors(mm.Vec3(2, 0, 0), mm.Vec3(0, 2, 0), mm.Vec3(0, 0, 2))
    force.setEwaldErrorTolerance(1e-300)
    force.updateParametersInContext(context)
    with pytest.raises(mm.OpenMMException, match="wave vectors"):
        context.getState(getEnergy=True)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs 2 cores")
@pytest.mark.parametrize("method", [QMMMForce.NoCutoff, QMMMForce.CutoffPeriodic])
def test_mm_electrostatics_on_the_cpu_platform_give_the_same_bits_every_time(method):
    """The MM pair loops on the CPU platform's threads once handed out rows dynamically, so per-thread sums differed in
    the last bits from one evaluation to the next (MD runs could not be repeated exactly); rows are now assigned to
    the threads in a fixed way. 450 MM charges, 200 evaluations at the same positions, Threads = 2."""
    system, force = mm.System(), QMMMForce()
    rng = np.random.default_rng(7)
    centres = [rng.uniform(0.2, 3.8, 3) for _ in range(150)]
    waters = watersAround(centres)
    addWaters(system, force, len(waters))
    force.setNonbondedMethod(method)
    force.setCutoffDistance(0.9)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(4, 0, 0), mm.Vec3(0, 4, 0), mm.Vec3(0, 0, 4))
    system.addForce(force)
    context = contextFor(system, np.concatenate(waters), "CPU", {"Threads": "2"})
    energies, forces = set(), set()
    for _ in range(200):
        state = context.getState(getEnergy=True, getForces=True)
        energies.add(state.getPotentialEnergy().value_in_unit(KJ))
        forces.add(state.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer).tobytes())
    assert len(energies) == 1
    assert len(forces) == 1


def test_a_second_qmmm_force_is_refused():
    # Two QMMMForces would count the MM-MM Coulomb pairs twice and let each QM region see the other as MM charges
    # (they once ran as two independent calculations without a word).
    system = mm.System()
    forces = [openmmdft.QMMMForce(), openmmdft.QMMMForce()]
    for i in range(6):
        system.addParticle(1.0)
        for f in forces:
            f.addParticle((-0.8, 0.4, 0.4)[i % 3])
    forces[0].addQMAtom(0, 8)
    forces[1].addQMAtom(3, 8)
    for f in forces:
        system.addForce(f)
    for platform in ("Reference", "CPU"):
        with pytest.raises(mm.OpenMMException, match="holds 2 QMMMForces"):
            mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName(platform))


# ---- Seventh sweep (2026-11-27): every option of the Force -----------------------------------------

def test_qm_atom_far_from_the_origin_is_named():
    """A QM atom at 1e160 nm once crashed the process inside the density fitting, and at 1e20 nm gave a Cholesky
    error about a least-squares solve the user never called: positions beyond 1e6 nm are named."""
    system, force, positions = smallSystem()
    for far in (1e20, 1e160):
        moved = np.array(positions)
        moved[1] = (far, 0.0, 0.0)
        context = contextFor(system, moved)
        with pytest.raises(mm.OpenMMException, match=r"QM atom 1 \(particle 1\) is at .* must lie within 1e\+06 nm"):
            context.getState(getEnergy=True)


def test_refused_update_leaves_the_context_as_it_was():
    """A new charge together with a switching distance beyond the cutoff: the update is refused, and the QM embedding
    once kept the new charge anyway (62 kJ/mol off, the MM pair term still with the old one)."""
    system, force, positions = buildSystem(watersAround([(0.3, 0.0, 0.0), (-0.05, 0.31, 0.1)]), basis="sto-3g",
                                           exact=False, grid=(30, 110))
    force.setNonbondedMethod(QMMMForce.CutoffNonPeriodic)
    force.setCutoffDistance(0.6)
    context = contextFor(system, positions)
    before, _ = energyAndForces(context)
    force.setParticleParameters(3, -2.0)
    force.setUseEmbeddingSwitchingFunction(True)
    force.setEmbeddingSwitchingDistance(0.8)
    with pytest.raises(mm.OpenMMException, match="switching distance"):
        force.updateParametersInContext(context)
    context.setPositions(positions)  # a fresh evaluation, not the reused one
    assert energyAndForces(context)[0] == pytest.approx(before, abs=1e-6)


def test_box_check_uses_the_contexts_cutoff_and_method():
    """The Force's cutoff and method take effect at reinitialize(); the box check every evaluation once read them from
    the Force: a larger cutoff set without an update refused a valid box, and NoCutoff switched the check off."""
    system, force, positions = smallSystem()
    force.setNonbondedMethod(QMMMForce.CutoffPeriodic)
    force.setCutoffDistance(0.6)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(2, 0, 0), mm.Vec3(0, 2, 0), mm.Vec3(0, 0, 2))
    context = contextFor(system, positions)
    force.setCutoffDistance(1.5)
    assert np.isfinite(energyAndForces(context, forces=False)[0])
    force.setCutoffDistance(0.6)
    force.setNonbondedMethod(QMMMForce.NoCutoff)
    context.setPeriodicBoxVectors(mm.Vec3(1, 0, 0), mm.Vec3(0, 1, 0), mm.Vec3(0, 0, 1))
    with pytest.raises(mm.OpenMMException, match="half the periodic box width"):
        context.getState(getEnergy=True)


def test_previous_density_takes_any_order():
    """The order is documented as ignored for PreviousDensity; the Context once refused it "for ASPC"."""
    system, force, positions = smallSystem()
    force.setDensityExtrapolation(QMMMForce.PreviousDensity, 0)
    assert np.isfinite(energyAndForces(contextFor(system, positions), forces=False)[0])


def test_ewald_tolerance_must_give_a_real_splitting_parameter():
    force = QMMMForce()
    force.setEwaldErrorTolerance(0.49)
    for tolerance in (0.5, 0.75):
        with pytest.raises(mm.OpenMMException, match="between 0 and 0.5"):
            force.setEwaldErrorTolerance(tolerance)


def test_ewald_needs_a_nonbonded_force_with_the_mm_charges():
    """Ewald leaves the MM-MM Coulomb terms to a PME NonbondedForce: without one they were silently lost."""
    system, force, positions = smallSystem()
    force.setNonbondedMethod(QMMMForce.Ewald)
    force.setCutoffDistance(0.5)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(2, 0, 0), mm.Vec3(0, 2, 0), mm.Vec3(0, 0, 2))
    with pytest.raises(mm.OpenMMException, match="no NonbondedForce with PME"):
        contextFor(system, positions)
    nonbonded = addPMENonbondedForce(system, force)
    charge, sigma, epsilon = nonbonded.getParticleParameters(4)
    nonbonded.setParticleParameters(4, 2 * charge, sigma, epsilon)
    with pytest.raises(mm.OpenMMException, match="MM particle 4 has charge 0.417 here but 0.834"):
        contextFor(system, positions)


def test_link_bond_length_is_bounded():
    force = QMMMForce()
    force.setLinkAtomBondLength(6, 0.5)
    for length in (0.51, 10.0, 1e300):
        with pytest.raises(mm.OpenMMException, match="at most 0.5"):
            force.setLinkAtomBondLength(6, length)


def test_qm_charge_near_int_min_is_refused_without_overflow():
    system, force, positions = smallSystem()
    force.setQMCharge(-2147483648)
    with pytest.raises(mm.OpenMMException, match="2147483658 electrons .* more than a QM region can hold"):
        contextFor(system, positions)


def test_arguments_of_another_dimension_are_refused_and_numpy_scalars_taken():
    """A Quantity of the wrong dimension was once taken as its bare number (setCutoffDistance(1.2 kJ/mol) gave a
    1.2 nm cutoff) and numpy scalars were refused; as in OpenMM's own wrappers it is now the other way round."""
    force = QMMMForce()
    with pytest.raises(TypeError, match="not compatible with Unit"):
        force.setCutoffDistance(1.2 * unit.kilojoule_per_mole)
    with pytest.raises(TypeError, match="not compatible with Unit"):
        force.addParticle(0.4 * unit.nanometer)
    with pytest.raises(TypeError, match="plain number, not a Quantity"):
        force.setSCFConvergence(1e-8 * unit.hartree)
    force.setCutoffDistance(7 * unit.angstrom)
    assert force.getCutoffDistance().value_in_unit(unit.nanometer) == pytest.approx(0.7)
    force.setCutoffDistance(np.float32(0.8))
    assert force.getCutoffDistance().value_in_unit(unit.nanometer) == pytest.approx(0.8)
    force.setLinkAtomBondLength(6, 1.1 * unit.angstrom)
    assert force.getLinkAtomBondLength(6).value_in_unit(unit.nanometer) == pytest.approx(0.11)
    force.addParticle(np.float64(-0.8))
    force.addParticle(0.4)
    assert force.addBond(np.int64(0), np.int64(1)) == 0
    assert force.addQMAtom(np.int64(0), np.int32(8)) == 0


def test_auxiliary_shell_beyond_the_gradients_reach_is_named(tmp_path):
    """An h shell (l = 5) in a user's auxiliary basis once gave energies and then, at the first forces, Libint's
    "Engine::lmax_exceeded": the density fitting's metric gradient raises each fitting shell's l by one. Such a basis
    is refused, naming the shell and the reason."""
    from test_qm_region import BASIS_DIR
    text = open(os.path.join(BASIS_DIR, "def2-universal-jfit.nw")).read()
    anchor = "O    G\n      1.3931000             -0.0016533\n"
    assert anchor in text
    path = tmp_path / "with-h.nw"
    path.write_text(text.replace(anchor, anchor + "O    H\n      1.1000000              1.0000000\n"))
    system, force, positions = smallSystem()
    force.setAuxiliaryBasisSet(str(path))
    with pytest.raises(mm.OpenMMException, match=r"l = 5 for O; the largest supported is 4 for the auxiliary basis"):
        contextFor(system, positions).getState(getEnergy=True)
