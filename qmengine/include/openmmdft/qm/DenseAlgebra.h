#ifndef OPENMMDFT_QM_DENSEALGEBRA_H_
#define OPENMMDFT_QM_DENSEALGEBRA_H_

/* Products and eigensystems of whole AO-sized matrices (and the three-index DF tensor) through the BLAS and LAPACK (OpenBLAS, with its
 * own threads). These are the O(n^3) steps of every SCF iteration (the Fock matrix in the orthogonal
 * basis, its eigenvectors, the commutator FDS - SDF); Eigen's kernels run them on one thread, which
 * for a few hundred basis functions costs more than the whole rest of an iteration. */

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace OpenMMDFT {
namespace QM {

/** The m x n result of op(A) op(B) and, in k, its inner dimension (OpenMMException where op(A) and op(B) do not
 *  match): zero where k is 0, else uninitialized, for an implementation of the product to fill where it is not empty. */
Eigen::MatrixXd productResult(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB, int& k);

/** op(A) op(B), op = transpose where asked (dgemm). */
Eigen::MatrixXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB);

/** op(A) x (dgemv): the density-fitted Coulomb term's contractions with its three-index tensor. */
Eigen::VectorXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::VectorXd& x);

/**
 * A^T x with A's columns split over up to `threads` of the engine's threads (0: all hardware threads), for matrices
 * that stream from memory (the density-fitting metric's inverse, DIIS's recycled subspace). Each column's dot product
 * runs in order, so the result does not depend on the thread count. (OpenBLAS's threads keep spinning after a call and
 * slow the engine's next parallel loop; the engine's end with it.)
 */
Eigen::VectorXd streamedTransposeProduct(const Eigen::MatrixXd& A, const Eigen::Ref<const Eigen::VectorXd>& x, int threads);

/// A matrix shared without copying and never changed (DIIS's recycled pairs, handed from one MD step's SCF to the next).
using SharedMatrix = std::shared_ptr<const Eigen::MatrixXd>;

/// Equally sized matrices read as the columns of one tall matrix (each flattened) without being copied side by side
/// (DIIS's recycled pairs, which the density history owns).
using MatrixList = std::vector<const Eigen::MatrixXd*>;

/**
 * DIIS's recycled pairs as an SCF hands them on: packed (packSymmetric, packAntisymmetric below) and rounded to single
 * precision (packedPair). Every SCF iteration reads all of them (96 pairs of three packed matrices: 240 MB in double
 * for 24 waters in DZVP, memory-bound on any host), and they only steer the SCF, whose convergence is judged on its
 * own Fock matrices in double: their rounding (6e-8 of each pair, scaled to unit length by DIIS) left the SCF
 * iterations per MD step as they were (8 waters: 3.9 either way). The products with them accumulate in double.
 */
using PackedPair = Eigen::VectorXf;
using SharedPair = std::shared_ptr<const PackedPair>;
using PairList = std::vector<const PackedPair*>;
/** A packed matrix rounded to a pair. */
SharedPair packedPair(const Eigen::VectorXd& packed);

/** <A_j, x> for each matrix of the list (flattened), the matrices split over the engine's threads; each dot product
 *  runs in order (the same bits on any thread count). */
Eigen::VectorXd streamedDots(const MatrixList& A, const Eigen::Ref<const Eigen::VectorXd>& x, int threads);
Eigen::VectorXd streamedDots(const PairList& A, const Eigen::Ref<const Eigen::VectorXd>& x, int threads);

/** y += sum_j x_j A_j (flattened) for matrices that stream from memory: row blocks on the engine's threads, each
 *  block's terms added in order (the same bits on any thread count). */
void addStreamedCombination(const MatrixList& A, const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y,
                            int threads);
void addStreamedCombination(const PairList& A, const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y,
                            int threads);

/**
 * Symmetric and antisymmetric matrices by their upper triangles (DIIS's recycled pairs: an SCF's Fock and Coulomb
 * matrices are symmetric, its errors FDS - SDF in an orthonormal basis antisymmetric; kept so they take half the
 * memory and half the reading). Column by column, the diagonal included for a symmetric matrix (n (n + 1) / 2
 * elements), excluded for an antisymmetric one (n (n - 1) / 2); the off-diagonal elements are scaled by sqrt(2), so
 * that dot products and Gram matrices of packed vectors are those of the whole matrices (Frobenius), and linear
 * combinations of packed vectors pack the combination.
 */
Eigen::VectorXd packSymmetric(const Eigen::MatrixXd& A);
Eigen::VectorXd packAntisymmetric(const Eigen::MatrixXd& A);
/** A += the symmetric matrix whose packSymmetric is packed (A square, packed of its packed size). */
void addUnpackedSymmetric(const Eigen::Ref<const Eigen::VectorXd>& packed, Eigen::MatrixXd& A);
inline Eigen::Index packedSymmetricSize(Eigen::Index n) { return n * (n + 1) / 2; }
inline Eigen::Index packedAntisymmetricSize(Eigen::Index n) { return n * (n - 1) / 2; }

/** G_jk = <A_j, A_k> (flattened): blocks of rows of all the matrices at once, so that each matrix is read once and the
 *  work is matrix products; the blocks' partial sums are added in block order (the same bits on any thread count). */
Eigen::MatrixXd streamedGram(const MatrixList& A, int threads);
Eigen::MatrixXd streamedGram(const PairList& A, int threads);

/** P_jk = <A_j, B_k> (flattened), as streamedGram: the products of a few new matrices with many kept ones (DIIS's
 *  recycled pairs: a Gram matrix grown by the newest pairs instead of recomputed). */
Eigen::MatrixXd streamedCrossGram(const MatrixList& A, const MatrixList& B, int threads);
Eigen::MatrixXd streamedCrossGram(const PairList& A, const PairList& B, int threads);

/** B^T A B (two dgemm calls; B may be rectangular): a change of basis, e.g. cartesian to pure or to orthogonal. */
Eigen::MatrixXd congruence(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

/** Eigenvalues in ascending order and orthonormal eigenvectors (columns) of symmetric A (dsyevd). */
void symmetricEigensystem(const Eigen::MatrixXd& A, Eigen::VectorXd& values, Eigen::MatrixXd& vectors);

/**
 * Run work (BLAS or LAPACK calls made elsewhere, e.g. by a platform's least-squares kernel) with OpenBLAS's own
 * thread count (threads > 0: at most that many), while the functions above wait: they set OpenBLAS's thread count per
 * call, which must not change under a call running on another thread.
 */
void withOpenBLASThreads(const std::function<void()>& work, int threads = 0);

/**
 * A warning when OpenBLAS runs one of its pre-AVX kernel sets (Prescott, Nehalem, ...) on a CPU with AVX2 and FMA:
 * OpenBLAS chooses by the CPU's model number, and a model it does not know (a cloud host's masked "Intel Xeon
 * Processor") may get those, with LAPACK 1.7-2.5x slower (measured on the development VM with OPENBLAS_CORETYPE=Prescott).
 * The kernels are chosen when the library loads, so the warning says what to set before the program starts. Empty
 * when the choice is fine or the BLAS is not OpenBLAS.
 */
std::string openBLASKernelWarning();

} // namespace QM
} // namespace OpenMMDFT

#endif
