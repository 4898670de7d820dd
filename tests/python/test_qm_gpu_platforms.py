"""The QM region on the GPU platforms (OpenCL here on PoCL; CUDA where a GPU is present), one test body
for every platform and precision, against the Reference platform on the same System.

The GPU platforms run the same QM driver as Reference/CPU, with the XC energy and matrix of every SCF
iteration on the device (basis values precomputed or recomputed, densities, the functional, the XC
matrix; CommonXCBackend), while integrals, Coulomb, diagonalization and the gradient stay on the host.
Besides the device XC, these tests check the platform-specific plumbing: positions read from the device
in the Context's atom order (mixed precision included), QM atoms kept out of OpenMM's atom reordering,
the QM forces added to the device's fixed-point force buffer, periodic boxes, and the MM charges of
the QM atoms switched off in the device pair kernel.

Tolerances (the issue's): double precision, 1e-8 Eh on the energy and 1e-7 Eh/bohr on every force
component; mixed precision (the MM pair kernels in float), 1e-6 Eh and 1e-5 Eh/bohr.
"""

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft
from test_qm_forces import mdSystem
from test_qm_region import WATER_NM, addWaters, watersAround

KJ = unit.kilojoule_per_mole
KJ_PER_HARTREE = 2625.4996394798254
KJ_NM_PER_HARTREE_BOHR = KJ_PER_HARTREE / 0.0529177210903
TOLERANCE = {"double": (1e-8, 1e-7), "mixed": (1e-6, 1e-5)}  # (Eh, Eh/bohr)

METHANOL_NM = np.array([[-0.0047, 0.0663, 0.0], [-0.0047, -0.0758, 0.0], [-1.0354e-1, 0.1086, 0.0],
                        [0.0504, 0.1004, 0.0890], [0.0504, 0.1004, -0.0890], [0.0880, -0.1013, 0.0]])
GLYCINE_NM = 0.1 * np.array([[1.8975, -0.2735, 0.0], [0.6226, 0.4441, 0.0], [-0.5734, -0.4932, 0.0],
                             [-0.4836, -1.7021, 0.0], [-1.7571, 0.1566, 0.0], [0.5849, 1.0891, 0.8787],
                             [0.5849, 1.0891, -0.8787], [1.9604, -0.8864, 0.8099], [1.9604, -0.8864, -0.8099],
                             [-2.5097, -0.4656, 0.0]])
MOLECULES = {
    "water": (WATER_NM, (8, 1, 1), [(0, 1), (0, 2)]),
    "methanol": (METHANOL_NM, (6, 8, 1, 1, 1, 1), [(0, 1), (0, 2), (0, 3), (0, 4), (1, 5)]),
    "glycine": (GLYCINE_NM, (7, 6, 6, 8, 8, 1, 1, 1, 1, 1),
                [(0, 1), (1, 2), (2, 3), (2, 4), (1, 5), (1, 6), (0, 7), (0, 8), (4, 9)]),
}


def gpuPlatforms():
    """(platform, precision) pairs on which a Context can be created here."""
    found = []
    for name in ("OpenCL", "CUDA"):
        try:
            platform = mm.Platform.getPlatformByName(name)
            system = mm.System()
            system.addParticle(1.0)
            mm.Context(system, mm.VerletIntegrator(0.001), platform)
        except Exception:
            continue
        found += [(name, "double"), (name, "mixed")]
    return found


GPU = gpuPlatforms()
pytestmark = pytest.mark.skipif(not GPU, reason="no OpenCL or CUDA device")


def qmSystem(molecule, basis, mmCenters, method=openmmdft.QMMMForce.NoCutoff, box=None, cutoff=1.0,
             storage=openmmdft.QMMMForce.Precompute):
    """A QM molecule (particles first) among MM TIP3P-like waters."""
    qmPositions, numbers, bonds = MOLECULES[molecule]
    system = mm.System()
    force = openmmdft.QMMMForce()
    for i, z in enumerate(numbers):
        system.addParticle(12.0)
        force.addParticle(0.3 if z == 8 else 0.1)  # MM charges of QM atoms: must take part in nothing
        force.addQMAtom(i, z)
    for a, b in bonds:
        force.addBond(a, b)
    positions = [qmPositions] + watersAround(mmCenters)
    addWaters(system, force, len(mmCenters))
    force.setBasisSet(basis)
    force.setGrid(40, 110)
    force.setSCFConvergence(1e-10)
    force.setNonbondedMethod(method)
    force.setCutoffDistance(cutoff)
    force.setBasisFunctionStorage(storage)
    if box is not None:
        system.setDefaultPeriodicBoxVectors(mm.Vec3(box, 0, 0), mm.Vec3(0, box, 0), mm.Vec3(0, 0, box))
    system.addForce(force)
    return system, force, np.concatenate(positions)


