#include "openmmdft/qm/DIIS.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <cmath>

namespace OpenMMDFT {
namespace QM {

namespace {
Eigen::Map<const Eigen::VectorXd> flat(const Eigen::MatrixXd& m) {
    return Eigen::Map<const Eigen::VectorXd>(m.data(), m.size());
}
} // namespace

Eigen::VectorXd DIIS::recycledErrorDots(const Eigen::MatrixXd& error) const {
    if (packedPairs_)
        return streamedDots(pairsOf(sharedErrors_), packAntisymmetric(error), threads_);
    return streamedDots(recycledErrors_, flat(error), threads_);
}

void DIIS::addRecycledCombination(bool companions, const Eigen::VectorXd& weights, Eigen::MatrixXd& sum) const {
    if (!packedPairs_) {
        addStreamedCombination(companions ? recycledCompanions_ : recycledFocks_, weights,
                               Eigen::Map<Eigen::VectorXd>(sum.data(), sum.size()), threads_);
        return;
    }
    Eigen::VectorXd packed = Eigen::VectorXd::Zero(packedSymmetricSize(sum.rows()));
    addStreamedCombination(pairsOf(companions ? sharedCompanions_ : sharedFocks_), weights, packed, threads_);
    addUnpackedSymmetric(packed, sum);
}

void DIIS::dropRecycled() {
    recycledFocks_.clear();
    recycledErrors_.clear();
    recycledCompanions_.clear();
    sharedFocks_.clear();
    sharedErrors_.clear();
    sharedCompanions_.clear();
    recycledCombinations_.resize(0, 0);
    for (Eigen::VectorXd& o : overlaps_)
        o.resize(0);
}

void DIIS::reset() {
    focks_.clear();
    errors_.clear();
    companions_.clear();
    combinedCompanion_.resize(0, 0);
    overlaps_.clear();
    errorProducts_.resize(0, 0);
    dropRecycled();
}

void DIIS::setRecycled(const std::vector<Eigen::MatrixXd>& fockChanges, const std::vector<Eigen::MatrixXd>& errorChanges) {
    std::vector<const Eigen::MatrixXd*> f, e;
    for (const Eigen::MatrixXd& m : fockChanges)
        f.push_back(&m);
    for (const Eigen::MatrixXd& m : errorChanges)
        e.push_back(&m);
    setRecycled(f, e);
}

bool DIIS::combineRecycled(const Eigen::MatrixXd& gram, int m) {
    // Orthonormal combinations of the error changes (eigenvectors of their Gram matrix), the Fock changes combined
    // alike, so that the subspace equations stay well conditioned however nearly dependent the pairs are
    // (successive SCFs explore similar directions). The pairs are scaled to unit length first: their sizes span the
    // SCFs' convergence (1e-3 to 1e-9), and unscaled the smallest ones, which carry the directions the last
    // iterations need, would fall under the cut as more pairs join (measured: 96 unscaled pairs converge slower
    // than 48; scaled, faster).
    if (!gram.allFinite())
        return false;
    const Eigen::VectorXd scale = gram.diagonal().cwiseSqrt().unaryExpr([](double norm) { return norm > 0 ? 1 / norm : 0.0; });
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(scale.asDiagonal() * gram * scale.asDiagonal());
    const Eigen::VectorXd& values = eigen.eigenvalues();
    const double largest = values[m - 1];
    if (!(largest > 0))
        return false;
    int kept = 0;
    while (kept < m && values[m - 1 - kept] > RECYCLED_EIGENVALUE_CUTOFF * largest)
        kept++;
    recycledCombinations_ = scale.asDiagonal() * eigen.eigenvectors().rightCols(kept) *
                            values.tail(kept).cwiseSqrt().cwiseInverse().asDiagonal();
    return true;
}

namespace {
/// The Gram matrix of the first m error changes: the given one's corner where it is of all count pairs, else made.
template <class List>
Eigen::MatrixXd recycledGram(const List& errors, int m, size_t count, const Eigen::MatrixXd* given, int threads) {
    if (given != nullptr && given->rows() == (Eigen::Index) count && given->cols() == (Eigen::Index) count)
        return given->topLeftCorner(m, m);
    return streamedGram(List(errors.begin(), errors.begin() + m), threads);
}
} // namespace

void DIIS::setRecycled(const std::vector<const Eigen::MatrixXd*>& fockChanges, const std::vector<const Eigen::MatrixXd*>& errorChanges,
                       const std::vector<const Eigen::MatrixXd*>& companionChanges, const Eigen::MatrixXd* errorGram) {
    reset();
    if (packedPairs_)
        throw OpenMM::OpenMMException("QM: whole recycled pairs given to a DIIS that takes packed ones (internal error)");
    const int m = (int) std::min(fockChanges.size(), errorChanges.size());
    if (m == 0)
        return;
    for (int j = 0; j < m; j++)
        if (fockChanges[j]->size() != fockChanges[0]->size() || errorChanges[j]->size() != errorChanges[0]->size())
            return;
    if (!combineRecycled(recycledGram(errorChanges, m, errorChanges.size(), errorGram, threads_), m))
        return;
    recycledFocks_.assign(fockChanges.begin(), fockChanges.begin() + m);
    recycledErrors_.assign(errorChanges.begin(), errorChanges.begin() + m);
    if (companionChanges.size() >= (size_t) m)
        recycledCompanions_.assign(companionChanges.begin(), companionChanges.begin() + m);
}

void DIIS::setRecycled(const std::vector<SharedPair>& fockChanges, const std::vector<SharedPair>& errorChanges,
                       const std::vector<SharedPair>& companionChanges, const Eigen::MatrixXd* errorGram) {
    reset();
    if (!packedPairs_)
        throw OpenMM::OpenMMException("QM: packed recycled pairs given to a DIIS that takes whole ones (internal error)");
    const int m = (int) std::min(fockChanges.size(), errorChanges.size());
    if (m == 0)
        return;
    for (int j = 0; j < m; j++)
        if (fockChanges[j]->size() != fockChanges[0]->size() || errorChanges[j]->size() != errorChanges[0]->size())
            return;
    std::vector<SharedPair> errors(errorChanges.begin(), errorChanges.begin() + m);
    if (!combineRecycled(recycledGram(pairsOf(errors), m, errorChanges.size(), errorGram, threads_), m))
        return;
    sharedFocks_.assign(fockChanges.begin(), fockChanges.begin() + m);
    sharedErrors_ = std::move(errors);
    if (companionChanges.size() >= (size_t) m)
        sharedCompanions_.assign(companionChanges.begin(), companionChanges.begin() + m);
}

PairList DIIS::pairsOf(const std::vector<SharedPair>& shared) {
    PairList pairs;
    for (const SharedPair& p : shared)
        pairs.push_back(p.get());
    return pairs;
}

Eigen::MatrixXd DIIS::extrapolate(const Eigen::MatrixXd& fock, const Eigen::MatrixXd& error) {
    return extrapolate(fock, error, Eigen::MatrixXd());
}

Eigen::MatrixXd DIIS::extrapolate(const Eigen::MatrixXd& fock, const Eigen::MatrixXd& error, const Eigen::MatrixXd& companion) {
    combinedCompanion_ = companion;  // where the input is returned, it stands for itself
    if (size_ < 2)
        return fock;
    const int m = recycledPairs();
    focks_.push_back(fock);
    errors_.push_back(error);
    companions_.push_back(companion);
    overlaps_.push_back(m > 0 ? Eigen::VectorXd(recycledCombinations_.transpose() * recycledErrorDots(error)) : Eigen::VectorXd());
    const int previous = (int) errorProducts_.rows();
    errorProducts_.conservativeResize(previous + 1, previous + 1);
    for (int i = 0; i <= previous; i++)
        errorProducts_(previous, i) = errorProducts_(i, previous) = flat(errors_[i]).dot(flat(error));
    while ((int) focks_.size() > size_) {
        focks_.pop_front();
        errors_.pop_front();
        overlaps_.pop_front();
        companions_.pop_front();
        const int kept = (int) errorProducts_.rows() - 1;
        errorProducts_ = errorProducts_.bottomRightCorner(kept, kept).eval();
    }
    const int n = (int) focks_.size();
    if (n + m < 2)
        return fock;
    // Minimize |sum c_i e_i + sum g_j de_j| with sum c_i = 1 (Lagrange multiplier in the last row). The recycled
    // errors are orthonormal; they enter scaled to the newest error's size (their coefficients absorb the scale),
    // so that a cut relative to the largest entry cuts the same directions at every stage of the convergence.
    // The products are scaled by the largest diagonal for conditioning.
    const int k = n + m;
    const double recycledScale = error.norm();
    Eigen::MatrixXd B = Eigen::MatrixXd::Zero(k + 1, k + 1);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++)
            B(i, j) = B(j, i) = errorProducts_(i, j);
        for (int j = 0; j < m; j++)
            B(i, n + j) = B(n + j, i) = recycledScale * overlaps_[i][j];
    }
    for (int j = 0; j < m; j++)
        B(n + j, n + j) = recycledScale * recycledScale;
    const double scale = B.diagonal().head(k).maxCoeff();
    if (!(scale > 0))
        return fock;
    B.topLeftCorner(k, k) /= scale;
    B.row(k).head(n).setConstant(-1);
    B.col(k).head(n).setConstant(-1);
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(k + 1);
    rhs[k] = -1;
    Eigen::VectorXd c;
    if (m == 0)
        c = B.fullPivLu().solve(rhs);
    else {
        // Pseudo-inverse of the symmetric (indefinite) bordered matrix: eigenvalues below 1e-12 of the largest are
        // cut instead of amplified (the recycled errors may span the current ones almost exactly).
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(B);
        const Eigen::VectorXd& values = eigen.eigenvalues();
        const double cut = 1e-12 * values.cwiseAbs().maxCoeff();
        Eigen::VectorXd projected = eigen.eigenvectors().transpose() * rhs;
        for (int i = 0; i <= k; i++)
            projected[i] = std::abs(values[i]) > cut ? projected[i] / values[i] : 0.0;
        c = eigen.eigenvectors() * projected;
    }
    if (!c.allFinite())
        return fock;
    Eigen::MatrixXd f = Eigen::MatrixXd::Zero(fock.rows(), fock.cols());
    for (int i = 0; i < n; i++)
        f += c[i] * focks_[i];
    const Eigen::VectorXd pairWeights = m > 0 ? Eigen::VectorXd(recycledCombinations_ * (recycledScale * c.segment(n, m)))
                                              : Eigen::VectorXd();
    if (m > 0)
        addRecycledCombination(false, pairWeights, f);
    combineCompanions(c.head(n), pairWeights);
    return f;
}

void DIIS::combineCompanions(const Eigen::VectorXd& entryWeights, const Eigen::VectorXd& pairWeights) {
    combinedCompanion_.resize(0, 0);
    const int n = (int) entryWeights.size(), m = (int) pairWeights.size();
    for (const Eigen::MatrixXd& k : companions_)
        if (k.size() == 0 || k.size() != companions_.back().size())
            return;
    if (m > 0 && givenCompanions() != givenPairs())
        return;
    const Eigen::Index pairSize = packedPairs_ ? packedSymmetricSize(companions_.back().rows()) : companions_.back().size();
    for (const Eigen::MatrixXd* k : recycledCompanions_)
        if (k->size() != pairSize)
            return;
    for (const SharedPair& k : sharedCompanions_)
        if (k->size() != pairSize)
            return;
    Eigen::MatrixXd k = Eigen::MatrixXd::Zero(companions_.back().rows(), companions_.back().cols());
    for (int i = 0; i < n; i++)
        k += entryWeights[i] * companions_[i];
    if (m > 0)
        addRecycledCombination(true, pairWeights, k);
    combinedCompanion_ = std::move(k);
}

} // namespace QM
} // namespace OpenMMDFT
