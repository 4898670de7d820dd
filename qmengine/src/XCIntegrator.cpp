#include "openmmdft/qm/XCIntegrator.h"
#include "openmmdft/qm/LDA.h"
#include "Parallel.h"
#include "ShellValues.h"
#include <cmath>

namespace OpenMMDFT {
namespace QM {

void evaluateBasisFunctions(const ShellTables& tables, const BasisSet& basis, const std::vector<int>& shells, const double* x,
                            const double* y, const double* z, int npoints, Eigen::MatrixXd& phi) {
    int nf = 0;
    for (int s : shells)
        nf += basis.shells()[s].size();
    phi.resize(npoints, nf);
    int col = 0;
    for (int s : shells) {
        shellValuesAtPoints(tables, s, x, y, z, npoints, phi.rows(), phi.col(col).data());
        col += basis.shells()[s].size();
    }
}

void evaluateBasisFunctions(const BasisSet& basis, const std::vector<int>& shells, const double* x, const double* y,
                            const double* z, int npoints, Eigen::MatrixXd& phi) {
    evaluateBasisFunctions(ShellTables(basis), basis, shells, x, y, z, npoints, phi);
}

XCIntegrator::XCIntegrator(const BasisSet& basis, const MolecularGrid& grid, Functional functional,
                           BasisFunctionStorage storage, int blockSize, int threads, double maxStoredMiB)
    : basis_(basis), tables_(basis), grid_(grid), functional_(functional), storage_(storage), threads_(resolveThreads(threads)) {
    const auto& batches = grid.batches();
    for (int b = 0; b < (int) batches.size(); b++) {
        if (batches[b].functions.empty())
            continue;
        const int n = (int) batches[b].size();
        for (int first = 0; first < n; first += blockSize)
            blocks_.push_back({b, first, std::min(blockSize, n - first)});
    }
    if (storage_ == BasisFunctionStorage::Precompute) {
        // Keep blocks in order until the memory limit; the rest are recomputed in compute().
        size_t keep = 0;
        double bytes = 0;
        for (; keep < blocks_.size(); keep++) {
            bytes += 8.0 * blocks_[keep].count * batches[blocks_[keep].batch].functions.size();
            if (bytes > maxStoredMiB * 1048576.0)
                break;
        }
        stored_.resize(keep);
        parallelFor((int) keep, threads_, [&](int k, int) {
            const GridBatch& g = batches[blocks_[k].batch];
            const int f = blocks_[k].first;
            evaluateBasisFunctions(tables_, basis_, g.shells, &g.x[f], &g.y[f], &g.z[f], blocks_[k].count, stored_[k]);
        });
    }
}

size_t XCIntegrator::storedBytes() const {
    size_t n = 0;
    for (const auto& m : stored_)
        n += m.size() * sizeof(double);
    return n;
}

XCContribution XCIntegrator::compute(const Eigen::MatrixXd& density, const Eigen::MatrixXd* factor) const {
    const int nbf = basis_.size();
    const auto& batches = grid_.batches();
    const int threads = std::max(1, std::min(threads_, (int) blocks_.size()));
    // Per-thread scratch; each block's V goes to its slot's matrix (below).
    struct Partial {
        Eigen::MatrixXd phiLocal, Dsub, X, Vsub;
    };
    std::vector<Partial> parts(threads);
    std::vector<double> blockEnergy(blocks_.size()), blockElectrons(blocks_.size());
    auto addBlock = [&](int k, int t, Eigen::MatrixXd& V) {
        Partial& P = parts[t];
        const Block& blk = blocks_[k];
        const GridBatch& g = batches[blk.batch];
        const std::vector<int>& fn = g.functions;
        const int nf = (int) fn.size();
        const bool useFactor = factor != nullptr && factor->cols() < nf;
        if (useFactor) { // rows of the factor for the group's functions
            P.Dsub.resize(nf, factor->cols());
            for (int i = 0; i < nf; i++)
                P.Dsub.row(i) = factor->row(fn[i]);
        }
        else { // the group's block of D
            P.Dsub.resize(nf, nf);
            for (int j = 0; j < nf; j++)
                for (int i = 0; i < nf; i++)
                    P.Dsub(i, j) = density(fn[i], fn[j]);
        }
        const Eigen::MatrixXd* phi;
        if (k < (int) stored_.size())
            phi = &stored_[k];
        else {
            evaluateBasisFunctions(tables_, basis_, g.shells, &g.x[blk.first], &g.y[blk.first], &g.z[blk.first], blk.count,
                                   P.phiLocal);
            phi = &P.phiLocal;
        }
        P.X.noalias() = (*phi) * P.Dsub;
        Eigen::VectorXd wv(blk.count);
        // rho_p = sum_u (Phi D)_pu Phi_pu, or sum_k (Phi F)_pk^2, column by column (contiguous).
        const Eigen::VectorXd rhoBlock = useFactor ? Eigen::VectorXd(P.X.array().square().rowwise().sum())
                                                   : Eigen::VectorXd((P.X.array() * phi->array()).rowwise().sum());
        double energy = 0, electrons = 0;
        for (int p = 0; p < blk.count; p++) {
            const double rho = rhoBlock[p];
            const double w = g.w[blk.first + p];
            const LDAPoint xc = ldaExchangeCorrelation(functional_, rho);
            energy += w * rho * xc.eps;
            electrons += w * rho;
            wv[p] = w * xc.v;
        }
        blockEnergy[k] = energy; // summed in block order below: deterministic energies
        blockElectrons[k] = electrons;
        // V_sub = Phi^T diag(w v) Phi, lower triangle only (V is symmetric).
        P.X.noalias() = wv.asDiagonal() * (*phi);
        P.Vsub.setZero(nf, nf);
        P.Vsub.triangularView<Eigen::Lower>() += phi->transpose() * P.X;
        for (int j = 0; j < nf; j++)
            for (int i = j; i < nf; i++) {
                V(fn[i], fn[j]) += P.Vsub(i, j);
                if (i != j)
                    V(fn[j], fn[i]) += P.Vsub(i, j);
            }
    };
    // V is summed in 2 x threads slots, block k in slot k % slots in block order, which the threads take as they
    // come free: the sums do not depend on scheduling (the SCF is the same in every run), and the load stays balanced.
    const int slots = std::min((int) blocks_.size(), 2 * threads);
    std::vector<Eigen::MatrixXd> slotMatrix(slots, Eigen::MatrixXd::Zero(nbf, nbf));
    parallelFor(slots, threads, [&](int slot, int t) {
        for (int k = slot; k < (int) blocks_.size(); k += slots)
            addBlock(k, t, slotMatrix[slot]);
    });
    XCContribution out;
    out.matrix = Eigen::MatrixXd::Zero(nbf, nbf);
    for (const Eigen::MatrixXd& V : slotMatrix)
        out.matrix += V;
    for (size_t k = 0; k < blocks_.size(); k++) {
        out.energy += blockEnergy[k];
        out.electrons += blockElectrons[k];
    }
    return out;
}

} // namespace QM
} // namespace OpenMMDFT
