"""The QM region of QMMMForce (restricted Kohn-Sham LDA embedded in MM charges) against PySCF.

PySCF is run in the test on the same molecule, basis file, functional and grid
(Treutler-Ahlrichs radial, Lebedev angular, plain Becke partition, no pruning), with the
MM charges that QMMMForce should have selected, chosen here independently.
Tolerance: 1e-6 hartree on energies (the issue's bar).
"""

import os

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft

pyscf = pytest.importorskip("pyscf")
from pyscf import dft, gto, qmmm  # noqa: E402
from pyscf.dft import gen_grid, radi  # noqa: E402

NM_PER_BOHR = 0.0529177210903
KJ_PER_HARTREE = 2625.4996394798254
TOLERANCE_HARTREE = 1e-6
BASIS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "qmengine", "data", "basis")

WATER_NM = np.array([[0.0, 0.0, 0.01173], [0.0, 0.07572, -0.04692], [0.0, -0.07572, -0.04692]])
TIP3P = (-0.834, 0.417, 0.417)


def rotation(rng):
    q = rng.normal(size=4)
    a, b, c, d = q / np.linalg.norm(q)
    return np.array([[a*a+b*b-c*c-d*d, 2*(b*c-a*d), 2*(b*d+a*c)],
                     [2*(b*c+a*d), a*a-b*b+c*c-d*d, 2*(c*d-a*b)],
                     [2*(b*d-a*c), 2*(c*d+a*b), a*a-b*b-c*c+d*d]])


def watersAround(centers, seed=4):
    rng = np.random.default_rng(seed)
    return [np.asarray(c) + WATER_NM @ rotation(rng).T for c in centers]


def addWaters(system, force, count):
    """count TIP3P-charged waters (O, H, H; particles of mass 1) with their two bonds, after the particles there."""
    for _ in range(count):
        first = system.getNumParticles()
        for atom in range(3):
            system.addParticle(1.0)
            force.addParticle(TIP3P[atom])
        force.addBond(first, first + 1)
        force.addBond(first, first + 2)


def buildSystem(mmWaters, method=openmmdft.QMMMForce.NoCutoff, cutoff=1.0, box=None, basis="6-31gs", exact=True,
                energyOnly=True, grid=(60, 302)):
    """QM water (particles 0-2) plus MM TIP3P-like waters; returns (system, force, positions in nm).
    energyOnly (the default here): the comparisons with PySCF need energies only, which skips the QM forces."""
    system = mm.System()
    force = openmmdft.QMMMForce()
    positions = [WATER_NM] + list(mmWaters)
    addWaters(system, force, 1 + len(mmWaters))  # the QM water first
    for particle, z in enumerate((8, 1, 1)):
        force.addQMAtom(particle, z)
    force.setBasisSet(os.path.join(BASIS_DIR, basis + ".nw"))
    force.setCoulombMethod(openmmdft.QMMMForce.Exact if exact else openmmdft.QMMMForce.DensityFitting)
    force.setAuxiliaryBasisSet(os.path.join(BASIS_DIR, "def2-universal-jfit.nw"))
    force.setGrid(*grid)
    force.setSCFConvergence(1e-9)
    force.setNonbondedMethod(method)
    force.setCutoffDistance(cutoff)
    force.setQMEnergyOnly(energyOnly)
    if box is not None:
        system.setDefaultPeriodicBoxVectors(mm.Vec3(box, 0, 0), mm.Vec3(0, box, 0), mm.Vec3(0, 0, box))
    system.addForce(force)
    return system, force, np.concatenate(positions)


def matchingRKS(mol):
    """PySCF RKS set up as QMMMForce is here: SVWN5, (60, 302) Treutler-Ahlrichs/Lebedev grid,
    plain Becke partition, no pruning, no density-based point removal, tight convergence."""
    mf = dft.RKS(mol)
    mf.xc = "LDA,VWN"  # PySCF's VWN is VWN5
    mf.grids.atom_grid = (60, 302)
    mf.grids.prune = None
    mf.grids.radii_adjust = None
    mf.grids.becke_scheme = gen_grid.original_becke
    mf.grids.radi_method = radi.treutler
    mf.small_rho_cutoff = 0
    mf.conv_tol = 1e-11
    return mf


