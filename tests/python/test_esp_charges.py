"""ESP charges of the QM region against PySCF.

PySCF runs the same molecule, basis file, functional and grid as test_qm_region.py; its
potential (nuclei + electrons, not the MM charges) is evaluated on the SAME points, read back
from the plugin with openmmdft.espGridPoints, and fitted here by numpy (KKT system of the
constrained least-squares problem). Tolerance: 1e-3 e per charge (the issue's bar).
"""

import functools
import os

import numpy as np
import openmm as mm
import openmm.unit as unit
import pytest

import openmmdft
from test_qm_region import BASIS_DIR, NM_PER_BOHR, TIP3P, WATER_NM, addWaters, matchingRKS, watersAround

pyscf = pytest.importorskip("pyscf")
from pyscf import df, gto, qmmm  # noqa: E402

TOLERANCE_E = 1e-3
CHELPG, MK = openmmdft.QMMMForce.CHELPG, openmmdft.QMMMForce.MerzKollman

# Methanol (nm): C, O, methyl H x3, hydroxyl H; bonds for the bond graph.
METHANOL_NM = np.array([[-0.0046520, 0.0663395, 0.0], [-0.0046520, -0.0755395, 0.0], [-0.1086190, 0.0975969, 0.0],
                        [0.0437720, 0.1071990, 0.0889415], [0.0437720, 0.1071990, -0.0889415],
                        [0.0861066, -0.1081311, 0.0]])
MOLECULES = {
    "water": (WATER_NM, (8, 1, 1), [(0, 1), (0, 2)]),
    "methanol": (METHANOL_NM, (6, 8, 1, 1, 1, 1), [(0, 1), (0, 2), (0, 3), (0, 4), (1, 5)]),
    "hydroxide": (WATER_NM[:2], (8, 1), [(0, 1)]),
}
MM_CENTERS = [(0.4, 0, 0), (-0.4, 0, 0), (0, 0, 0.4), (0, 0, -0.4)]


def buildSystem(name, mmWaters, method, charge=0):
    """QM molecule (particles first) plus MM TIP3P-like waters; returns (system, force, positions nm)."""
    qmPositions, numbers, bonds = MOLECULES[name]
    system = mm.System()
    force = openmmdft.QMMMForce()
    for i, z in enumerate(numbers):
        system.addParticle(1.0)
        force.addParticle(0.0)
        force.addQMAtom(i, z)
    for a, b in bonds:
        force.addBond(a, b)
    addWaters(system, force, len(mmWaters))
    force.setQMCharge(charge)
    force.setBasisSet(os.path.join(BASIS_DIR, "6-31gs.nw"))
    force.setCoulombMethod(openmmdft.QMMMForce.Exact)
    force.setGrid(60, 302)
    force.setSCFConvergence(1e-9)
    force.setQMEnergyOnly(True)  # the ESP tests need energies only
    force.setESPChargeMethod(method)
    system.addForce(force)
    return system, force, np.concatenate([qmPositions] + list(mmWaters))


def pluginCharges(system, force, positions, platform="Reference"):
    context = mm.Context(system, mm.VerletIntegrator(0.001), mm.Platform.getPlatformByName(platform))
    context.setPositions(positions)
    context.getState(getEnergy=True)
    return np.array([q.value_in_unit(unit.elementary_charge) for q in force.getQMResults(context)["espCharges"]])


@functools.lru_cache(maxsize=None)
def pyscfDensity(name, embedded, charge=0):
    """PySCF's density of the molecule, in vacuum or among the MM waters (shared by both grids)."""
    mmWaters = watersAround(MM_CENTERS) if embedded else []
    qmPositions, numbers, _ = MOLECULES[name]
    mol = gto.Mole()
    mol.atom = [(z, tuple(p / NM_PER_BOHR)) for z, p in zip(numbers, qmPositions)]
    mol.unit = "Bohr"
    mol.cart = True
    mol.charge = charge
    path = os.path.join(BASIS_DIR, "6-31gs.nw")
    mol.basis = {el: gto.basis.load(path, el) for el in {gto.mole._symbol(z) for z in numbers}}
    mol.verbose = 0
    mol.build()
    mf = matchingRKS(mol)
    if mmWaters:
        mf = qmmm.mm_charge(mf, np.concatenate(mmWaters) / NM_PER_BOHR, np.array(TIP3P * len(mmWaters)), unit="Bohr")
    mf.kernel()
    assert mf.converged
    return mol, mf.make_rdm1()


def pyscfESPCharges(mol, dm, pointsNm, charge):
    """Potential of PySCF's density and nuclei on the points, fitted with sum q = charge (KKT)."""
    points = pointsNm / NM_PER_BOHR
    atoms = mol.atom_coords()
    inverse = 1.0 / np.linalg.norm(points[:, None, :] - atoms[None, :, :], axis=2)
    potential = inverse @ mol.atom_charges()
    for chunk in range(0, len(points), 2000):
        fake = gto.fakemol_for_charges(points[chunk:chunk + 2000])
        fake.cart = mol.cart  # PySCF needs one convention; an s function is the same in both
        potential[chunk:chunk + 2000] -= np.einsum("ijp,ij->p", df.incore.aux_e2(mol, fake), dm)
    n = len(atoms)
    kkt = np.zeros((n + 1, n + 1))
    kkt[:n, :n] = inverse.T @ inverse
    kkt[:n, n] = kkt[n, :n] = 1.0
    rhs = np.append(inverse.T @ potential, charge)
    return np.linalg.solve(kkt, rhs)[:n]


