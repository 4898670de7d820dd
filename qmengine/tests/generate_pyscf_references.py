#!/usr/bin/env python3
"""Compute PySCF reference energies for TestPySCFReference (run once; output is kept in git).

    .venv/bin/python qmengine/tests/generate_pyscf_references.py

Writes qmengine/tests/data/pyscf_references.txt. Every case uses the basis files of
qmengine/data/basis (so both programs read identical numbers) and PySCF's grid set up
like ours: Treutler-Ahlrichs radial grid with element xi, Lebedev angular grid, plain
Becke partition (no atomic-size adjustment), no pruning unless the case names a scheme, no density-based point
removal.
Positions are in bohr. PySCF's 'VWN' is VWN5 (libxc id 7); 'VWN_RPA' is libxc id 8.
"""
import os, sys, time
import numpy as np
import pyscf
from pyscf import gto, dft, qmmm
from pyscf.dft import gen_grid, radi

HERE = os.path.dirname(os.path.abspath(__file__))
BASIS_DIR = os.path.join(os.path.dirname(HERE), 'data', 'basis')
ANG = 1 / 0.52917721092  # bohr per angstrom, as in the engine

WATER = [(8, (0.0, 0.0, 0.1173)), (1, (0.0, 0.7572, -0.4692)), (1, (0.0, -0.7572, -0.4692))]
METHANOL = [(6, (-0.0467, 0.6618, 0.0)), (8, (-0.0467, -0.7566, 0.0)), (1, (-1.0872, 0.9802, 0.0)),
            (1, (0.4338, 1.0803, 0.8863)), (1, (0.4338, 1.0803, -0.8863)), (1, (0.8590, -1.0826, 0.0))]


def rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    a, b, c, d = q
    return np.array([[a*a+b*b-c*c-d*d, 2*(b*c-a*d), 2*(b*d+a*c)],
                     [2*(b*c+a*d), a*a-b*b+c*c-d*d, 2*(c*d-a*b)],
                     [2*(b*d-a*c), 2*(c*d+a*b), a*a-b*b-c*c+d*d]])


