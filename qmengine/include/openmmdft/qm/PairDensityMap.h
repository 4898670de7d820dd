#pragma once
// The density fitting's pair vectors straight from and to matrices over the basis's own (pure or cartesian)
// functions: d_k = D~_uv + D~_vu for each listed cartesian pair (u >= v) of D~ = T^T D T, and J = T J~ T^T for the
// symmetric J~ that a vector j over the same pairs fills. T (block diagonal, basisTransform()) has at most three
// nonzero elements per cartesian function (a d or f component in real solid harmonics), so both directions touch
// only the listed pairs' few terms instead of making the two cartesian matrices (n^2 each, with their page faults)
// that toCartesianBasis() and fromCartesianBasis() would.
#include <Eigen/Dense>
#include <functional>
#include <utility>
#include <vector>

namespace OpenMMDFT {
namespace QM {

class BasisSet;

class PairDensityMap {
public:
    /// pairs: cartesian function indices (u, v), u >= v, in the order of the pair vectors, those of one shell pair
    /// consecutive; threads as the engine's parallel loops take them.
    PairDensityMap(const BasisSet& basis, std::vector<std::pair<int, int>> pairs, int threads = 1);
    /// d_k = (2 - delta_uv) (T^T D T)_uv for symmetric D over the basis's functions.
    Eigen::VectorXd gather(const Eigen::MatrixXd& density) const;
    /// T J~ T^T, J~_uv = J~_vu = j_k: a matrix over the basis's functions.
    Eigen::MatrixXd scatter(const Eigen::VectorXd& pairValues) const;
    /* The tables, for a device that gathers and scatters the same way. */
    int size() const {  ///< the basis's functions
        return size_;
    }
    int cartesianSize() const {
        return (int) termStart_.size() - 1;
    }
    const std::vector<std::pair<int, int>>& pairs() const {
        return pairs_;
    }
    /// Column u of T (cartesian function u in the basis's functions): termStart()[u] .. termStart()[u + 1] in
    /// termFunction() and termValue().
    const std::vector<int>& termStart() const {
        return termStart_;
    }
    const std::vector<int>& termFunction() const {
        return termFunction_;
    }
    const std::vector<double>& termValue() const {
        return termValue_;
    }
private:
    /// body(first, last) for the pairs [first, last) of consecutive whole runs, the chunks on the threads.
    void forRunChunks(const std::function<void(int, int)>& body) const;
    int size_, threads_;
    std::vector<std::pair<int, int>> pairs_;
    // Runs of consecutive pairs of one shell pair: scatter()'s threads take whole runs, whose elements of J (the shell
    // pair's block and its mirror) no other run writes.
    std::vector<int> runStart_;
    // Column u of T as (function, element) terms: termStart_[u] .. termStart_[u+1] in termFunction_/termValue_.
    std::vector<int> termStart_, termFunction_;
    std::vector<double> termValue_;
};

} // namespace QM
} // namespace OpenMMDFT
