#ifndef OPENMMDFT_CUDAMETRICINVERSE_H_
#define OPENMMDFT_CUDAMETRICINVERSE_H_

#include "CommonXCBackend.h"
#include "openmm/common/ComputeContext.h"
#include <Eigen/Dense>

namespace OpenMMDFT {

/**
 * The inverse of a symmetric positive definite matrix (the density fitting's Coulomb metric, n x n) on the GPU of a
 * CUDA Context: cuSOLVER's Cholesky factorization and inverse from it (dpotrf, dpotri), the matrix up and the inverse
 * down once each, on a stream of its own (the set-up calls it from a thread beside the one that queues the three-centre
 * integrals), with its handle and device memory kept from one call to the next. cuSOLVER is loaded at run time
 * (libcusolver.so.12), so the plugin needs it only where this runs: empty where it cannot be loaded. The inverse
 * returns false, with its result untouched, where a CUDA call fails or the matrix is not positive definite: the
 * caller then inverts on the host. It must not outlive cc.
 */
SymmetricInverse cudaSymmetricPositiveDefiniteInverse(OpenMM::ComputeContext& cc);

} // namespace OpenMMDFT

#endif