def water_cluster(n, spacing=2.9, seed=7):
    """n waters on a cubic lattice with random orientations (angstrom)."""
    rng = np.random.default_rng(seed)
    side = int(np.ceil(n ** (1 / 3)))
    atoms = []
    for k in range(n):
        centre = spacing * np.array([k % side, (k // side) % side, k // (side * side)], float)
        R = rotation(rng)
        for Z, xyz in WATER:
            atoms.append((Z, tuple(centre + R @ np.array(xyz))))
    return atoms


def mm_environment(seed=3):
    """TIP3P-like point charges of 6 waters around the QM water (angstrom, e)."""
    rng = np.random.default_rng(seed)
    out = []
    dirs = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    for d in dirs:
        centre = 3.0 * np.array(d, float)
        R = rotation(rng)
        for (Z, xyz), q in zip(WATER, (-0.834, 0.417, 0.417)):
            out.append((tuple(centre + R @ np.array(xyz)), q))
    return out


def to_bohr(atoms):
    return [(Z, tuple(c * ANG for c in xyz)) for Z, xyz in atoms]


def run(name, atoms, basis, cart, coulomb, aux='-', xc='LDA,VWN', grid=(60, 302), charge=0, mm=(),
        radial='treutler', partition='becke', sizeadjust='none', gradient=False, prune='none'):
    """gradient=True also writes PySCF's analytic nuclear gradient (density fitting with the auxiliary-basis response)
    of the QM atoms with grid_response=False ('gradient') and True ('gradientgrid') and, with MM charges, of the
    charges (grad_hcore_mm + grad_nuc_mm, 'mmgradient')."""
    atoms = to_bohr(atoms)
    mol = gto.Mole()
    mol.atom = [(Z, xyz) for Z, xyz in atoms]
    mol.unit = 'Bohr'
    mol.charge = charge
    mol.cart = cart
    elements = sorted({gto.mole._symbol(Z) for Z, _ in atoms})
    path = os.path.join(BASIS_DIR, basis + '.nw')
    mol.basis = {el: gto.basis.load(path, el) for el in elements}
    mol.verbose = 0
    mol.build()
    mf = dft.RKS(mol)
    mf.xc = xc
    mf.grids.atom_grid = grid
    mf.grids.prune = {'none': None, 'nwchem': gen_grid.nwchem_prune, 'treutler': gen_grid.treutler_prune}[prune]
    mf.grids.radii_adjust = {'none': None, 'treutler': radi.treutler_atomic_radii_adjust}[sizeadjust]
    mf.grids.becke_scheme = {'becke': gen_grid.original_becke, 'ssf': gen_grid.stratmann}[partition]
    mf.grids.radi_method = {'treutler': radi.treutler, 'becke': radi.becke}[radial]
    mf.small_rho_cutoff = 0
    mf.conv_tol = 1e-11
    if coulomb == 'df':
        auxpath = os.path.join(BASIS_DIR, aux + '.nw')
        mf = mf.density_fit(auxbasis={el: gto.basis.load(auxpath, el) for el in elements})
    if mm:
        coords = np.array([c for c, q in mm]) * ANG
        charges = np.array([q for c, q in mm])
        mf = qmmm.mm_charge(mf, coords, charges, unit='Bohr')
    t = time.time()
    e = mf.kernel()
    assert mf.converged, name
    mm_bohr = [(tuple(x * ANG for x in c), q) for c, q in mm]
    lines = ['case %s' % name, 'basis %s' % basis, 'cartesian %d' % int(cart), 'coulomb %s' % coulomb,
             'auxiliary %s' % aux, 'functional %s' % ('SVWN5' if xc == 'LDA,VWN' else 'SVWN_RPA'),
             'grid %d %d' % grid, 'radial %s' % radial, 'partition %s' % partition,
             'sizeadjust %s' % sizeadjust, 'prune %s' % prune, 'charge %d' % charge, 'atoms %d' % len(atoms)]
    lines += ['%d %.15f %.15f %.15f' % (Z, *xyz) for Z, xyz in atoms]
    lines.append('mmcharges %d' % len(mm_bohr))
    lines += ['%.15f %.15f %.15f %.15f' % (*xyz, q) for xyz, q in mm_bohr]
    lines.append('energy %.12f' % e)
    if gradient:
        g = mf.nuc_grad_method()
        g.grid_response = False
        de = g.kernel()
        lines.append('gradient %d' % len(atoms))
        lines += ['%.12f %.12f %.12f' % tuple(row) for row in de]
        g.grid_response = True
        lines.append('gradientgrid %d' % len(atoms))
        lines += ['%.12f %.12f %.12f' % tuple(row) for row in g.kernel()]
        g.grid_response = False
        if mm:
            dm = mf.make_rdm1()
            gmm = g.grad_hcore_mm(dm) + g.grad_nuc_mm()
            lines.append('mmgradient %d' % len(mm))
            lines += ['%.12f %.12f %.12f' % tuple(row) for row in gmm]
    lines.append('end')
    print('%-36s E = %.10f  (%.1f s, %d bf)' % (name, e, time.time() - t, mol.nao), flush=True)
    return '\n'.join(lines) + '\n'


CASES = {
    'water_631gs_exact': lambda: run('water_631gs_exact', WATER, '6-31gs', True, 'exact'),
    'water_def2svp_exact': lambda: run('water_def2svp_exact', WATER, 'def2-svp', False, 'exact'),
    'methanol_631gs_exact': lambda: run('methanol_631gs_exact', METHANOL, '6-31gs', True, 'exact'),
    'methanol_def2svp_exact': lambda: run('methanol_def2svp_exact', METHANOL, 'def2-svp', False, 'exact'),
    'water_def2svp_exact_vwnrpa': lambda: run('water_def2svp_exact_vwnrpa', WATER, 'def2-svp', False, 'exact',
                                              xc='LDA,VWN_RPA'),
    'water_631gs_df_jfit': lambda: run('water_631gs_df_jfit', WATER, '6-31gs', True, 'df', 'def2-universal-jfit', gradient=True),
    'water_def2svp_df_jfit': lambda: run('water_def2svp_df_jfit', WATER, 'def2-svp', False, 'df', 'def2-universal-jfit', gradient=True),
    'methanol_def2svp_df_jfit': lambda: run('methanol_def2svp_df_jfit', METHANOL, 'def2-svp', False, 'df',
                                            'def2-universal-jfit', gradient=True),
    'methanol_631gs_df_jfit': lambda: run('methanol_631gs_df_jfit', METHANOL, '6-31gs', True, 'df', 'def2-universal-jfit'),
    'water_dzvp_df_dgaussa1': lambda: run('water_dzvp_df_dgaussa1', WATER, 'dzvp', False, 'df', 'dgauss-a1-dft-cfit'),
    'water_def2svp_exact_mm': lambda: run('water_def2svp_exact_mm', WATER, 'def2-svp', False, 'exact', mm=mm_environment()),
    'water_631gs_df_mm': lambda: run('water_631gs_df_mm', WATER, '6-31gs', True, 'df', 'def2-universal-jfit',
                                     mm=mm_environment()),
    # Gradients with MM charges need a spherical basis (PySCF's grad_hcore_mm refuses cartesian with DF).
    'water_def2svp_df_mm': lambda: run('water_def2svp_df_mm', WATER, 'def2-svp', False, 'df', 'def2-universal-jfit',
                                       mm=mm_environment(), gradient=True),
    'water8_def2svp_df_jfit': lambda: run('water8_def2svp_df_jfit', water_cluster(8), 'def2-svp', False, 'df',
                                          'def2-universal-jfit', grid=(50, 194)),
    'water8_631gs_df_jfit': lambda: run('water8_631gs_df_jfit', water_cluster(8), '6-31gs', True, 'df',
                                        'def2-universal-jfit', grid=(50, 194)),
    # f shells (def2-TZVP has f on O; its jfit partner has g), pure and cartesian.
    'water_def2tzvp_exact': lambda: run('water_def2tzvp_exact', WATER, 'def2-tzvp', False, 'exact'),
    'water_def2tzvp_cart_df_jfit': lambda: run('water_def2tzvp_cart_df_jfit', WATER, 'def2-tzvp', True, 'df',
                                               'def2-universal-jfit', gradient=True),
    # Other grid schemes: Becke radial grid, SSF partition, Becke size adjustment with Treutler radii.
    'methanol_631gs_becke_radial_ssf': lambda: run('methanol_631gs_becke_radial_ssf', METHANOL, '6-31gs', True, 'exact',
                                                   radial='becke', partition='ssf'),
    'methanol_def2svp_treutler_adjust': lambda: run('methanol_def2svp_treutler_adjust', METHANOL, 'def2-svp', False,
                                                    'df', 'def2-universal-jfit', sizeadjust='treutler'),
    # Pruned angular grids: NWChem's scheme (PySCF's default) with gradients, Treutler-Ahlrichs's on methanol.
    'water_def2svp_df_nwchem_prune': lambda: run('water_def2svp_df_nwchem_prune', WATER, 'def2-svp', False, 'df',
                                                 'def2-universal-jfit', grid=(50, 194), gradient=True, prune='nwchem'),
    'methanol_631gs_df_treutler_prune': lambda: run('methanol_631gs_df_treutler_prune', METHANOL, '6-31gs', True, 'df',
                                                    'def2-universal-jfit', prune='treutler'),
}
# Formation energies E_n - n E_1 of water clusters (seed 001 Table 5.1), 6-31G*, DF, (50, 194).
for _n in (1, 2, 4, 16):
    CASES['cluster%d_631gs_df_jfit' % _n] = (lambda n: lambda: run('cluster%d_631gs_df_jfit' % n, water_cluster(n),
                                            '6-31gs', True, 'df', 'def2-universal-jfit', grid=(50, 194)))(_n)


def main():
    """No arguments: recompute every case. Arguments: recompute those cases only, keep the others."""
    out = os.path.join(HERE, 'data', 'pyscf_references.txt')
    names = sys.argv[1:] or list(CASES)
    old = {}
    if sys.argv[1:] and os.path.exists(out):
        for block in open(out).read().split('case ')[1:]:
            old[block.split()[0]] = 'case ' + block
    for name in names:
        old[name] = CASES[name]()
    with open(out, 'w') as f:
        f.write('# Generated by qmengine/tests/generate_pyscf_references.py with pyscf %s\n' % pyscf.__version__)
        for name in CASES:
            if name in old:
                f.write(old[name])
    print('wrote', out)


if __name__ == '__main__':
    main()
