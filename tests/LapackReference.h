#ifndef OPENMMDFT_TESTS_LAPACKREFERENCE_H_
#define OPENMMDFT_TESTS_LAPACKREFERENCE_H_

/* LAPACK as the independent reference of the least-squares tests (Reference/CPU and GPU platforms):
 * random orthonormal bases (dgeqrf + dorgqr), the minimum-norm solution (dgelsd, SVD-based), the
 * equality-constrained solution (dgglse), and the relative 2-norm error. dgelsd scales A and b into
 * its safe range itself, so it is a valid reference at 1e+-300 too. For quantities whose squares
 * leave the double range (residual norms of problems scaled by 1e300), the helpers here compute in
 * long double, whose exponent range (about 1e+-4932 on x86-64) holds them. Matrices cross these
 * helpers row-major, as they cross LeastSquaresSolver. */

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
void dgglse_(const int* m, const int* n, const int* p, double* a, const int* lda, double* b, const int* ldb, double* c, double* d,
             double* x, double* work, const int* lwork, int* info);
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

/* LAPACK dgglse, min ||A x - b|| subject to C x = d, one right-hand side at a time; x row-major n x nrhs. */
inline vector<double> dgglse(int m, int n, int nrhs, int p, const vector<double>& A, const vector<double>& b, const vector<double>& C,
                             const vector<double>& d) {
    vector<double> x((size_t) n * nrhs);
    for (int r = 0; r < nrhs; r++) {
        vector<double> a((size_t) m * n), c((size_t) p * n), bb(m), dd(p), xr(n);
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++)
                a[i + (size_t) j * m] = A[(size_t) i * n + j];
            bb[i] = b[(size_t) i * nrhs + r];
        }
        for (int s = 0; s < p; s++) {
            for (int j = 0; j < n; j++)
                c[s + (size_t) j * p] = C[(size_t) s * n + j];
            dd[s] = d[(size_t) s * nrhs + r];
        }
        int info, lwork = -1;
        double q;
        dgglse_(&m, &n, &p, a.data(), &m, c.data(), &p, bb.data(), dd.data(), xr.data(), &q, &lwork, &info);
        vector<double> work((size_t) q + 1);
        lwork = (int) work.size();
        dgglse_(&m, &n, &p, a.data(), &m, c.data(), &p, bb.data(), dd.data(), xr.data(), work.data(), &lwork, &info);
        EXPECT_EQ(0, info);
        for (int j = 0; j < n; j++)
            x[(size_t) j * nrhs + r] = xr[j];
    }
    return x;
}

/* Relative 2-norm error, in long double so that vectors near the ends of the double range do not overflow or underflow. */
inline double relativeError(const vector<double>& x, const vector<double>& ref) {
    long double d = 0, r = 0;
    for (size_t i = 0; i < x.size(); i++) {
        const long double e = (long double) x[i] - ref[i];
        d += e * e;
        r += (long double) ref[i] * ref[i];
    }
    return (double) sqrtl(d / r);
}

/* Every element times s (s a double; the products are rounded to double, as a caller's scaled data would be). */
inline vector<double> scaled(const vector<double>& v, double s) {
    vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); i++)
        out[i] = v[i] * s;
    return out;
}

/* ||A x_k - b_k||_2 for each right-hand side, in long double: no overflow or underflow for data within the double range. */
inline vector<double> residualNormsLongDouble(int m, int n, int nrhs, const vector<double>& A, const vector<double>& x,
                                              const vector<double>& b) {
    vector<double> norms(nrhs);
    for (int k = 0; k < nrhs; k++) {
        long double sum = 0;
        for (int i = 0; i < m; i++) {
            long double r = -(long double) b[(size_t) i * nrhs + k];
            for (int j = 0; j < n; j++)
                r += (long double) A[(size_t) i * n + j] * x[(size_t) j * nrhs + k];
            sum += r * r;
        }
        norms[k] = (double) sqrtl(sum);
    }
    return norms;
}

/*
 * The largest relative violation of the stationarity condition A^T (A x - b) + C^T lambda = 0 of a constrained solution,
 * over unknowns and right-hand sides, relative to |A|^T |A x - b| + |C|^T |lambda| (the size of the terms that cancel);
 * in long double, so that products of 1e300-scaled data do not overflow.
 */
inline double stationarityViolation(int m, int n, int nrhs, int p, const vector<double>& A, const vector<double>& b,
                                    const vector<double>& C, const vector<double>& x, const vector<double>& lambda) {
    double worst = 0;
    for (int k = 0; k < nrhs; k++) {
        vector<long double> r(m);
        for (int i = 0; i < m; i++) {
            long double s = -(long double) b[(size_t) i * nrhs + k];
            for (int j = 0; j < n; j++)
                s += (long double) A[(size_t) i * n + j] * x[(size_t) j * nrhs + k];
            r[i] = s;
        }
        for (int j = 0; j < n; j++) {
            long double g = 0, size = 0;
            for (int i = 0; i < m; i++) {
                g += (long double) A[(size_t) i * n + j] * r[i];
                size += fabsl((long double) A[(size_t) i * n + j] * r[i]);
            }
            for (int s = 0; s < p; s++) {
                const long double t = (long double) C[(size_t) s * n + j] * lambda[(size_t) s * nrhs + k];
                g += t;
                size += fabsl(t);
            }
            if (size > 0)
                worst = max(worst, (double) (fabsl(g) / size));
        }
    }
    return worst;
}

} // namespace LapackReference

#endif
