/*
 * Least squares (issue 4) on the OpenCL platform (common Compute API kernels) in single, mixed and
 * double precision, against LAPACK dgelsd computed here. Tolerances (relative 2-norm error of x,
 * epsS = 1.2e-7, epsD = 2.2e-16, c = 20 sqrt(n)):
 *   double  QR c cond epsD;                     normal equations c cond^2 epsD
 *   mixed   QR c cond epsS (input rounded);     normal equations c (cond epsS + cond^2 epsD)
 *   single  QR c cond epsS;                     normal equations c cond^2 epsS (only while cond^2 epsS < 1e-2)
 * Skipped (not failed) where no OpenCL device/precision is available.
 */
#include "PluginLoading.h"
#include "openmmdft/LeastSquares.h"
#include "OpenCLQMMMKernelFactory.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include <gtest/gtest.h>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

extern "C" {
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb, double* s,
             const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work, const int* lwork,
             int* info);
}

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

namespace {

Platform* openCL() {
    QMMMTest::loadPlatformOnce("libOpenMMOpenCL.so", registerQMMMOpenCLKernelFactories);
    try {
        return &Platform::getPlatformByName("OpenCL");
    }
    catch (const OpenMMException&) {
        return nullptr;
    }
}

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

/* Row-major A = U diag(s) V^T with cond(A) = cond, and a consistent-plus-small-residual b (nrhs columns). */
void makeProblem(int m, int n, int nrhs, double cond, unsigned seed, vector<double>& A, vector<double>& b) {
    mt19937_64 rng(seed);
    normal_distribution<double> g;
    vector<double> U = orthonormal(m, n, rng), V = orthonormal(n, n, rng);
    A.assign((size_t) m * n, 0.0);
    for (int i = 0; i < m; i++)
        for (int k = 0; k < n; k++) {
            double us = U[i + (size_t) k * m] * (n == 1 ? 1.0 : pow(cond, -(double) k / (n - 1)));
            for (int j = 0; j < n; j++)
                A[(size_t) i * n + j] += us * V[j + (size_t) k * n];
        }
    b.assign((size_t) m * nrhs, 0.0);
    for (int r = 0; r < nrhs; r++) {
        vector<double> x(n);
        for (double& v : x)
            v = g(rng);
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int j = 0; j < n; j++)
                s += A[(size_t) i * n + j] * x[j];
            b[(size_t) i * nrhs + r] = s;
        }
    }
}

vector<double> dgelsd(int m, int n, int nrhs, const vector<double>& A, const vector<double>& b) {
    vector<double> a((size_t) m * n), bb((size_t) m * nrhs), s(n);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++)
            a[i + (size_t) j * m] = A[(size_t) i * n + j];
        for (int r = 0; r < nrhs; r++)
            bb[i + (size_t) r * m] = b[(size_t) i * nrhs + r];
    }
    double rcond = -1, q;
    int rank, info, lwork = -1, iq;
    dgelsd_(&m, &n, &nrhs, a.data(), &m, bb.data(), &m, s.data(), &rcond, &rank, &q, &lwork, &iq, &info);
    vector<double> work((size_t) q + 1);
    vector<int> iwork(max(1, iq));
    lwork = (int) work.size();
    dgelsd_(&m, &n, &nrhs, a.data(), &m, bb.data(), &m, s.data(), &rcond, &rank, work.data(), &lwork, iwork.data(), &info);
    vector<double> x((size_t) n * nrhs);
    for (int j = 0; j < n; j++)
        for (int r = 0; r < nrhs; r++)
            x[(size_t) j * nrhs + r] = bb[j + (size_t) r * m];
    return x;
}

double relativeError(const vector<double>& x, const vector<double>& ref) {
    double d = 0, r = 0;
    for (size_t i = 0; i < x.size(); i++) {
        d += (x[i] - ref[i]) * (x[i] - ref[i]);
        r += ref[i] * ref[i];
    }
    return sqrt(d / r);
}

} // namespace

class OpenCLLeastSquares : public ::testing::TestWithParam<string> {
protected:
    unique_ptr<LeastSquaresSolver> solver;
    void SetUp() override {
        Platform* platform = openCL();
        if (platform == nullptr)
            GTEST_SKIP() << "no OpenCL platform";
        try {
            solver.reset(new LeastSquaresSolver(*platform, {{"Precision", GetParam()}}));
        }
        catch (const OpenMMException& e) {
            GTEST_SKIP() << "OpenCL in " << GetParam() << " precision unavailable: " << e.what();
        }
    }
};

