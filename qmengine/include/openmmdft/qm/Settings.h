#pragma once
// All knobs of the QM engine in one struct, so that the plugin can forward its
// QMMMForce setters one to one. Defaults are documented in qmengine/README.md.
#include <string>

namespace OpenMMDFT {
namespace QM {

enum class CoulombMethod { DensityFitting, Exact };
enum class Functional { SVWN5, SVWN_RPA };
enum class RadialScheme { TreutlerAhlrichs, BeckeChebyshev };
enum class AtomicPartition { Becke, StratmannScuseriaFrisch };
/// Angular grids smaller than GridSettings::angularPoints on some radial shells: none; NWChem's scheme (by the
/// shell's radius relative to the atom's Bragg radius; PySCF's default, gen_grid.nwchem_prune); Treutler and
/// Ahlrichs's (14 points on the inner third of the shells, 50 up to the half; gen_grid.treutler_prune).
enum class GridPruning { None, NWChem, TreutlerAhlrichs };
/// Becke's atomic-size adjustment of the cell boundaries (Becke 1988 appendix).
enum class AtomicSizeAdjustment { None, TreutlerRadii, BraggRadii };
/// Seed 001 §4.5: keep basis values of every group between SCF iterations, or recompute them.
enum class BasisFunctionStorage { Precompute, Recompute };
enum class InitialGuess { Core, SuperpositionOfAtomicDensities };
/// Whether shells with l >= 2 are pure (spherical) or cartesian.
enum class AngularConvention { BasisDefault, Cartesian, Spherical };

struct GridSettings {
    int radialPoints = 75;
    int angularPoints = 302;             ///< a Lebedev size: 6, 14, 26, ..., 590, 770, 974, 1202
    RadialScheme radialScheme = RadialScheme::TreutlerAhlrichs;
    GridPruning pruning = GridPruning::None;
    bool treutlerAtomicXi = true;        ///< element-specific xi of Treutler-Ahlrichs (else xi = 1)
    AtomicPartition partition = AtomicPartition::Becke;
    AtomicSizeAdjustment sizeAdjustment = AtomicSizeAdjustment::None;
    /// Grouping (seed 001 §3.2.2): points of an atom inside a sphere whose radius is that of
    /// radial shell floor(sphereShellFraction * radialPoints) form one group (0 disables spheres);
    /// the radius is also capped at sphereNeighbourFraction x nearest-neighbour distance.
    double sphereShellFraction = 0.6;
    double sphereNeighbourFraction = 0.5;
    /// The other points go to axis-aligned cubes of this edge (bohr).
    double cubeEdge = 3.0;
    /// Significant-function criterion (seed 001 eq. 3.1): a shell is kept for a group when
    /// alpha_min * d^2 < significanceExponent, d = distance from its centre to the group. 20 (was 25): 24 waters in
    /// DZVP on (50, 194) keep 139 instead of 165 functions per point, the XC matrix's multiply-adds -27%, and the SCF
    /// energy and gradient of 8 waters move by 1e-11 Eh and 5e-11 Eh/bohr (4 waters in 6-31G*: 1e-10 and 6e-10).
    double significanceExponent = 20.0;
    bool screening = true;               ///< false: every function in every group (reference)
    /// Points with |partition x quadrature weight| <= this are dropped (0: only exact zeros, as SSF gives). A point of
    /// one atom near another's nucleus has a tiny Becke weight but a large density: 8 waters in DZVP on (50, 194)
    /// drop 5% of their points at 1e-15 with the energy changed by 7e-13 Eh and the gradient by 8e-13 Eh/bohr, but at
    /// 1e-13 (8%) by 1e-8 Eh and at 1e-11 (11%) by 4e-6 Eh.
    double weightThreshold = 1e-15;
    /// Largest number of points handled in one dense block of a group.
    int blockSize = 256;
    /// Precompute keeps basis values of blocks up to this many MiB; later blocks are recomputed
    /// (same arithmetic, so the energy does not change).
    double maxStoredBasisMiB = 2048;
};

struct QMSettings {
    std::string basisSet = "def2-SVP";             ///< shipped name or path to an NWChem file
    AngularConvention angular = AngularConvention::BasisDefault;
    CoulombMethod coulomb = CoulombMethod::DensityFitting;
    std::string auxiliaryBasisSet = "def2-universal-jfit"; ///< same angular convention as basisSet
    Functional functional = Functional::SVWN5;
    GridSettings grid;
    BasisFunctionStorage storage = BasisFunctionStorage::Precompute;
    InitialGuess guess = InitialGuess::SuperpositionOfAtomicDensities;
    double convergence = 1e-7;        ///< max |FDS - SDF| (orthonormal basis) at convergence
    double energyConvergence = 1e-9;  ///< |E(n) - E(n-1)| at convergence, hartree
    int maxIterations = 100;          ///< per attempt (>= 2: convergence is judged between iterations)
    /// A failed SCF restarts from the atomic densities (level shift, damping), then from the core guess.
    bool restartFailedSCF = true;
    int diisSubspace = 8;
    /// Pairs (change of F, change of the error FDS - SDF) of the last SCF iterations that a result hands on and
    /// that the DIIS of an SCF starting from its density recycles (0: none). Along an MD trajectory they span
    /// the directions in which the extrapolated guess errs, so that the first DIIS step removes most of its error.
    int recycledSubspace = 96;
    /// Conjugate-gradient steps (each one Coulomb build) of the Coulomb-response correction after every DIIS step
    /// (CoulombResponse.h; 0: none). The SCF's slow directions in a cluster of molecules are charge moving between
    /// them; the correction takes them out, and the SCF converges to the same solution in fewer iterations.
    int coulombResponseSteps = 2;
    double levelShift = 0.5;          ///< hartree, used when DIIS stalls or diverges
    double integralThreshold = 1e-12; ///< Schwarz / overlap screening of integrals
    double linearDependenceThreshold = 1e-7; ///< overlap eigenvalues below this are dropped
    /// Worker threads of the engine (integrals, grid, XC); 0 = all hardware threads.
    int threads = 0;
    /// Folder with basis/*.nw; empty: $OPENMMDFT_QM_DATA_DIR, then the source tree's data folder.
    std::string dataDirectory;
};

} // namespace QM
} // namespace OpenMMDFT