@pytest.mark.parametrize("method", [CHELPG, MK], ids=["CHELPG", "MerzKollman"])
@pytest.mark.parametrize("embedded", [False, True], ids=["vacuum", "mmCharges"])
@pytest.mark.parametrize("name", ["water", "methanol"])
def test_esp_charges_match_pyscf(name, embedded, method):
    mmWaters = watersAround(MM_CENTERS) if embedded else []
    system, force, positions = buildSystem(name, mmWaters, method)
    charges = pluginCharges(system, force, positions)
    qmPositions, numbers, _ = MOLECULES[name]
    points = openmmdft.espGridPoints(qmPositions, numbers, method)
    mol, dm = pyscfDensity(name, embedded)
    reference = pyscfESPCharges(mol, dm, points, 0)
    assert len(charges) == len(numbers)
    assert np.max(np.abs(charges - reference)) < TOLERANCE_E
    assert charges.sum() == pytest.approx(0.0, abs=1e-10)


def test_chelpg_water_charges_are_chemically_sensible():
    system, force, positions = buildSystem("water", [], CHELPG)
    charges = pluginCharges(system, force, positions)
    assert -0.9 < charges[0] < -0.7
    assert charges[1] == pytest.approx(charges[2], abs=1e-6)  # the CHELPG lattice is symmetric about the molecule
    assert charges[1] == pytest.approx(-charges[0] / 2, abs=1e-10)


def test_charged_region_sums_to_qm_charge_and_cpu_matches_reference():
    """Hydroxide (charge -1): the fit keeps sum q = -1 exactly; CPU and Reference give the same charges."""
    system, force, positions = buildSystem("hydroxide", [], MK, charge=-1)
    charges = pluginCharges(system, force, positions)
    assert charges.sum() == pytest.approx(-1.0, abs=1e-10)
    assert charges[0] < charges[1]  # the oxygen carries most of the negative charge
    assert pluginCharges(system, force, positions, "CPU") == pytest.approx(charges, abs=1e-10)


def test_default_is_no_esp_charges_and_setting_round_trips_through_xml():
    system, force, positions = buildSystem("water", [], openmmdft.QMMMForce.NoESPCharges)
    assert openmmdft.QMMMForce().getESPChargeMethod() == openmmdft.QMMMForce.NoESPCharges
    assert len(pluginCharges(system, force, positions)) == 0
    force.setESPChargeMethod(MK)
    xml = mm.XmlSerializer.serialize(force)
    assert mm.XmlSerializer.deserialize(xml).getESPChargeMethod() == MK
    # A version-2 file written before the setting existed reads with the default.
    old = xml.replace(' espChargeMethod="2"', "")
    assert "espChargeMethod" not in old
    assert mm.XmlSerializer.deserialize(old).getESPChargeMethod() == openmmdft.QMMMForce.NoESPCharges
    with pytest.raises(mm.OpenMMException, match="espChargeMethod"):
        mm.XmlSerializer.deserialize(xml.replace('espChargeMethod="2"', 'espChargeMethod="7"'))


def test_esp_grid_points_from_python():
    """The points the plugin samples: CHELPG on a 0.3 A lattice outside the CHELPG radii and within
    2.8 A of a nucleus; Merz-Kollman on the 1.4-2.0 x MK-radius shells. Bad input raises."""
    positions, numbers, _ = MOLECULES["methanol"]
    chelpgRadii = np.array([{1: 0.145, 6: 0.15, 8: 0.17}[z] for z in numbers])
    points = openmmdft.espGridPoints(positions * unit.nanometer, numbers, CHELPG)
    distances = np.linalg.norm(points[:, None, :] - positions[None, :, :], axis=2)
    assert np.all(distances >= chelpgRadii - 1e-12)
    assert np.all(distances.min(axis=1) <= 0.28 + 1e-12)
    steps = (points - points[0]) / 0.03
    assert np.allclose(steps, np.round(steps), atol=1e-9)
    mkRadii = np.array([{1: 0.12, 6: 0.15, 8: 0.14}[z] for z in numbers])
    shells = (np.linalg.norm(openmmdft.espGridPoints(positions, numbers, MK)[:, None, :] - positions[None], axis=2)
              / mkRadii).min(axis=1)
    assert np.all(np.min(np.abs(shells[:, None] - np.array([1.4, 1.6, 1.8, 2.0])[None]), axis=1) < 1e-9)
    with pytest.raises(mm.OpenMMException, match="radius"):
        openmmdft.espGridPoints([[0, 0, 0]], [92], CHELPG)
    with pytest.raises(mm.OpenMMException, match="method"):
        openmmdft.espGridPoints([[0, 0, 0]], [8], openmmdft.QMMMForce.NoESPCharges)
    for bad in (np.nan, np.inf):
        for method in (CHELPG, MK):
            with pytest.raises(mm.OpenMMException, match="not finite"):
                openmmdft.espGridPoints([[0, 0, 0], [0.1, bad, 0]], [8, 1], method)
