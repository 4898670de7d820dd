#ifndef OPENMMDFT_QM_DENSEALGEBRA_H_
#define OPENMMDFT_QM_DENSEALGEBRA_H_

/* Products and eigensystems of whole AO-sized matrices (and the three-index DF tensor) through the BLAS and LAPACK (OpenBLAS, with its
 * own threads). These are the O(n^3) steps of every SCF iteration (the Fock matrix in the orthogonal
 * basis, its eigenvectors, the commutator FDS - SDF); Eigen's kernels run them on one thread, which
 * for a few hundred basis functions costs more than the whole rest of an iteration. */

#include <Eigen/Dense>

namespace OpenMMDFT {
namespace QM {

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

/** y += A x for a tall A (few columns) that streams from memory: row blocks on the engine's threads, each block's
 *  columns added in order (the same bits on any thread count). */
void addStreamedProduct(const Eigen::MatrixXd& A, const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y, int threads);

/** B^T A B (two dgemm calls; B may be rectangular): a change of basis, e.g. cartesian to pure or to orthogonal. */
Eigen::MatrixXd congruence(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

/** Eigenvalues in ascending order and orthonormal eigenvectors (columns) of symmetric A (dsyevd). */
void symmetricEigensystem(const Eigen::MatrixXd& A, Eigen::VectorXd& values, Eigen::MatrixXd& vectors);

} // namespace QM
} // namespace OpenMMDFT

#endif
