#ifndef OPENMMDFT_BENCH_CUSOLVERBASELINE_H_
#define OPENMMDFT_BENCH_CUSOLVERBASELINE_H_

/*
 * cuSOLVER/cuBLAS baselines for BenchLeastSquares on a CUDA GPU (the reference its ratios are taken against where
 * a GPU is available), in float or double:
 *   "QR"        geqrf, ormqr (Q^T b), trsm (R x = Q^T b)
 *   "Cholesky"  syrk (A^T A), gemv (A^T b), potrf, potrs
 *   "Gauss"     gemm (A^T A), gemv (A^T b), getrf, getrs
 * Each time covers what our solve covers on the device side: upload of A and b, the solve, download of x
 * (device synchronized before the clock stops).
 */
#include <string>
#include <vector>

namespace CuSolverBaseline {

/** Empty when a CUDA device can run the baselines, otherwise why not. */
std::string unavailableReason();

/** Solve min ||A x - b|| (A column-major m x n, one right-hand side) by method in float or double; returns seconds. */
double solve(const std::string& method, bool useFloat, int m, int n, const std::vector<double>& Acm, const std::vector<double>& b,
             std::vector<double>& x);

} // namespace CuSolverBaseline

#endif
