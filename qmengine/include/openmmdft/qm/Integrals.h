#pragma once
// Gaussian integrals through Libint2. All functions return matrices in the basis of
// the BasisSet (pure where its shells are pure); internally libint works on
// cartesian shells only and the engine transforms (see Angular.h).
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/LinearSolve.h"
#include "openmmdft/qm/MatrixProducts.h"
#include "openmmdft/qm/ThreeCentreTask.h"
#include "openmmdft/qm/Types.h"
#include <Eigen/Dense>
#include <openmm/OpenMMException.h>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace OpenMMDFT {
namespace QM {

class PairDensityMap;

/// Overlap S, on up to `threads` threads (0: all hardware threads).
Eigen::MatrixXd overlapMatrix(const BasisSet& basis, int threads = 1);
/// Kinetic energy T, likewise.
Eigen::MatrixXd kineticMatrix(const BasisSet& basis, int threads = 1);
/// Potential energy of an electron in the field of point charges: V_uv = -sum_C q_C <u| 1/|r-R_C| |v>.
/// With the nuclei as charges this is the nuclear attraction. Shell pairs whose overlap bound
/// is below threshold are skipped.
Eigen::MatrixXd pointChargeMatrix(const BasisSet& basis, const std::vector<PointCharge>& charges,
                                  double threshold, int threads = 1);
/// The electrostatic potential (hartree per unit charge) at point (bohr) of the nuclei and of the electron density D:
/// sum_A Z_A / |r - R_A| - sum_uv D_uv <u| 1/|r' - r| |v>. Its integrals run on the calling thread.
double electrostaticPotential(const BasisSet& basis, const Eigen::MatrixXd& density, const std::vector<QMAtom>& atoms,
                              const double point[3]);

/// Exact (four-center) Coulomb matrix J_uv = sum_ls (uv|ls) D_ls, integral-direct with
/// Schwarz and density screening; D is the total (alpha+beta) density.
/// Keeps a reference to the basis, which must outlive it (as for DensityFittedCoulomb).
class ExactCoulomb {
public:
    ExactCoulomb(const BasisSet& basis, double threshold, int threads = 1);
    ~ExactCoulomb();
    Eigen::MatrixXd compute(const Eigen::MatrixXd& density) const;
private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Where the density-fitting contractions of each SCF iteration run: gamma = B d and j = B^T c with the stored
/// three-centre tensor B (auxiliary functions x significant function pairs, column-major). By default the host's
/// BLAS; a GPU platform keeps B in device memory, so that only vectors cross per iteration.
class DensityFittingContractions {
public:
    virtual ~DensityFittingContractions() = default;
    /// Take B for this geometry. False if it cannot hold it (the host then keeps it).
    virtual bool store(const Eigen::MatrixXd& B) = 0;
    /// Compute B for this geometry where the contractions run, instead of taking it from the host. False if that
    /// is not done here (the host then computes B and offers it to store()).
    virtual bool computeTensor(const ThreeCentreTask& task) {
        return false;
    }
    /// After computeTensor() returned true: wait until B is there. computeTensor() may return while the work goes on
    /// (a device queue), so that the host makes the metric and its inverse meanwhile.
    virtual void finishTensor() {
    }
    /// After computeTensor(): start the three-centre part of the density-fitted Coulomb gradient,
    /// sum_Q c_Q sum_uv D_uv d(Q|uv), for the cartesian density D and cartesian fit coefficients c. False if
    /// that is not done here (the host computes it). It may return while the work goes on (a device queue), so that
    /// the host computes the metric's part meanwhile; finishThreeCentreGradient() then adds it to G (atoms x 3).
    virtual bool startThreeCentreGradient(const Eigen::MatrixXd& cartesianDensity, const Eigen::VectorXd& cartesianCoefficients) {
        return false;
    }
    virtual void finishThreeCentreGradient(Eigen::MatrixXd& G) {
    }
    /// True where startThreeCentreGradient() also starts the metric's part of the gradient,
    /// -1/2 sum_PQ c_P c_Q d(P|Q), which finishThreeCentreGradient() then adds with the rest.
    virtual bool computesMetricGradient() const {
        return false;
    }
    /// B d (one entry per auxiliary function).
    virtual Eigen::VectorXd fit(const Eigen::VectorXd& pairDensity) = 0;
    /// B^T c (one entry per function pair).
    virtual Eigen::VectorXd project(const Eigen::VectorXd& coefficients) = 0;
    /// Keep the metric (P|Q) and its inverse where the contractions run, so that the Coulomb builds solve for the fit
    /// there too (coulombMatrix). False if that is not done here (the host then applies the inverse).
    virtual bool storeMetric(const Eigen::MatrixXd& metric, const Eigen::MatrixXd& inverse) {
        return false;
    }
    /// After storeMetric() returned true: J[D] of a symmetric D over the basis's functions, built where the
    /// contractions run: the pair density d gathered from D as map's gather() does (map: the same pairs as B's columns,
    /// and T), c = (P|Q)^-1 B d refined once, c' = c0 + (P|Q)^-1 (B d - (P|Q) c0) for c0 = (P|Q)^-1 B d (as
    /// SymmetricPositiveDefiniteSolver does with an explicit inverse), j = B^T c scattered into J as map's scatter()
    /// does. D goes there and J and c (in `coefficients`) come back; the pair vectors stay there.
    virtual Eigen::MatrixXd coulombMatrix(const PairDensityMap& map, const Eigen::MatrixXd& density, Eigen::VectorXd& coefficients) {
        throw OpenMM::OpenMMException("QM: coulombMatrix() without a stored metric (internal error)");
    }
    /// The same for J[scale (D + D^T) / 2] of a matrix held on the device the contractions run on (by its
    /// MatrixProducts), J held beside it: neither crosses the bus, and the fit coefficients stay there. Null where
    /// `density` is held elsewhere or the metric is not stored (the caller then fetches D).
    virtual Held coulombMatrix(const PairDensityMap& map, const Held& density, double scale) {
        return nullptr;
    }
    virtual size_t storedBytes() const = 0;
};

/// The density fitting's significant pairs: the shell pairs (s1 >= s2) whose Schwarz bound (ab|ab)^1/2 times the largest
/// auxiliary (P|P)^1/2 reaches the threshold, and their cartesian function pairs (a >= b), shell pair by shell pair.
struct FittingPairs {
    std::vector<std::pair<int, int>> shellPairs;
    std::vector<int> pairStart;  ///< each shell pair's first function pair
    std::vector<std::pair<int, int>> functionPairs;
    double seconds = 0;          ///< how long the screening took
};
/// The Schwarz screening of DensityFittedCoulomb, on up to `threads` threads. It needs only the bases, so that a caller
/// can run it on a thread of its own while the rest of a geometry's set-up goes on.
FittingPairs screenFittingPairs(const BasisSet& basis, const BasisSet& auxiliary, double threshold, int threads = 1);

/// Density-fitted Coulomb: c = (P|Q)^-1 sum (Q|uv) D_uv, J_uv = sum_Q (uv|Q) c_Q.
/// The three-center integrals of significant shell pairs are computed once and kept;
/// the metric is factored once (SymmetricPositiveDefiniteSolver, through metricSolver when given).
class DensityFittedCoulomb {
public:
    /// contractions: where B d and B^T c run (null: the host), given B after it is computed. meanwhile: the caller's
    /// own set-up work (without BLAS calls of its own; they would wait), run while another thread factors the metric.
    /// inverseOnDevice: metricSolver inverts on the device that computes the tensor, so that the tensor starts first;
    /// it then runs without DenseAlgebra's BLAS lock (withOpenBLASThreads), so that the host's BLAS calls beside it (the
    /// orthogonalization's eigensolver and products) do not wait for the device, and takes that lock itself around
    /// any host BLAS or LAPACK work (a fallback).
    /// screened: screenFittingPairs() of these bases and threshold, perhaps still running on another thread (not valid:
    /// the screening runs here).
    DensityFittedCoulomb(const BasisSet& basis, const BasisSet& auxiliary, double threshold, int threads = 1,
                         const NormalEquationSolver& metricSolver = NormalEquationSolver(),
                         std::unique_ptr<DensityFittingContractions> contractions = nullptr,
                         const std::function<void()>& meanwhile = nullptr, bool inverseOnDevice = false,
                         std::shared_future<FittingPairs> screened = std::shared_future<FittingPairs>());
    ~DensityFittedCoulomb();
    /// J of a symmetric density over the basis's functions (PairDensityMap reads one of D_ab and D_ba for each pair).
    Eigen::MatrixXd compute(const Eigen::MatrixXd& density) const;
    /// J[scale (D + D^T) / 2] of a matrix D held by `products`, held there too: built where D is when the contractions
    /// run on that device with the metric stored there (coulombMatrix), else D is fetched, compute() builds J and it
    /// goes back. Leaves fitCoefficients() as they were.
    Held compute(const MatrixProducts& products, const Held& density, double scale = 1.0) const;
    /// Coefficients c of the last compute() (auxiliary basis, pure where it is pure).
    const Eigen::VectorXd& fitCoefficients() const;
    /// Two-center metric (P|Q).
    const Eigen::MatrixXd& metric() const;
    /// Memory held by the stored three-center integrals (on the host, or where the contractions run).
    size_t storedBytes() const;
    /// Where the contractions ran: "host" or "device".
    const char* contractionsLocation() const;
    /// Where the three-centre integrals and their gradient are computed: "host" or "device".
    const char* integralsLocation() const;
    /// d/dR of the fitted Coulomb energy for density D (pure where the basis is pure) and the coefficients of the
    /// last compute(), as densityFittedCoulombGradient (the three-centre part where the integrals were computed).
    /// cartesianDensity: D in the all-cartesian basis (toCartesianBasis), where the caller has it already; the device's
    /// three-centre part takes that form.
    Eigen::MatrixXd gradient(const Eigen::MatrixXd& density, int numAtoms, double threshold, int threads,
                             const Eigen::MatrixXd* cartesianDensity = nullptr) const;
    /// Seconds spent in the parts of the set-up ("metric", "metricSolver": the factorization or inverse on its own
    /// thread, "metricSolverWait": the wait for it after the rest, "screening": Schwarz bounds and the pair list,
    /// "screeningWait": the wait for a screening given to the constructor,
    /// "tensor", and within it "storeMetric": the metric and its inverse handed to the contractions), in the Coulomb builds so far ("builds.contractions": B d, the fit and B^T c where they run,
    /// with their transfers; "builds.host": the pair gathering and angular transformations around them; "builds.held": the
    /// launches of the builds on held matrices, which run on while the host goes on) and in the
    /// last gradient ("gradient.metric", "gradient.threeCentre").
    const std::map<std::string, double>& timings() const;
private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace QM
} // namespace OpenMMDFT
