#pragma once
// Pulay's direct inversion in the iterative subspace for Fock matrices, optionally with a recycled subspace:
// changes of Fock matrices and of their errors from earlier SCFs (the previous MD steps'), which tell how the
// error answers a change of the Fock matrix. DIIS is Anderson acceleration, which is GMRES on the linearized
// fixed-point problem (H. F. Walker and P. Ni, SIAM J. Numer. Anal. 49, 1715 (2011)); keeping the earlier
// problems' search directions is Krylov-subspace recycling for a sequence of slowly changing problems
// (M. L. Parks et al., SIAM J. Sci. Comput. 28, 1651 (2006)).
#include "openmmdft/qm/DenseAlgebra.h"
#include <Eigen/Dense>
#include <deque>
#include <vector>

namespace OpenMMDFT {
namespace QM {

class DIIS {
public:
    /// Recycled combinations with a Gram eigenvalue below this fraction of the largest are rounding noise.
    static constexpr double RECYCLED_EIGENVALUE_CUTOFF = 1e-12;

    /// threads: for the products with the recycled subspace (0 = all hardware threads). packedPairs: the recycled
    /// pairs come as an SCF hands them on (SharedPair, DenseAlgebra.h: packed by their upper triangles, the Fock changes
    /// and companions by packSymmetric and the error changes by packAntisymmetric, F and J being symmetric and
    /// FDS - SDF antisymmetric in an orthonormal basis, in single precision); else as whole matrices. The entries stay
    /// whole matrices.
    explicit DIIS(int subspaceSize, int threads = 1, bool packedPairs = false)
        : size_(subspaceSize), threads_(threads), packedPairs_(packedPairs) {}
    /// Add a Fock matrix and its error (commutator in an orthonormal basis); returns the extrapolated Fock
    /// matrix: sum_i c_i F_i + sum_j g_j dF_j, with sum_i c_i = 1 and c, g minimizing
    /// |sum_i c_i e_i + sum_j g_j de_j| over the stored entries and the recycled pairs (dF_j, de_j). It is the
    /// input itself while there is one entry and no recycled pair, or if the subspace equations are singular.
    Eigen::MatrixXd extrapolate(const Eigen::MatrixXd& fock, const Eigen::MatrixXd& error);
    /// The same with a companion of the entry, a quantity linear in the density that F was built from (e.g. its
    /// Coulomb matrix), which is combined as the Fock matrices are: combinedCompanion() is then that quantity for the
    /// density the extrapolated Fock matrix implies.
    Eigen::MatrixXd extrapolate(const Eigen::MatrixXd& fock, const Eigen::MatrixXd& error, const Eigen::MatrixXd& companion);
    /// sum_i c_i K_i + sum_j g_j dK_j of the last extrapolate(): empty if an entry in it came without a companion, or
    /// recycled pairs without their companion changes took part.
    const Eigen::MatrixXd& combinedCompanion() const { return combinedCompanion_; }
    /// Pairs (dF, de) from earlier SCFs, the errors already in this SCF's orthonormal basis. DIIS works with orthonormal
    /// combinations of the de (the same combinations of the dF): eigenvectors of the Gram matrix of the de scaled to
    /// unit length, without those whose eigenvalue is below RECYCLED_EIGENVALUE_CUTOFF times the largest. Scaling
    /// first makes the cut a test of linear dependence alone: a converged SCF's last, small pairs count as much as its
    /// first, large ones. The matrices are not copied: they must outlive this object, or the next setRecycled(),
    /// dropRecycled() or reset().
    /// companionChanges (optional: one per pair, or none) are the pairs' changes of the entries' companion.
    /// errorGram (optional) is the Gram matrix of the errorChanges, <de_j, de_k>, where the caller kept it (an MD
    /// step's SCF recycles the last step's pairs: their products are known); otherwise it is computed here.
    /// Whole matrices, without packedPairs.
    void setRecycled(const std::vector<const Eigen::MatrixXd*>& fockChanges, const std::vector<const Eigen::MatrixXd*>& errorChanges,
                     const std::vector<const Eigen::MatrixXd*>& companionChanges = {}, const Eigen::MatrixXd* errorGram = nullptr);
    void setRecycled(const std::vector<Eigen::MatrixXd>& fockChanges, const std::vector<Eigen::MatrixXd>& errorChanges);
    /// The same with packedPairs, the pairs an SCF hands on: held here while in use.
    void setRecycled(const std::vector<SharedPair>& fockChanges, const std::vector<SharedPair>& errorChanges,
                     const std::vector<SharedPair>& companionChanges = {}, const Eigen::MatrixXd* errorGram = nullptr);
    /// The orthonormal combinations of the recycled pairs in use.
    int recycledPairs() const { return (int) recycledCombinations_.cols(); }
    void dropRecycled();
    void reset();
private:
    int size_, threads_;
    bool packedPairs_;
    /// The packed pairs (packedPairs_), held while in use.
    std::vector<SharedPair> sharedFocks_, sharedErrors_, sharedCompanions_;
    /// The pairs of a list of shared ones, for the products with them.
    static PairList pairsOf(const std::vector<SharedPair>& shared);
    /// The orthonormal combinations of m pairs whose error changes have the Gram matrix gram (recycledCombinations_);
    /// false, leaving none, where the Gram matrix is not finite or zero.
    bool combineRecycled(const Eigen::MatrixXd& gram, int m);
    /// <de_j, error> for every recycled pair; sum += sum_j weights_j changes_j of the Fock changes or of the companions'
    /// (packed or whole, as packedPairs_ says).
    Eigen::VectorXd recycledErrorDots(const Eigen::MatrixXd& error) const;
    void addRecycledCombination(bool companions, const Eigen::VectorXd& weights, Eigen::MatrixXd& sum) const;
    /// Recycled pairs given, and of them with their companions' changes.
    size_t givenPairs() const { return packedPairs_ ? sharedFocks_.size() : recycledFocks_.size(); }
    size_t givenCompanions() const { return packedPairs_ ? sharedCompanions_.size() : recycledCompanions_.size(); }
    /// combinedCompanion_ from the entries' weights (oldest first) and the given pairs' weights.
    void combineCompanions(const Eigen::VectorXd& entryWeights, const Eigen::VectorXd& pairWeights);
    std::deque<Eigen::MatrixXd> focks_, errors_;
    std::deque<Eigen::MatrixXd> companions_;  ///< per entry: its companion (empty: none)
    Eigen::MatrixXd combinedCompanion_;
    std::deque<Eigen::VectorXd> overlaps_;  ///< per entry: its error's products with the recycled errors
    /// <e_i, e_j> of the stored errors (entry order): each new entry adds one row, so an iteration reads every stored
    /// error once instead of once per pair (the errors are n_bf^2 each: memory-bound products).
    Eigen::MatrixXd errorProducts_;
    std::vector<const Eigen::MatrixXd*> recycledFocks_, recycledErrors_;  ///< whole pairs as given
    std::vector<const Eigen::MatrixXd*> recycledCompanions_;               ///< empty if not given
    Eigen::MatrixXd recycledCombinations_;  ///< pairs x combinations: the orthonormal combinations' coefficients
};

} // namespace QM
} // namespace OpenMMDFT