def waterTetramer(box):
    """(H2O)4 as the QM region (four molecules, no bonds between them), periodic, molecules across faces."""
    centers = [(0.0, 0.0, 0.0), (0.28, 0.02, 0.0), (0.0, 0.29, 0.03), (0.27, 0.27, -0.05)]
    waters = watersAround(centers, seed=9)
    system = mm.System()
    force = openmmdft.QMMMForce()
    positions = waters + watersAround([(0.6, 0.1, 0.2), (-0.3, 0.2, -0.3), (0.1, -0.4, 0.3)], seed=3)
    addWaters(system, force, len(positions))
    for particle in range(12):  # the first four waters are the QM region
        force.addQMAtom(particle, (8, 1, 1)[particle % 3])
    force.setBasisSet("6-31G*")
    force.setGrid(40, 110)
    force.setSCFConvergence(1e-10)
    force.setNonbondedMethod(openmmdft.QMMMForce.CutoffPeriodic)
    force.setCutoffDistance(0.7)
    system.setDefaultPeriodicBoxVectors(mm.Vec3(box, 0, 0), mm.Vec3(0, box, 0), mm.Vec3(0, 0, box))
    system.addForce(force)
    positions = np.concatenate(positions)
    positions[3:6, 0] -= box  # a QM molecule and ...
    positions[-3:, 1] += box  # ... an MM molecule imaged across faces
    return system, force, positions


def limited(built):
    """Precompute with a limit far below what the basis values need: recomputed in chunks on the device."""
    built[1].setBasisStorageLimit(0.01)
    return built


CASES = {
    "water 6-31G*": lambda: qmSystem("water", "6-31G*", [(0.3, 0.0, 0.0), (-0.05, 0.31, 0.1)]),
    "water 6-31G* recompute": lambda: qmSystem("water", "6-31G*", [(0.3, 0.0, 0.0), (-0.05, 0.31, 0.1)],
                                               storage=openmmdft.QMMMForce.Recompute),
    "water DZVP": lambda: qmSystem("water", "DZVP", [(0.3, 0.0, 0.0)]),
    "methanol 6-31G*": lambda: qmSystem("methanol", "6-31G*", [(0.35, 0.0, 0.0)]),
    "methanol DZVP": lambda: qmSystem("methanol", "DZVP", [(0.35, 0.0, 0.0)], storage=openmmdft.QMMMForce.Recompute),
    "glycine 6-31G*": lambda: qmSystem("glycine", "6-31G*", [(0.0, 0.0, 0.45)]),
    "glycine DZVP": lambda: qmSystem("glycine", "DZVP", [(0.0, 0.0, 0.45)]),
    "water periodic cutoff": lambda: qmSystem("water", "6-31G*", [(0.3, 0.0, 0.0), (-0.62, 0.1, 0.0), (0.0, 0.0, 0.9)],
                                              method=openmmdft.QMMMForce.CutoffPeriodic, box=1.6, cutoff=0.7),
    "(H2O)4 periodic": lambda: waterTetramer(2.2),
    "water over the storage limit": lambda: limited(qmSystem("water", "6-31G*", [(0.3, 0.0, 0.0)])),
}


def evaluate(system, positions, platform, properties):
    context = mm.Context(system, mm.VerletIntegrator(0.0005), mm.Platform.getPlatformByName(platform), properties)
    context.setPositions(positions)
    state = context.getState(getEnergy=True, getForces=True)
    return context, state.getPotentialEnergy().value_in_unit(KJ), state.getForces(asNumpy=True).value_in_unit(KJ / unit.nanometer)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("platform, precision", GPU)
