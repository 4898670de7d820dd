// XC contribution to the nuclear gradient (XCIntegrator.h), and the basis-function gradients it needs.
#include "openmmdft/qm/XCIntegrator.h"
#include <openmm/OpenMMException.h>
#include "openmmdft/qm/LDA.h"
#include "Parallel.h"
#include "ShellValues.h"
#include "WallClock.h"
#include <algorithm>
#include <cmath>

namespace OpenMMDFT {
namespace QM {

void evaluateBasisFunctionGradients(const ShellTables& tables, const BasisSet& basis, const std::vector<int>& shells,
                                    const double* x, const double* y, const double* z, int npoints, Eigen::MatrixXd& phi,
                                    Eigen::MatrixXd dphi[3]) {
    int nf = 0;
    for (int s : shells)
        nf += basis.shells()[s].size();
    phi.resize(npoints, nf);
    for (int d = 0; d < 3; d++)
        dphi[d].resize(npoints, nf);
    int col = 0;
    for (int s : shells) {
        shellValuesAtPoints(tables, s, x, y, z, npoints, phi.rows(), phi.col(col).data(), dphi[0].col(col).data(),
                            dphi[1].col(col).data(), dphi[2].col(col).data());
        col += basis.shells()[s].size();
    }
}

namespace {

/**
 * The partition-weight terms of one batch on the moving grid, given f_p = rho_p eps_xc(rho_p) at its points:
 * w = w_quadrature W_A(r), so f w_quadrature dW_A/dR_B goes to B != A, and to A (which also carries the
 * point) minus their sum, by translational invariance of W_A.
 */
void addPartitionWeightTerms(const GridBatch& g, const double* f, const PartitionWeightDerivatives& partition, int numAtoms,
                             Eigen::MatrixXd& G) {
    std::vector<double> dW;
    for (int p = 0; p < (int) g.size(); p++) {
        if (f[p] == 0)
            continue;
        const int A = g.parentAtom[p];
        const double r[3] = {g.x[p], g.y[p], g.z[p]};
        const double W = partition.compute(A, r, dW);
        if (!(W > 1e-14))
            continue;
        const double scale = f[p] * g.w[p] / W;
        for (int B = 0; B < numAtoms; B++) {
            if (B == A)
                continue;
            for (int d = 0; d < 3; d++) {
                const double term = scale * dW[(size_t) B * 3 + d];
                G(B, d) += term;
                G(A, d) -= term;
            }
        }
    }
}

/** Where the points of each listed batch start when the batches' points are concatenated in that order
 * (batchIndices.size() + 1 entries: the last is the total). */
std::vector<size_t> pointOffsets(const MolecularGrid& grid, const std::vector<int>& batchIndices) {
    std::vector<size_t> first(batchIndices.size() + 1, 0);
    for (size_t k = 0; k < batchIndices.size(); k++)
        first[k + 1] = first[k] + grid.batches()[batchIndices[k]].size();
    return first;
}

} // namespace

Eigen::MatrixXd xcBasisGradient(const BasisSet& basis, const MolecularGrid& grid, Functional functional, const Eigen::MatrixXd& density,
                                int numAtoms, bool movingGrid, int threads, std::vector<double>* f) {
    const auto& batches = grid.batches();
    threads = std::max(1, std::min(resolveThreads(threads), (int) batches.size()));
    const ShellTables tables(basis);
    std::vector<int> atomOf(basis.size()); // the atom of every basis function
    for (int s = 0; s < basis.numShells(); s++)
        for (int i = 0; i < basis.shells()[s].size(); i++)
            atomOf[basis.offset(s) + i] = basis.shells()[s].atom;
    const std::vector<size_t> first = pointOffsets(grid, allBatches(grid));
    if (f)
        f->assign(first.back(), 0.0);
    const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(numAtoms, 3);
    const Eigen::MatrixXd gradient = parallelChunkedSum<Eigen::MatrixXd>((int) batches.size(), threads, zero, [&](int b, Eigen::MatrixXd& G, int t) {
        const GridBatch& g = batches[b];
        const std::vector<int>& fn = g.functions;
        const int nf = (int) fn.size(), np = (int) g.size();
        if (np == 0 || nf == 0)
            return; // rho = 0: no term, and f = 0
        Eigen::MatrixXd phi, dphi[3], X;
        Eigen::VectorXd wv(np);
        Eigen::MatrixXd Dsub(nf, nf);
        for (int j = 0; j < nf; j++)
            for (int i = 0; i < nf; i++)
                Dsub(i, j) = density(fn[i], fn[j]);
        evaluateBasisFunctionGradients(tables, basis, g.shells, g.x.data(), g.y.data(), g.z.data(), np, phi, dphi);
        X.noalias() = phi * Dsub; // (D phi)_u at each point
        const Eigen::VectorXd rho = (X.array() * phi.array()).rowwise().sum();
        for (int p = 0; p < np; p++) {
            const LDAPoint xc = ldaExchangeCorrelation(functional, rho[p]);
            wv[p] = g.w[p] * xc.v;
            if (f)
                (*f)[first[b] + p] = rho[p] * xc.eps;
        }
        // M_d(p, u) = 2 w v dphi_u,d X_u. Basis functions on atom C move with C: -sum_p M_d(p, u) to C; on the moving
        // grid the point moves with its parent atom A: + sum_u M_d(p, u) (= w v d rho/dr_d) to A. One pass over the
        // columns for the three directions, without temporaries of the block's size.
        Eigen::MatrixXd perPoint = Eigen::MatrixXd::Zero(np, 3);
        for (int i = 0; i < nf; i++) {
            const double* __restrict x = X.col(i).data();
            const double* __restrict gx = dphi[0].col(i).data();
            const double* __restrict gy = dphi[1].col(i).data();
            const double* __restrict gz = dphi[2].col(i).data();
            const double* __restrict scale = wv.data();
            double* __restrict px = perPoint.col(0).data();
            double* __restrict py = perPoint.col(1).data();
            double* __restrict pz = perPoint.col(2).data();
            double fx = 0, fy = 0, fz = 0;
            for (int p = 0; p < np; p++) {
                const double t = 2 * scale[p] * x[p];
                const double mx = t * gx[p], my = t * gy[p], mz = t * gz[p];
                fx += mx;
                fy += my;
                fz += mz;
                px[p] += mx;
                py[p] += my;
                pz[p] += mz;
            }
            const int C = atomOf[fn[i]];
            G(C, 0) -= fx;
            G(C, 1) -= fy;
            G(C, 2) -= fz;
        }
        if (movingGrid)
            for (int p = 0; p < np; p++)
                for (int d = 0; d < 3; d++)
                    G(g.parentAtom[p], d) += perPoint(p, d);
    });
    return gradient;
}

Eigen::MatrixXd xcGradientFixedGrid(const BasisSet& basis, const MolecularGrid& grid, Functional functional, const Eigen::MatrixXd& density,
                                    int numAtoms, int threads) {
    return xcBasisGradient(basis, grid, functional, density, numAtoms, false, threads, nullptr);
}

Eigen::MatrixXd xcPartitionWeightGradient(const MolecularGrid& grid, const std::vector<QMAtom>& atoms, const GridSettings& gridSettings,
                                          const std::vector<int>& batchIndices, const std::vector<double>& f, int threads) {
    const PartitionWeightDerivatives partition(atoms, gridSettings);
    const int numAtoms = (int) atoms.size(), n = (int) batchIndices.size();
    const std::vector<size_t> first = pointOffsets(grid, batchIndices);
    if (first[n] != f.size())
        throw OpenMM::OpenMMException("QM: xcPartitionWeightGradient: f has the wrong length");
    threads = std::max(1, std::min(resolveThreads(threads), std::max(n, 1)));
    const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(numAtoms, 3);
    const Eigen::MatrixXd gradient = parallelChunkedSum<Eigen::MatrixXd>(n, threads, zero, [&](int k, Eigen::MatrixXd& G, int t) {
        addPartitionWeightTerms(grid.batches()[batchIndices[k]], &f[first[k]], partition, numAtoms, G);
    });
    return gradient;
}

Eigen::MatrixXd xcGradient(const BasisSet& basis, const MolecularGrid& grid, const std::vector<QMAtom>& atoms,
                           const GridSettings& gridSettings, Functional functional, const Eigen::MatrixXd& density, int threads,
                           std::map<std::string, double>* timings) {
    const double start = seconds();
    std::vector<double> f;
    Eigen::MatrixXd G = xcBasisGradient(basis, grid, functional, density, (int) atoms.size(), true, threads, &f);
    const double basisDone = seconds();
    G += xcPartitionWeightGradient(grid, atoms, gridSettings, allBatches(grid), f, threads);
    if (timings) {
        (*timings)["basisAndPoints"] = basisDone - start;
        (*timings)["partitionWeights"] = seconds() - basisDone;
    }
    return G;
}

std::vector<int> allBatches(const MolecularGrid& grid) {
    std::vector<int> all(grid.batches().size());
    for (size_t b = 0; b < all.size(); b++)
        all[b] = (int) b;
    return all;
}

} // namespace QM
} // namespace OpenMMDFT
