#pragma once
// Restricted Kohn-Sham LDA with electrostatic embedding in MM point charges.
// Data flow: atoms -> basis on atoms -> one-electron integrals (S, T, V_nuc, V_mm)
// -> Coulomb (exact or density fitted) -> grid -> SCF (guess, DIIS, level shift) -> result.
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Grid.h"
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/LinearSolve.h"
#include "openmmdft/qm/XCBackend.h"
#include "openmmdft/qm/XCIntegrator.h"
#include "openmmdft/qm/Settings.h"
#include "openmmdft/qm/Types.h"
#include <Eigen/Dense>
#include <openmm/OpenMMException.h>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace OpenMMDFT {
namespace QM {

/// The SCF did not converge (every restart strategy was tried). A distinct type, so that callers can
/// tell a geometry where the SCF fails (a minimizer's trial step) from an input error.
class SCFConvergenceError : public OpenMM::OpenMMException {
public:
    explicit SCFConvergenceError(const std::string& message) : OpenMM::OpenMMException(message) {}
};

// SharedPair and SharedMatrix (DenseAlgebra.h): shared, not copied, by the results, guesses and density history that
// hand them on (DIIS's recycled pairs: up to 3 x 96 packed matrices of n_bf^2 / 2 floats each).

/// A density to start from (e.g. the previous MD step's). Used when its size matches the basis.
struct DensityGuess {
    Eigen::MatrixXd density;
    /// Optional, from the SCFs that led to `density` (QMResult's own, newest first): changes of the Fock matrix
    /// between SCF iterations (AO basis) and of the error FDS - SDF (in the orthonormal basis S^-1/2), packed by their
    /// upper triangles as column vectors in single precision (packedPair of packSymmetric and packAntisymmetric,
    /// DenseAlgebra.h). An SCF that
    /// starts from this guess recycles them in its DIIS subspace (QMSettings::recycledSubspace). coulombChanges
    /// (one per pair, or none) are the changes of the Coulomb matrix J[D] that went with them, which the Coulomb-response
    /// step needs (QMSettings::coulombResponseSteps).
    std::vector<SharedPair> fockChanges, errorChanges, coulombChanges;
    /// Optional: the orbitals of the SCF that led to `density` in its symmetrically orthonormalized basis, S^1/2 C (an
    /// orthogonal matrix, occupied first). In the next geometry X U (X = S^-1/2 there) are orthonormal orbitals close to
    /// its own, from which the first iteration's orbitals follow by a rotation instead of an eigensolver.
    SharedMatrix lowdinOrbitals;
    /// Optional: the Gram matrix of errorChanges (<de_j, de_k>, the order of the list), so that the next SCF's DIIS
    /// need not form it again (96 pairs for 456 functions: 1 GFLOP streamed from memory).
    SharedMatrix errorChangeGram;
};

/**
 * An electrostatic term at the level of the Mulliken charges q_A = Z_A - sum_{mu on A} (D S)_{mu mu} of the QM atoms:
 * E = sum_A q_A potential_A + 1/2 sum_AB q_A kernel_AB q_B (e.g. the periodic remainder of an Ewald sum, the way
 * QM/MM-Ewald puts a QM region into a periodic MM system). It is part of the SCF (Fock matrix
 * -1/2 S_{mu nu} (V_A(mu) + V_A(nu)), V = potential + kernel q) and of the gradient through the overlap's
 * derivative; the derivatives of potential and kernel themselves are the caller's (QMResult reports q and V).
 */
struct MullikenElectrostatics {
    Eigen::VectorXd potential; ///< hartree / e, one per QM atom
    Eigen::MatrixXd kernel;    ///< hartree / e^2, symmetric
};

/// Everything in hartree / bohr / e. total = oneElectron + coulomb + xc + nuclearRepulsion + qmmm + longRange.
struct QMResult {
    double total = 0;
    double oneElectron = 0;      ///< tr(D (T + V_nuclei))
    double coulomb = 0;          ///< 1/2 tr(D J)
    double xc = 0;
    double nuclearRepulsion = 0; ///< QM nuclei among themselves
    double qmmm = 0;             ///< qmmmElectronic + qmmmNuclear
    double qmmmElectronic = 0;   ///< tr(D V_mm)
    double qmmmNuclear = 0;      ///< QM nuclei - MM charges
    double longRange = 0;        ///< the MullikenElectrostatics term (0 without one)
    Eigen::VectorXd mullikenCharges;      ///< q_A of the converged density (with a MullikenElectrostatics term)
    Eigen::VectorXd longRangePotential;   ///< V_A = potential + kernel q (with a MullikenElectrostatics term)
    int iterations = 0;           ///< of the attempt that converged
    int restarts = 0;             ///< failed attempts before it (restarts from atomic densities / core guess)
    int totalIterations = 0;      ///< all attempts together
    int levelShiftIteration = 0;  ///< first iteration with the level-shift fallback (0: not needed)
    std::vector<double> orbitalEnergies;
    double homoLumoGap = 0;      ///< 0 if there is no virtual orbital
    int occupiedOrbitals = 0;
    Eigen::MatrixXd density;                ///< total density matrix D (AO basis)
    Eigen::MatrixXd orbitals;               ///< MO coefficients, columns by increasing energy
    Eigen::MatrixXd energyWeightedDensity;  ///< W = 2 sum_occ eps_ij C_i C_j^T of the density's own occupied orbitals
                                            ///< (eps_ij = C_i^T F C_j; for gradients)
    std::vector<double> energyHistory, errorHistory; ///< per SCF iteration
    /// Pairs for the next SCF's DIIS (DensityGuess): this SCF's, then those it recycled, newest first, at most
    /// QMSettings::recycledSubspace.
    std::vector<SharedPair> fockChanges, errorChanges, coulombChanges;  ///< coulombChanges: with the response step
    SharedMatrix lowdinOrbitals;  ///< S^1/2 orbitals (DensityGuess::lowdinOrbitals); null unless X = S^-1/2
    SharedMatrix errorChangeGram; ///< the Gram matrix of errorChanges (DensityGuess::errorChangeGram); null without pairs
    int recycledPairs = 0;       ///< pairs from the guess in this SCF's DIIS subspace (0 if it dropped them)
    int coulombResponseBuilds = 0; ///< Coulomb matrices built by the Coulomb-response steps (QMSettings::coulombResponseSteps)
    int orbitalRotations = 0;      ///< SCF steps whose orbitals came from rotating the last step's, not an eigensolver
    double gridElectrons = 0;    ///< integral of rho on the grid
    size_t gridPoints = 0;
    std::string xcBackend;           ///< where the XC work ran (XCBackend::name)
    std::string coulombContractions; ///< where the density-fitting contractions ran: "host" or "device"
    size_t densityFittingBytes = 0;  ///< the stored three-centre tensor (and metric and Hermite tables, on a device), there (0: exact Coulomb)
    size_t storedBasisBytes = 0;     ///< basis values kept between SCF iterations, there
    std::string scfProducts = "host"; ///< where the SCF's products of basis-sized matrices ran (MatrixProducts::name where
                                      ///< any ran there; small ones run on the host)
    size_t scfProductBytes = 0;      ///< the memory those products hold there (0: all on the host)
    std::string basisStorageNotice;  ///< XCBackend::notice()
    /// Wall-clock seconds: "setup.integrals" (its parts "setup.integrals.overlapAndKinetic", ".pointCharges", and
    /// the overlap's eigensystem ".orthogonalization", beside the fitting set-up where a device computes the tensor:
    /// then ".orthogonalizationWait" is what the set-up waited for it at the end), "setup.grid", "setup.xc",
    /// "setup.coulomb" (with density fitting also its parts "setup.coulomb.metric", ".metricSolver", ".screening",
    /// ".tensor"), "guess", "scf.recycling" (the recycled DIIS pairs taken up, and their Gram matrix grown for the next SCF), "scf.coulomb", "scf.xc",
    /// "scf.fockAndDIIS" (energy terms, the commutator error, DIIS; its parts "scf.fockAndDIIS.commutator" and
    /// ".diis"), "scf.diagonalization", "scf.orbitalRotation", "scf.coulombResponse", "scf.finalOrbitals" (the final
    /// Fock matrix's orbitals, beside the gradient with KohnShamLDA::compute's deferOrbitals, then also
    /// "scf.finalOrbitalsWait"), "scf.energyWeightedDensity", with density fitting the sums over every Coulomb build
    /// "scf.coulomb.builds.contractions" and ".host" (DensityFittedCoulomb::timings), "total" (set-up, guess and
    /// iterations).
    std::map<std::string, double> timings;
    DensityGuess guess() const { return {density, fockChanges, errorChanges, coulombChanges, lowdinOrbitals, errorChangeGram}; }
};

/// Nuclear gradient of QMResult::total (hartree / bohr): dE/dR of every QM atom and dE/dC of every MM charge.
struct QMGradient {
    Eigen::MatrixXd atoms; ///< numAtoms x 3
    Eigen::MatrixXd mm;    ///< mmCharges x 3
    /// Wall-clock seconds: "gradient.oneElectron", "gradient.pointCharges", "gradient.coulomb", "gradient.xc", "gradient.total".
    std::map<std::string, double> timings;
};

class KohnShamLDA {
public:
    /// xcFactory: where the XC work of each geometry runs (null: HostXCBackendFactory, the host's threads).
    /// metricSolver: how the density-fitting metric is solved (empty: Eigen's Cholesky; the plugin passes its
    /// least-squares kernel).
    explicit KohnShamLDA(const QMSettings& settings, std::shared_ptr<const XCBackendFactory> xcFactory = nullptr,
                         NormalEquationSolver metricSolver = NormalEquationSolver());
    ~KohnShamLDA();
    /// Throws OpenMMException for bad input (odd electron count, atoms closer than 0.1 A, an MM charge
    /// closer than 0.1 A to a nucleus, unknown element, basis without the element), and SCFConvergenceError
    /// if the SCF does not converge: from the guess, then (settings.restartFailedSCF) from the atomic
    /// densities with a level shift and damping, then from the core guess with a larger shift.
    /// deferOrbitals: the caller will call completeOrbitals() (after gradient()): where a device computes the gradient,
    /// the final Fock matrix's orbitals (QMResult::orbitals, orbitalEnergies, homoLumoGap, lowdinOrbitals) are then
    /// made on a thread of their own beside it, and are absent from the result until completeOrbitals() fills them in
    /// (elsewhere they are in the result already, and completeOrbitals() does nothing).
    QMResult compute(const std::vector<QMAtom>& atoms, int charge, const std::vector<PointCharge>& mmCharges,
                     const DensityGuess* previous = nullptr, const MullikenElectrostatics* longRange = nullptr,
                     bool deferOrbitals = false);
    /// Waits for the orbitals that compute() with deferOrbitals left to a thread and moves them into result (the last
    /// compute()'s), with their seconds ("scf.finalOrbitals") and the wait ("scf.finalOrbitalsWait").
    void completeOrbitals(QMResult& result);
    /// Bytes of device memory the engine's back-end factory holds now (XCBackendFactory::deviceBytes; 0 on the host).
    size_t deviceBytes() const;
    const QMSettings& settings() const { return settings_; }
    /// Analytic gradient of result.total for the last compute() (result must be its result): nuclear repulsion,
    /// one-electron (kinetic, nuclei, MM charges, with the Pulay term -sum W dS), density-fitted Coulomb, and XC
    /// on the grid that moves with the atoms (xcGradient, partition-weight derivatives included), i.e. the exact
    /// derivative of the energy as computed, which energy-conserving MD needs. Atomic units.
    /// Throws OpenMMException for exact (non-fitted) Coulomb, which has no gradient yet.
    QMGradient gradient(const QMResult& result) const;
    /// The same with the XC grid held fixed (xcGradientFixedGrid; PySCF's grid_response = False): cheaper, not the
    /// exact derivative (the difference shrinks as the grid grows).
    QMGradient gradientFixedGrid(const QMResult& result) const;
    /// The last computation's basis and grid (kept for analysis and future gradients).
    const BasisSet& basis() const;
    const MolecularGrid& grid() const;
    /// The XC back end of the last geometry.
    XCBackend& xcBackend() const;
    /// Null when the Coulomb method is Exact.
    const DensityFittedCoulomb* densityFitting() const;
private:
    struct System;
    QMGradient gradientTerms(const QMResult& result, bool gridResponse) const;
    QMSettings settings_;
    std::shared_ptr<const XCBackendFactory> xcFactory_;
    NormalEquationSolver metricSolver_;
    BasisDefinition basisDefinition_, auxiliaryDefinition_;
    std::unique_ptr<System> last_;
    std::map<int, Eigen::MatrixXd> atomicDensities_; ///< SAD cache by element
    const Eigen::MatrixXd& atomicDensity(int Z);
    Eigen::MatrixXd superpositionOfAtomicDensities(const std::vector<QMAtom>& atoms, const BasisSet& basis);
};

} // namespace QM
} // namespace OpenMMDFT