def test_matches_reference(case, platform, precision):
    system, force, positions = CASES[case]()
    _, energy, forces = evaluate(system, positions, "Reference", {})
    context, gpuEnergy, gpuForces = evaluate(system, positions, platform, {"Precision": precision})
    energyTolerance, forceTolerance = TOLERANCE[precision]
    assert abs(gpuEnergy - energy) < energyTolerance * KJ_PER_HARTREE
    assert np.abs(gpuForces - forces).max() < forceTolerance * KJ_NM_PER_HARTREE_BOHR
    assert np.abs(forces[:3]).max() > 10.0  # the QM atoms do feel forces
    results = force.getQMResults(context)
    assert results["numMMCharges"] > 0
    # The XC energy and matrix come from the device; Precompute keeps the basis values there.
    assert results["xcBackend"] == "device"
    overLimit = force.getBasisStorageLimit() < 1
    if force.getBasisFunctionStorage() == openmmdft.QMMMForce.Precompute and not overLimit:
        assert results["basisValueBytes"] > 0 and results["basisStorageNotice"] == ""
    else:
        assert results["basisValueBytes"] == 0
    assert ("recomputed every SCF iteration" in results["basisStorageNotice"]) == overLimit
    # The density-fitting tensor is kept in device memory and the SCF's Coulomb contractions run there.
    if force.getCoulombMethod() == openmmdft.QMMMForce.DensityFitting:
        assert results["coulombContractions"] == "device" and results["densityFittingBytes"] > 0
    # The SCF's products of basis-sized matrices: this small a QM region keeps them all on the host (below the device's
    # size limit); tests/TestOpenCLXCBackend runs an SCF with every product on the device.
    assert results["scfProducts"] == "host" and results["scfProductBytes"] == 0
    # Everything the QM work holds on the device, the basis values and the tensor among it.
    assert results["deviceMemoryBytes"] > results["basisValueBytes"] + results["densityFittingBytes"]


@pytest.mark.parametrize("platform, precision", GPU[:1])
def test_device_memory_is_kept_and_bounded_along_a_trajectory(platform, precision):
    """The QM work's device arrays are kept from one MD step to the next (a pool per Context) instead of allocated
    and freed every step: along a trajectory the device memory it reports stays what the first steps took; the host
    platforms report none."""
    system, force, positions = CASES["water DZVP"]()
    context, _, _ = evaluate(system, positions, platform, {"Precision": precision})
    context.getIntegrator().step(2)
    held = force.getQMResults(context)["deviceMemoryBytes"]
    assert held > 0
    context.getIntegrator().step(4)
    assert force.getQMResults(context)["deviceMemoryBytes"] == held
    hostContext, _, _ = evaluate(system, positions, "Reference", {})
    assert force.getQMResults(hostContext)["deviceMemoryBytes"] == 0


@pytest.mark.parametrize("platform", sorted({platform for platform, _ in GPU}))
def test_metric_inverse_is_kept_on_the_device_in_every_precision(platform):
    """The density fitting's metric inverse is made on the host (the CPU platform's least-squares kernel, in double
    precision whatever the Context's) and kept in device memory with the metric in every precision, so the device
    holds the same bytes in mixed as in double precision; once mixed precision solved the metric on the host."""
    held = {}
    for precision in ("double", "mixed"):
        system, force, positions = CASES["water 6-31G*"]()
        context, _, _ = evaluate(system, positions, platform, {"Precision": precision})
        results = force.getQMResults(context)
        assert results["coulombContractions"] == "device"
        held[precision] = results["densityFittingBytes"]
    assert held["mixed"] == held["double"] > 0


@pytest.mark.parametrize("platform, precision", GPU[:1])
def test_energy_only_minimization_and_scf_failure_behave_as_on_reference(platform, precision):
    """The shared driver's rules hold on the GPU platforms too."""
    system, force, positions = CASES["water 6-31G*"]()
    force.setQMEnergyOnly(True)
    context, energy, forces = evaluate(system, positions, platform, {"Precision": precision})
    # Fixed-point force buffers have no NaN: the QM atoms' forces read -2^30 kJ/mol/nm plus the others (Reference: NaN).
    assert (forces[:3] < -1e8).all() and (np.abs(forces[3:]) < 1e5).all()
    with pytest.raises(mm.OpenMMException, match="energy-only mode"):
        context.getIntegrator().step(1)
    force.setQMEnergyOnly(False)
    force.setMaxSCFIterations(2)
    force.updateParametersInContext(context)
    with pytest.raises(mm.OpenMMException, match="SCF did not converge"):
        context.getState(getEnergy=True)
    with pytest.raises(mm.OpenMMException, match="last QM computation in this Context failed"):
        force.getQMResults(context)


