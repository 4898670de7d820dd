#pragma once
// Exchange-correlation energy and Kohn-Sham XC matrix on the molecular grid, group by
// group (seed 001 ch. 4): gather the group's significant block of D, basis values
// Phi (points x functions), rho = rowsum((Phi D) o Phi), V += Phi^T diag(w v) Phi.
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Grid.h"
#include "openmmdft/qm/Settings.h"
#include "openmmdft/qm/ShellTables.h"
#include <Eigen/Dense>
#include <map>
#include <string>
#include <vector>

namespace OpenMMDFT {
namespace QM {

/// Values of the functions of the given shells at points: phi(p, f), functions in shell order. The shared shell
/// evaluation (qmengine/src/shared/shellValues.cc), the same code as the GPU platforms' kernels; shells up to f.
void evaluateBasisFunctions(const BasisSet& basis, const std::vector<int>& shells, const double* x,
                            const double* y, const double* z, int npoints, Eigen::MatrixXd& phi);
/// The same with the basis's shell tables built once by the caller.
void evaluateBasisFunctions(const ShellTables& tables, const BasisSet& basis, const std::vector<int>& shells, const double* x,
                            const double* y, const double* z, int npoints, Eigen::MatrixXd& phi);

/// Values and Cartesian gradients (d/dx, d/dy, d/dz at the point) of the same functions, same layout as phi.
void evaluateBasisFunctionGradients(const ShellTables& tables, const BasisSet& basis, const std::vector<int>& shells,
                                    const double* x, const double* y, const double* z, int npoints, Eigen::MatrixXd& phi,
                                    Eigen::MatrixXd dphi[3]);
/// d E_xc / d R_A (numAtoms x 3) through the basis functions only, the grid held fixed (no derivatives of the
/// partition weights, points not moving with their atoms): -2 sum_p w_p v_xc(p) sum_{u on A} grad phi_u(p) (D phi(p))_u.
/// The same approximation as PySCF's grad.rks with grid_response = False; it vanishes as the grid becomes complete.
Eigen::MatrixXd xcGradientFixedGrid(const BasisSet& basis, const MolecularGrid& grid, Functional functional,
                                    const Eigen::MatrixXd& density, int numAtoms, int threads = 1);
/// d E_xc / d R_A (numAtoms x 3) of the energy on the grid that moves with the atoms: the basis-function term,
/// the motion of every point with its parent atom, and the derivatives of the partition weights
/// (PartitionWeightDerivatives). This is the exact derivative of the quadrature (PySCF: grid_response = True).
/// grid must have been built on these atoms with these settings. timings, if given, receives the seconds of its two
/// parts: "basisAndPoints" (xcBasisGradient) and "partitionWeights" (xcPartitionWeightGradient).
Eigen::MatrixXd xcGradient(const BasisSet& basis, const MolecularGrid& grid, const std::vector<QMAtom>& atoms,
                           const GridSettings& gridSettings, Functional functional, const Eigen::MatrixXd& density,
                           int threads = 1, std::map<std::string, double>* timings = nullptr);
/// The basis-function terms of the XC gradient: xcGradientFixedGrid, plus with movingGrid the motion of every point
/// with its parent atom. f, if given, receives f_p = rho_p eps_xc(rho_p) at every point of every batch, in batch
/// order, for xcPartitionWeightGradient (xcGradient = this with movingGrid + that, over allBatches(grid)).
Eigen::MatrixXd xcBasisGradient(const BasisSet& basis, const MolecularGrid& grid, Functional functional, const Eigen::MatrixXd& density,
                                int numAtoms, bool movingGrid, int threads = 1, std::vector<double>* f = nullptr);
/// 0, 1, ..., grid.batches().size() - 1.
std::vector<int> allBatches(const MolecularGrid& grid);
/// The partition-weight part of xcGradient alone, given f_p = rho_p eps_xc(rho_p) at every point of the batches
/// listed (grid.batches() indices; f concatenated in that order): for back ends that compute rho elsewhere.
Eigen::MatrixXd xcPartitionWeightGradient(const MolecularGrid& grid, const std::vector<QMAtom>& atoms, const GridSettings& gridSettings,
                                          const std::vector<int>& batchIndices, const std::vector<double>& f, int threads = 1);
struct XCContribution {
    double energy = 0;
    double electrons = 0; ///< integral of rho on the grid (a quadrature check)
    Eigen::MatrixXd matrix;
};

/// Keeps references to basis and grid: both must outlive the integrator.
class XCIntegrator {
public:
    XCIntegrator(const BasisSet& basis, const MolecularGrid& grid, Functional functional,
                 BasisFunctionStorage storage, int blockSize, int threads = 1,
                 double maxStoredMiB = 1e30);
    /// density: total density matrix (trace with S = number of electrons). factor, if given,
    /// satisfies density = factor factor^T (e.g. occupied orbitals times sqrt(occupation)); groups
    /// with more significant functions than factor columns then get rho from |Phi factor|^2
    /// (seed 001 eq. 1.7), which is cheaper than (Phi D) o Phi (eq. 3.2).
    XCContribution compute(const Eigen::MatrixXd& density, const Eigen::MatrixXd* factor = nullptr) const;
    /// Basis values of block k if they are kept (Precompute, within the memory limit), else empty.
    const std::vector<Eigen::MatrixXd>& storedBasisValues() const { return stored_; }
    /// Number of dense blocks and bytes held by stored basis values.
    size_t numBlocks() const { return blocks_.size(); }
    size_t storedBytes() const;
    /// Blocks whose basis values Precompute keeps, of all blocks (the rest are recomputed: the memory limit).
    size_t numStoredBlocks() const { return stored_.size(); }
private:
    struct Block {
        int batch;
        int first, count; // points [first, first+count) of the batch
    };
    const BasisSet& basis_;
    ShellTables tables_;
    const MolecularGrid& grid_;
    Functional functional_;
    BasisFunctionStorage storage_;
    int threads_;
    std::vector<Block> blocks_;
    std::vector<Eigen::MatrixXd> stored_;
};

} // namespace QM
} // namespace OpenMMDFT
