#ifndef OPENMMDFT_TESTS_LAPACKREFERENCE_H_
#define OPENMMDFT_TESTS_LAPACKREFERENCE_H_

/* LAPACK as the independent reference of the least-squares tests (Reference/CPU and GPU platforms):
 * random orthonormal bases (dgeqrf + dorgqr), the minimum-norm solution (dgelsd, SVD-based), and the
 * relative 2-norm error. Matrices cross these helpers row-major, as they cross LeastSquaresSolver. */

#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

extern "C" {
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work, const int* lwork,
             int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb, double* s,
             const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
}

namespace LapackReference {

using std::max;
using std::min;
using std::mt19937_64;
using std::normal_distribution;
using std::vector;

inline /* Column-major m x n matrix with orthonormal columns. */
vector<double> orthonormal(int m, int n, mt19937_64& rng) {
    normal_distribution<double> g;
    vector<double> a((size_t) m * n), tau(n);
    for (double& v : a)
        v = g(rng);
    int info, lwork = -1;
    double q;
    dgeqrf_(&m, &n, a.data(), &m, tau.data(), &q, &lwork, &info);
    vector<double> work((size_t) q + 1);
    lwork = (int) work.size();
    dgeqrf_(&m, &n, a.data(), &m, tau.data(), work.data(), &lwork, &info);
    lwork = -1;
    dorgqr_(&m, &n, &n, a.data(), &m, tau.data(), &q, &lwork, &info);
    work.resize((size_t) q + 1);
    lwork = (int) work.size();
    dorgqr_(&m, &n, &n, a.data(), &m, tau.data(), work.data(), &lwork, &info);
    return a;
}

inline /* Minimum-norm least-squares solution by LAPACK dgelsd (row-major in and out). */
vector<double> dgelsd(int m, int n, int nrhs, const vector<double>& A, const vector<double>& b, int* rankOut = nullptr) {
    vector<double> a((size_t) m * n), bb((size_t) max(m, n) * nrhs, 0.0), s(min(m, n));
    int ldb = max(m, n);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            a[i + (size_t) j * m] = A[(size_t) i * n + j];
    for (int i = 0; i < m; i++)
        for (int k = 0; k < nrhs; k++)
            bb[i + (size_t) k * ldb] = b[(size_t) i * nrhs + k];
    double rcond = -1, q;
    int rank, info, lwork = -1, iq;
    dgelsd_(&m, &n, &nrhs, a.data(), &m, bb.data(), &ldb, s.data(), &rcond, &rank, &q, &lwork, &iq, &info);
    vector<double> work((size_t) q + 1);
    vector<int> iwork(max(1, iq));
    lwork = (int) work.size();
    dgelsd_(&m, &n, &nrhs, a.data(), &m, bb.data(), &ldb, s.data(), &rcond, &rank, work.data(), &lwork, iwork.data(), &info);
    EXPECT_EQ(0, info);
    if (rankOut)
        *rankOut = rank;
    vector<double> x((size_t) n * nrhs);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < nrhs; k++)
            x[(size_t) j * nrhs + k] = bb[j + (size_t) k * ldb];
    return x;
}

inline double relativeError(const vector<double>& x, const vector<double>& ref) {
    double d = 0, r = 0;
    for (size_t i = 0; i < x.size(); i++) {
        d += (x[i] - ref[i]) * (x[i] - ref[i]);
        r += ref[i] * ref[i];
    }
    return sqrt(d / r);
}

} // namespace LapackReference

#endif