def pyscfMolecule(atoms, basis="6-31gs", cart=True):
    """A PySCF molecule of (atomic number, position in nm) pairs, its basis read from this repository's file."""
    from pyscf.data.elements import ELEMENTS
    mol = gto.Mole()
    mol.atom = [(z, tuple(np.asarray(p) / NM_PER_BOHR)) for z, p in atoms]
    mol.unit = "Bohr"
    mol.cart = cart
    path = os.path.join(BASIS_DIR, basis + ".nw")
    mol.basis = {ELEMENTS[z]: gto.basis.load(path, ELEMENTS[z]) for z in {z for z, _ in atoms}}
    mol.verbose = 0
    mol.build()
    return mol


def pyscfEnergy(qmPositionsNm, mmPositionsNm, mmCharges, basis="6-31gs", cart=True, exact=True, aux="def2-universal-jfit"):
    mol = pyscfMolecule(list(zip((8, 1, 1), qmPositionsNm)), basis, cart)
    mf = matchingRKS(mol)
    if not exact:
        auxPath = os.path.join(BASIS_DIR, aux + ".nw")
        mf = mf.density_fit(auxbasis={el: gto.basis.load(auxPath, el) for el in ("O", "H")})
    if len(mmCharges):
        mf = qmmm.mm_charge(mf, np.asarray(mmPositionsNm) / NM_PER_BOHR, np.asarray(mmCharges), unit="Bohr")
    energy = mf.kernel()
    assert mf.converged
    return energy


def qmEnergy(system, force, positions, platform="Reference"):
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName(platform))
    context.setPositions(positions)
    total = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    return total, force.getQMResults(context), context