TEST_P(OpenCLLeastSquares, AllMethodsAgainstDgelsd) {
    const string precision = GetParam();
    const double epsS = FLT_EPSILON, epsD = DBL_EPSILON;
    struct Case {
        int m, n;
        vector<double> conds;
    };
    vector<Case> cases{{10, 3, {1, 1e2, 1e4}}, {200, 40, {1, 10, 1e3}}, {600, 150, {1, 1e3}}};
    for (const Case& c : cases)
        for (double cond : c.conds) {
            vector<double> A, b;
            makeProblem(c.m, c.n, 2, cond, 1000 + c.n + (unsigned) log10(cond), A, b);
            vector<double> ref = dgelsd(c.m, c.n, 2, A, b);
            const double k = 20 * sqrt((double) c.n);
            double tolQR, tolNE;
            if (precision == "double") {
                tolQR = k * cond * epsD;
                tolNE = k * cond * cond * epsD;
            }
            else if (precision == "mixed") {
                tolQR = k * cond * epsS;
                tolNE = k * (cond * epsS + cond * cond * epsD);
            }
            else {
                tolQR = k * cond * epsS;
                tolNE = k * cond * cond * epsS;
            }
            printf("[ %s ] %4d x %3d cond %5.0e:", precision.c_str(), c.m, c.n, cond);
            for (LeastSquaresMethod method : {LeastSquaresMethod::QR, LeastSquaresMethod::Cholesky, LeastSquaresMethod::Gauss}) {
                SCOPED_TRACE(precision + " " + leastSquaresMethodName(method) + " m=" + to_string(c.m) + " n=" + to_string(c.n) +
                             " cond=" + to_string(cond));
                const double tol = (method == LeastSquaresMethod::QR ? tolQR : tolNE);
                if (tol > 1e-2)
                    continue;
                LeastSquaresOptions o;
                o.method = method;
                LeastSquaresResult r = solver->solve(c.m, c.n, 2, A, b, o);
                EXPECT_EQ(precision, r.precision);
                EXPECT_EQ("OpenCL", r.platformName);
                double err = relativeError(r.x, ref);
                EXPECT_LE(err, tol);
                printf("  %s %.1e (tol %.1e)", leastSquaresMethodName(method).c_str(), err, tol);
            }
            printf("\n");
        }
}

TEST_P(OpenCLLeastSquares, GaussSeidel) {
    const string precision = GetParam();
    const int m = 400, n = 100;
    vector<double> A, b;
    makeProblem(m, n, 2, 3.0, 77, A, b);
    vector<double> ref = dgelsd(m, n, 2, A, b);
    LeastSquaresOptions o;
    o.method = LeastSquaresMethod::GaussSeidel;
    o.tolerance = (precision == "single" ? 1e-5 : 1e-10);
    LeastSquaresResult r = solver->solve(m, n, 2, A, b, o);
    EXPECT_GT(r.iterations, 0);
    EXPECT_LE(r.relativeNormalResidual, o.tolerance);
    const double floor = (precision == "double" ? 0.0 : 20 * sqrt((double) n) * 9 * FLT_EPSILON);
    EXPECT_LE(relativeError(r.x, ref), 10 * 9 * o.tolerance + floor);
    // Non-convergence is an error that names the iterations.
    o.maxIterations = 3;
    o.tolerance = 1e-14;
    try {
        solver->solve(m, n, 2, A, b, o);
        ADD_FAILURE() << "expected non-convergence";
    }
    catch (const OpenMMException& e) {
        EXPECT_NE(string::npos, string(e.what()).find("did not converge in 3 iterations")) << e.what();
    }
}

TEST_P(OpenCLLeastSquares, ErrorsAndUnsupported) {
    vector<double> A, b;
    makeProblem(50, 6, 1, 10, 5, A, b);
    for (int i = 0; i < 50; i++)
        A[(size_t) i * 6 + 4] = 3.0 * A[(size_t) i * 6 + 1]; // rank deficient
    for (LeastSquaresMethod method : {LeastSquaresMethod::QR, LeastSquaresMethod::Cholesky, LeastSquaresMethod::Gauss}) {
        LeastSquaresOptions o;
        o.method = method;
        try {
            solver->solve(50, 6, 1, A, b, o);
            ADD_FAILURE() << "rank deficiency not detected by " << leastSquaresMethodName(method);
        }
        catch (const OpenMMException& e) {
            string msg = e.what();
            EXPECT_TRUE(msg.find("rank deficient") != string::npos || msg.find("singular") != string::npos) << msg;
        }
    }
    vector<double> C(6, 1.0), d{0.0};
    EXPECT_THROW(solver->solveConstrained(50, 6, 1, A, b, 1, C, d), OpenMMException);
}

INSTANTIATE_TEST_SUITE_P(Precisions, OpenCLLeastSquares, ::testing::Values("single", "mixed", "double"),
                         [](const ::testing::TestParamInfo<string>& info) { return info.param; });