@pytest.mark.parametrize("platform, precision", GPU)
def test_energy_only_mark_survives_negative_forces_of_other_forces(platform, precision):
    # The mark for "no force" on the QM atoms in energy-only mode was -2^63 in the fixed-point buffer, so a negative
    # Lennard-Jones force on the same component wrapped the sum around to +2^31 kJ/mol/nm.
    positions = np.array([[0.0, 0.0, 0.01173], [0.0, 0.07572, -0.04692], [0.0, -0.07572, -0.04692],
                          [0.28, 0.0, 0.01173], [0.28, 0.07572, -0.04692], [0.28, -0.07572, -0.04692]])
    system, force, nonbonded = mm.System(), openmmdft.QMMMForce(), mm.NonbondedForce()
    for i in range(6):
        system.addParticle((16.0, 1.0, 1.0)[i % 3])
        force.addParticle((-0.834, 0.417, 0.417)[i % 3])
        nonbonded.addParticle(0.0, (0.315, 0.1, 0.1)[i % 3], (0.635, 0.0, 0.0)[i % 3])
    bonds = [(0, 1), (0, 2), (3, 4), (3, 5)]
    for a, b in bonds:
        force.addBond(a, b)
    nonbonded.createExceptionsFromBonds(bonds, 0.0, 0.5)
    for i, z in enumerate((8, 1, 1)):
        force.addQMAtom(i, z)
    force.setBasisSet("STO-3G")
    force.setGrid(30, 50)
    force.setQMEnergyOnly(True)
    system.addForce(force)
    system.addForce(nonbonded)
    _, _, forces = evaluate(system, positions, platform, {"Precision": precision})
    # The QM oxygen feels -337 kJ/mol/nm of Lennard-Jones in x from the other water.
    assert (forces[:3] < -1e8).all() and (forces[:3] > -2e9).all()
    assert (np.abs(forces[3:]) < 1e5).all()


@pytest.mark.parametrize("platform, precision", GPU[:1])
def test_uncharged_pairs_follow_the_other_forces_exclusions(platform, precision):
    # A Context has one set of tile exclusions for every Force that uses them. A NonbondedForce exception between
    # particles 0 and 2 that QMMMForce's bond graph does not give is harmless while particle 0 is uncharged (its pair
    # adds nothing), so QMMMForce follows it; a charge there later would need other tiles and is refused.
    system, force, nonbonded = mm.System(), openmmdft.QMMMForce(), mm.NonbondedForce()
    for q in (0.0, 0.5, -0.5):
        system.addParticle(1.0)
        force.addParticle(q)
        nonbonded.addParticle(0.0, 0.3, 0.5)
    nonbonded.addException(0, 2, 0.0, 0.3, 0.0)
    system.addForce(force)
    system.addForce(nonbonded)
    positions = np.array([[0.0, 0.0, 0.0], [0.4, 0.0, 0.0], [0.0, 0.5, 0.0]])
    _, reference, _ = evaluate(system, positions, "Reference", {})
    context, energy, _ = evaluate(system, positions, platform, {"Precision": precision})
    assert energy == pytest.approx(reference, rel=1e-9)
    force.setParticleParameters(0, 0.2)
    with pytest.raises(mm.OpenMMException, match="both carry charge now"):
        force.updateParametersInContext(context)
    force.setParticleParameters(0, 0.0)
    force.setParticleParameters(1, 0.7)
    force.updateParametersInContext(context)  # charges elsewhere may change


def totalEnergyRange(platform, properties, steps=200):
    system, positions = mdSystem()
    integrator = mm.VerletIntegrator(0.0005)
    context = mm.Context(system, integrator, mm.Platform.getPlatformByName(platform), properties)
    context.setPositions(positions)
    context.setVelocitiesToTemperature(300, 11)
    totals = []
    for _ in range(20):
        integrator.step(steps // 20)
        state = context.getState(getEnergy=True)
        totals.append(state.getKineticEnergy().value_in_unit(KJ) + state.getPotentialEnergy().value_in_unit(KJ))
    return np.ptp(totals)


@pytest.mark.parametrize("platform, precision", GPU[:1])
def test_nve_conserves_energy_as_on_cpu(platform, precision):
    """200 steps of 0.5 fs: the total-energy range on the GPU platform is that of the CPU platform
    (the same dynamics; 0.3 kJ/mol was seen on both), within 30% and 0.05 kJ/mol."""
    cpu = totalEnergyRange("CPU", {})
    gpu = totalEnergyRange(platform, {"Precision": precision})
    print("total energy range: CPU %.4f, %s %s %.4f kJ/mol" % (cpu, platform, precision, gpu))
    assert gpu < 1.3 * cpu + 0.05