@pytest.mark.parametrize("exact", [True, False], ids=["exactJ", "densityFitting"])
def test_embedded_water_matches_pyscf(exact):
    """A QM water among 6 MM waters, no cutoff: every MM charge enters the QM Hamiltonian."""
    centers = [(0.3, 0, 0), (-0.3, 0, 0), (0, 0.3, 0), (0, -0.3, 0), (0, 0, 0.3), (0, 0, -0.3)]
    waters = watersAround(centers)
    system, force, positions = buildSystem(waters, exact=exact)
    total, results, _ = qmEnergy(system, force, positions)
    mmPositions = np.concatenate(waters)
    reference = pyscfEnergy(WATER_NM, mmPositions, TIP3P * len(waters), exact=exact)
    assert results["totalEnergy"].value_in_unit(unit.kilojoule_per_mole) / KJ_PER_HARTREE == pytest.approx(reference, abs=TOLERANCE_HARTREE)
    assert results["numMMCharges"] == 18
    parts = sum(results[k].value_in_unit(unit.kilojoule_per_mole) for k in
                ("oneElectronEnergy", "coulombEnergy", "exchangeCorrelationEnergy", "nuclearRepulsionEnergy", "qmmmEnergy"))
    assert parts == pytest.approx(results["totalEnergy"].value_in_unit(unit.kilojoule_per_mole), rel=1e-12)
    assert results["homoLumoGap"].value_in_unit(unit.kilojoule_per_mole) > 0
    # The Context's energy is the QM energy plus the MM-MM Coulomb energy, in which the QM
    # atoms' own MM charges take no part: the same Force without QM atoms and with those charges zeroed.
    mmOnly = mm.System()
    plain = openmmdft.QMMMForce()
    for i in range(force.getNumParticles()):
        mmOnly.addParticle(1.0)
        plain.addParticle(0.0 if i < 3 else force.getParticleParameters(i))
    for i in range(force.getNumBonds()):
        plain.addBond(*force.getBondParameters(i))
    mmOnly.addForce(plain)
    context = mm.Context(mmOnly, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    mmEnergy = context.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    assert total == pytest.approx(mmEnergy + results["totalEnergy"].value_in_unit(unit.kilojoule_per_mole), abs=1e-6)


@pytest.mark.parametrize("basis,aux,cart", [("dzvp", "dgauss-a1-dft-cfit", False), ("dzvp", "def2-universal-jfit", False),
                                            ("def2-svp", "def2-universal-jfit", False)])
def test_density_fitting_through_the_least_squares_kernel_matches_pyscf(basis, aux, cart):
    """Density fitting in other basis sets (spherical shells): the fit's normal equations go
    through the plugin's least-squares kernel; the energy must still match PySCF's density_fit()."""
    waters = watersAround([(0.3, 0, 0), (0, -0.32, 0.05)])
    system, force, positions = buildSystem(waters, basis=basis, exact=False)
    force.setAuxiliaryBasisSet(os.path.join(BASIS_DIR, aux + ".nw"))
    _, results, _ = qmEnergy(system, force, positions)
    reference = pyscfEnergy(WATER_NM, np.concatenate(waters), TIP3P * 2, basis=basis, cart=cart, exact=False, aux=aux)
    assert results["totalEnergy"].value_in_unit(unit.kilojoule_per_mole) / KJ_PER_HARTREE == pytest.approx(reference, abs=TOLERANCE_HARTREE)


def test_periodic_cutoff_selects_whole_molecules_across_faces():
    """Periodic box with the QM water at a corner: MM molecules within the cutoff of any QM atom
    enter whole, imaged next to the QM region; those beyond do not."""
    box = 2.4
    centers = [(0.35, 0.0, 0.0), (2.4 - 0.33, 0.0, 0.0), (0.0, 2.4 - 0.36, 2.4 - 0.02), (1.2, 1.2, 1.2), (0.0, 0.0, 0.75)]
    waters = watersAround(centers, seed=9)
    # Wrap every atom into the box, so molecules at the faces are split across them.
    wrapped = [w - box * np.floor(w / box) for w in waters]
    cutoff = 0.5
    system, force, positions = buildSystem(wrapped, openmmdft.QMMMForce.CutoffPeriodic, cutoff, box)
    qmWrapped = WATER_NM - box * np.floor(WATER_NM / box)
    positions[:3] = qmWrapped
    _, results, _ = qmEnergy(system, force, positions)
    # Independent selection: image each molecule (unwrapped here by construction) next to the QM water.
    selected, charges = [], []
    for w in waters:
        shift = -box * np.round((w[0] - WATER_NM[0]) / box)
        placed = w + shift
        distances = np.linalg.norm(placed[:, None, :] - WATER_NM[None, :, :], axis=2)
        if distances.min() < cutoff:
            selected.append(placed)
            charges += TIP3P
    assert results["numMMCharges"] == len(charges) == 9  # the first three molecules, not the far ones
    # The QM water itself is split across the faces: the engine must see it whole.
    qmImaged = WATER_NM
    reference = pyscfEnergy(qmImaged, np.concatenate(selected), charges)
    assert results["totalEnergy"].value_in_unit(unit.kilojoule_per_mole) / KJ_PER_HARTREE == pytest.approx(reference, abs=TOLERANCE_HARTREE)


def test_precompute_and_recompute_agree_and_cpu_matches_reference():
    waters = watersAround([(0.3, 0, 0), (0, -0.32, 0.05)])
    system, force, positions = buildSystem(waters, exact=False)
    _, precomputed, _ = qmEnergy(system, force, positions)
    force.setBasisFunctionStorage(openmmdft.QMMMForce.Recompute)
    _, recomputed, _ = qmEnergy(system, force, positions)
    _, onCpu, _ = qmEnergy(system, force, positions, "CPU")
    e = lambda r: r["totalEnergy"].value_in_unit(unit.kilojoule_per_mole) / KJ_PER_HARTREE
    assert e(recomputed) == pytest.approx(e(precomputed), abs=1e-10)
    assert e(onCpu) == pytest.approx(e(precomputed), abs=1e-10)


def test_restart_from_previous_density_takes_fewer_iterations():
    waters = watersAround([(0.3, 0, 0), (0, -0.32, 0.05)])
    system, force, positions = buildSystem(waters, exact=False)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    context.getState(getEnergy=True)
    first = force.getQMResults(context)["scfIterations"]
    moved = positions + np.random.default_rng(1).normal(0, 0.0005, positions.shape)
    context.setPositions(moved)
    context.getState(getEnergy=True)
    assert force.getQMResults(context)["scfIterations"] < first


def test_qm_errors_name_the_problem():
    reference = mm.Platform.getPlatformByName("Reference")

    def contextFor(configure):
        system, force, positions = buildSystem(watersAround([(0.3, 0, 0)]))
        configure(force)
        context = mm.Context(system, mm.VerletIntegrator(0.001), reference)
        context.setPositions(positions)
        context.getState(getEnergy=True)

    with pytest.raises(mm.OpenMMException, match="odd number of electrons"):
        contextFor(lambda f: f.setQMCharge(1))
    with pytest.raises(mm.OpenMMException, match="already a QM atom"):
        contextFor(lambda f: f.addQMAtom(1, 1))
    with pytest.raises(mm.OpenMMException, match="out of range"):
        contextFor(lambda f: f.addQMAtom(99, 1))
    with pytest.raises(mm.OpenMMException, match="crosses the QM/MM boundary.*element 1 has no link atom bond length"):
        contextFor(lambda f: f.addBond(2, 3))
    with pytest.raises(mm.OpenMMException, match="unknown element"):
        openmmdft.QMMMForce().addQMAtom(0, 0)
    with pytest.raises(mm.OpenMMException, match="unknown functional"):
        openmmdft.QMMMForce().setFunctional("B3LYP")
    with pytest.raises(mm.OpenMMException, match="[Bb]asis"):
        contextFor(lambda f: f.setBasisSet("no-such-basis"))
    with pytest.raises(mm.OpenMMException, match="Lebedev"):
        contextFor(lambda f: f.setGrid(50, 7))
    # Energy-only mode refuses integrator steps (with exact Coulomb too, which has forces otherwise).
    system, force, positions = buildSystem(watersAround([(0.3, 0, 0)]), energyOnly=True)
    context = mm.Context(system, mm.VerletIntegrator(0.001), reference)
    context.setPositions(positions)
    context.getState(getEnergy=True)
    with pytest.raises(mm.OpenMMException, match="energy-only mode"):
        context.getIntegrator().step(1)


def test_scf_that_does_not_converge_fails_closed():
    system, force, positions = buildSystem(watersAround([(0.3, 0, 0)]))
    force.setMaxSCFIterations(2)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    with pytest.raises(mm.OpenMMException, match="converge"):
        context.getState(getEnergy=True)


def test_qm_settings_round_trip_through_xml():
    system, force, positions = buildSystem(watersAround([(0.3, 0, 0)]), exact=False)
    force.setQMCharge(0)
    force.setFunctional("SVWN_RPA")
    force.setSphericalBasis(True)
    force.setGrid(40, 194)
    force.setRadialScheme(openmmdft.QMMMForce.BeckeChebyshev)
    force.setAtomicPartition(openmmdft.QMMMForce.StratmannScuseriaFrisch)
    force.setGridPruning(openmmdft.QMMMForce.TreutlerAhlrichsPruning)
    force.setGridGrouping(0.2 * unit.nanometer, 0.5)
    force.setSignificanceThreshold(30.0)
    force.setBasisFunctionStorage(openmmdft.QMMMForce.Recompute)
    force.setMaxSCFIterations(77)
    force.setDIISSubspaceSize(6)
    force.setRecycledSubspaceSize(4)
    force.setCoulombResponseSteps(0)
    force.setBasisStorageLimit(123.5)
    copy = mm.XmlSerializer.deserialize(mm.XmlSerializer.serialize(force))
    assert copy.getBasisStorageLimit() == 123.5
    assert copy.getNumQMAtoms() == 3 and copy.getQMAtomParameters(0) == [0, 8]
    assert copy.getFunctional() == "SVWN_RPA" and copy.getAngularFunctions() == openmmdft.QMMMForce.Spherical
    assert copy.getGrid() == [40, 194]
    assert copy.getRadialScheme() == openmmdft.QMMMForce.BeckeChebyshev
    assert copy.getAtomicPartition() == openmmdft.QMMMForce.StratmannScuseriaFrisch
    assert copy.getGridPruning() == openmmdft.QMMMForce.TreutlerAhlrichsPruning
    assert copy.getGridGrouping()[0].value_in_unit(unit.nanometer) == pytest.approx(0.2)
    assert copy.getSignificanceThreshold() == 30.0 and copy.getMaxSCFIterations() == 77 and copy.getDIISSubspaceSize() == 6
    assert copy.getRecycledSubspaceSize() == 4
    assert copy.getCoulombResponseSteps() == 0
    assert copy.getBasisFunctionStorage() == openmmdft.QMMMForce.Recompute
    assert copy.getCoulombMethod() == openmmdft.QMMMForce.DensityFitting
    assert copy.getBasisSet() == force.getBasisSet()
    assert copy.getQMEnergyOnly()


def test_exact_coulomb_forces_match_pyscf_gradient():
    """Exact (non-fitted) Coulomb: the QM atoms' forces against PySCF's RKS gradient with the grid response, the
    same model as test_embedded_water_matches_pyscf (no MM charges here). Tolerance 1e-6 Eh/bohr."""
    system, force, positions = buildSystem([], exact=True, energyOnly=False)
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName("Reference"))
    context.setPositions(positions)
    forces = context.getState(getForces=True).getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer)
    mol = pyscfMolecule(list(zip((8, 1, 1), positions)))
    mf = matchingRKS(mol)
    mf.kernel()
    gradient = mf.nuc_grad_method()
    gradient.grid_response = True
    reference = gradient.kernel()  # Eh/bohr
    ours = -forces[:3] / KJ_PER_HARTREE * NM_PER_BOHR
    print("largest |gradient - PySCF| = %.2e Eh/bohr" % np.abs(ours - reference).max())
    assert np.abs(ours - reference).max() < 1e-6


