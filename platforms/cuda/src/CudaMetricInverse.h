#ifndef OPENMMDFT_CUDAMETRICINVERSE_H_
#define OPENMMDFT_CUDAMETRICINVERSE_H_

#include "openmm/common/ComputeContext.h"
#include <Eigen/Dense>

namespace OpenMMDFT {

/**
 * The inverse of a symmetric positive definite matrix (the density fitting's Coulomb metric, n x n) on the GPU of a
 * CUDA Context: cuSOLVER's Cholesky factorization and inverse from it (dpotrf, dpotri), the matrix up and the inverse
 * down once each, on a stream of its own (the set-up calls it from a thread beside the one that queues the three-centre
 * integrals). cuSOLVER is loaded at run time (libcusolver.so.12), so the plugin needs it only where this runs. False,
 * with inverse untouched, where cuSOLVER cannot be loaded, a CUDA call fails, or the matrix is not positive definite:
 * the caller then inverts on the host.
 */
bool cudaSymmetricPositiveDefiniteInverse(OpenMM::ComputeContext& cc, const Eigen::MatrixXd& A, Eigen::MatrixXd& inverse);

} // namespace OpenMMDFT

#endif