@pytest.mark.parametrize("platform", ["Reference", "OpenCL"])
def test_pruned_grid_matches_pyscf_default_pruning(platform):
    """NWChemPruning is PySCF's default grid pruning (gen_grid.nwchem_prune): the same energy on the same pruned
    grid, on the host and with the device's grid weights and XC (OpenCL)."""
    if platform not in [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]:
        pytest.skip("no %s platform" % platform)
    waters = watersAround([(0.3, 0, 0), (0, -0.3, 0)])
    system, force, positions = buildSystem(waters, exact=False, grid=(50, 194))
    force.setGridPruning(openmmdft.QMMMForce.NWChemPruning)
    _, results, _ = qmEnergy(system, force, positions, platform)
    mol = pyscfMolecule(list(zip((8, 1, 1), WATER_NM)))
    mf = matchingRKS(mol)
    mf.grids.atom_grid = (50, 194)
    mf.grids.prune = gen_grid.nwchem_prune
    mf = mf.density_fit(auxbasis={el: gto.basis.load(os.path.join(BASIS_DIR, "def2-universal-jfit.nw"), el) for el in ("O", "H")})
    mf = qmmm.mm_charge(mf, np.concatenate(waters) / NM_PER_BOHR, np.asarray(TIP3P * len(waters)), unit="Bohr")
    reference = mf.kernel()
    assert mf.converged
    # The same grid: agreement far below TOLERANCE_HARTREE (both SCFs converge tightly), while the unpruned grid's
    # energy differs by 2.8e-7 hartree here, so the test tells the two grids apart.
    pruned = results["totalEnergy"].value_in_unit(unit.kilojoule_per_mole) / KJ_PER_HARTREE
    assert pruned == pytest.approx(reference, abs=1e-8)
    force.setGridPruning(openmmdft.QMMMForce.NoPruning)
    _, unpruned, _ = qmEnergy(system, force, positions, platform)
    assert abs(unpruned["totalEnergy"].value_in_unit(unit.kilojoule_per_mole) / KJ_PER_HARTREE - reference) > 1e-7
