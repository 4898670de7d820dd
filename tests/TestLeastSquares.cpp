/*
 * Least squares on the Reference and CPU platforms.
 *
 * Test problems are built from an SVD with chosen singular values, A = U diag(s) V^T with
 * s log-spaced from 1 to 1/cond, so cond_2(A) = cond exactly (up to rounding of A). The
 * independent reference solution is LAPACK dgelsd (SVD-based), computed here in the test.
 *
 * Tolerances (eps = 2.2e-16; errors are relative 2-norm errors of x against dgelsd):
 *   QR                 <= 20 * cond * eps * sqrt(n) * (1 + cond * rho),   rho = ||r_opt|| / (||A|| ||x||)
 *   Gauss, Cholesky    <= 20 * cond^2 * eps * sqrt(n)  (normal equations square the condition number),
 *                      tested for cond <= 1e6; for cond = 1e8, A^T A is singular in double and both must
 *                      raise an OpenMMException that names the problem.
 *   GaussSeidel        relative normal-equation residual <= tolerance, so ||x - x*|| / ||x*|| <= cond^2 * tolerance.
 */
#include "LapackReference.h"
#include "PluginLoading.h"
#include "openmmdft/LeastSquares.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

extern "C" void registerQMMMReferenceKernelFactories();

extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha, const double* a,
            const int* lda, const double* b, const int* ldb, const double* beta, double* c, const int* ldc, size_t, size_t);
}

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;
using namespace LapackReference;

namespace {

const double EPS = numeric_limits<double>::epsilon();

Platform& platform(const string& name) {
    QMMMTest::loadPlatformOnce("libOpenMMCPU.so", registerQMMMReferenceKernelFactories);
    return Platform::getPlatformByName(name);
}


struct Problem {
    int m, n, nrhs;
    vector<double> A, b;   // row-major
    vector<double> xTrue;  // row-major n x nrhs
    double rho = 0;        // ||r_opt|| / (||A|| ||x||), largest over right-hand sides
};

double norm(const vector<double>& v) {
    double s = 0;
    for (double x : v)
        s += x * x;
    return sqrt(s);
}

/* A = U diag(s) V^T with cond(A) = cond; b = A xTrue + r, r orthogonal to range(A) with ||r|| = residual * ||A xTrue||. */
Problem makeProblem(int m, int n, int nrhs, double cond, double residual, unsigned seed) {
    mt19937_64 rng(seed);
    normal_distribution<double> g;
    Problem p;
    p.m = m;
    p.n = n;
    p.nrhs = nrhs;
    vector<double> U = orthonormal(m, n + 1, rng); // last column: a direction orthogonal to range(A)
    vector<double> V = orthonormal(n, n, rng);
    vector<double> s(n);
    for (int i = 0; i < n; i++)
        s[i] = (n == 1 ? 1.0 : pow(cond, -(double) i / (n - 1)));
    // US = U(:, :n) diag(s); A^T (column-major n x m) = V * US^T is A in row-major order.
    vector<double> US((size_t) m * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            US[i + (size_t) j * m] = U[i + (size_t) j * m] * s[j];
    p.A.assign((size_t) m * n, 0.0);
    double one = 1.0, zero = 0.0;
    dgemm_("N", "T", &n, &m, &n, &one, V.data(), &n, US.data(), &m, &zero, p.A.data(), &n, 1, 1);
    p.xTrue.resize((size_t) n * nrhs);
    for (double& v : p.xTrue)
        v = g(rng);
    p.b.assign((size_t) m * nrhs, 0.0);
    for (int k = 0; k < nrhs; k++) {
        vector<double> ax(m, 0.0);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                ax[i] += p.A[(size_t) i * n + j] * p.xTrue[(size_t) j * nrhs + k];
        double axn = norm(ax);
        vector<double> xk(n);
        for (int j = 0; j < n; j++)
            xk[j] = p.xTrue[(size_t) j * nrhs + k];
        for (int i = 0; i < m; i++)
            p.b[(size_t) i * nrhs + k] = ax[i] + residual * axn * U[i + (size_t) n * m] * (k + 1.0) / nrhs;
        p.rho = max(p.rho, residual * axn * (k + 1.0) / nrhs / (1.0 * norm(xk)));
    }
    return p;
}



LeastSquaresOptions withMethod(LeastSquaresMethod method) {
    LeastSquaresOptions o;
    o.method = method;
    return o;
}

template <class F>
string errorMessage(F f) {
    try {
        f();
    }
    catch (const OpenMMException& e) {
        return e.what();
    }
    return "";
}

#define EXPECT_ERROR_CONTAINS(call, text)                                                     \
    do {                                                                                      \
        string msg_ = errorMessage([&]() { call; });                                          \
        EXPECT_NE(string::npos, msg_.find(text)) << "expected an error containing '" << text \
                                                 << "', got '" << msg_ << "'";               \
    } while (0)

struct AccuracyCase {
    int m, n;
    vector<double> conds;
};

} // namespace

/* Every direct method against dgelsd, from 10x3 to 5000x1000, cond 1 ... 1e8. */
class LeastSquaresAccuracy : public ::testing::TestWithParam<AccuracyCase> {};

TEST_P(LeastSquaresAccuracy, DirectMethodsAgainstDgelsd) {
    const AccuracyCase& c = GetParam();
    LeastSquaresSolver solver(platform("Reference"));
    int seed = 1;
    for (double cond : c.conds) {
        // Consistent (zero residual) problems isolate the cond (QR) and cond^2 (normal equations) behaviour;
        // a small residual adds the cond^2 * rho term that every solver, dgelsd included, has.
        for (double residual : {0.0, 1e-3}) {
            Problem p = makeProblem(c.m, c.n, 1, cond, residual, seed++);
            vector<double> ref = dgelsd(c.m, c.n, 1, p.A, p.b);
            double sq = sqrt((double) c.n);
            SCOPED_TRACE("m=" + to_string(c.m) + " n=" + to_string(c.n) + " cond=" + to_string(cond) + " residual=" + to_string(residual));
            // QR: backward stable, error ~ cond*eps (+ cond^2 * eps * rho).
            LeastSquaresResult qr = solver.solve(c.m, c.n, 1, p.A, p.b);
            double tolQR = 20 * cond * EPS * sq * (1 + cond * p.rho);
            EXPECT_LE(relativeError(qr.x, ref), tolQR);
            EXPECT_LE(relativeError(qr.x, p.xTrue), tolQR + 20 * cond * EPS * sq * (1 + cond * p.rho));
            EXPECT_EQ(c.n, qr.rank);
            EXPECT_FALSE(qr.rankDeficient);
            EXPECT_GT(qr.conditionEstimate, 0.1 * cond);
            EXPECT_LT(qr.conditionEstimate, 10 * cond * sq);
            printf("[ accuracy ] %5d x %4d cond %7.0e residual %4.0e: QR %.1e (tol %.1e)", c.m, c.n, cond, residual,
                   relativeError(qr.x, ref), tolQR);
            for (LeastSquaresMethod method : {LeastSquaresMethod::Gauss, LeastSquaresMethod::Cholesky}) {
                SCOPED_TRACE(leastSquaresMethodName(method));
                if (cond * cond * EPS < 1e-3) {
                    LeastSquaresResult r = solver.solve(c.m, c.n, 1, p.A, p.b, withMethod(method));
                    EXPECT_LE(relativeError(r.x, ref), 20 * cond * cond * EPS * sq);
                    printf("  %s %.1e (tol %.1e)", leastSquaresMethodName(method).c_str(), relativeError(r.x, ref),
                           20 * cond * cond * EPS * sq);
                    // The residual norm is nearly insensitive: within cond^2*eps of the optimum's scale.
                    EXPECT_LE(r.residualNorms[0], qr.residualNorms[0] + 20 * cond * cond * EPS * sq * norm(p.b));
                }
                else if (cond >= 1e8) {
                    EXPECT_ERROR_CONTAINS(solver.solve(c.m, c.n, 1, p.A, p.b, withMethod(method)), "normal equations");
                    printf("  %s: error raised", leastSquaresMethodName(method).c_str());
                }
            }
            printf("\n");
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, LeastSquaresAccuracy,
                         ::testing::Values(AccuracyCase{10, 3, {1, 1e2, 1e4, 1e6, 1e8}}, AccuracyCase{100, 20, {1, 1e2, 1e4, 1e6, 1e8}},
                                           AccuracyCase{500, 100, {1, 1e4, 1e6, 1e8}}, AccuracyCase{2000, 300, {1, 1e4, 1e8}},
                                           AccuracyCase{5000, 1000, {1, 1e6, 1e8}}),
                         [](const ::testing::TestParamInfo<AccuracyCase>& info) {
                             return to_string(info.param.m) + "x" + to_string(info.param.n);
                         });

TEST(LeastSquares, ResidualNormsAndMultipleRightHandSides) {
    Problem p = makeProblem(300, 40, 3, 1e3, 1e-2, 7);
    vector<double> ref = dgelsd(300, 40, 3, p.A, p.b);
    for (LeastSquaresMethod method : {LeastSquaresMethod::QR, LeastSquaresMethod::Gauss, LeastSquaresMethod::Cholesky}) {
        LeastSquaresResult r = solveLeastSquares(platform("Reference"), 300, 40, 3, p.A, p.b, withMethod(method));
        ASSERT_EQ(40u * 3, r.x.size());
        ASSERT_EQ(3u, r.residualNorms.size());
        EXPECT_LE(relativeError(r.x, ref), 1e-8);
        EXPECT_EQ("double", r.precision);
        EXPECT_EQ("Reference", r.platformName);
        for (int k = 0; k < 3; k++) {
            // Each column alone gives the same answer.
            vector<double> bk(300);
            for (int i = 0; i < 300; i++)
                bk[i] = p.b[i * 3 + k];
            LeastSquaresResult single = solveLeastSquares(platform("Reference"), 300, 40, 1, p.A, bk, withMethod(method));
            for (int j = 0; j < 40; j++)
                EXPECT_NEAR(single.x[j], r.x[j * 3 + k], 1e-10 * (1 + fabs(single.x[j])));
            // The optimal residual of column k is residual * ||A x_k|| * (k+1)/3 (r was built orthogonal to range(A)).
            vector<double> ax(300, 0.0);
            for (int i = 0; i < 300; i++)
                for (int j = 0; j < 40; j++)
                    ax[i] += p.A[i * 40 + j] * p.xTrue[j * 3 + k];
            EXPECT_NEAR(1e-2 * norm(ax) * (k + 1) / 3.0, r.residualNorms[k], 1e-8 * norm(ax));
        }
    }
}

TEST(LeastSquares, CpuPlatform) {
    Problem p = makeProblem(400, 50, 2, 1e2, 1e-3, 11);
    vector<double> ref = dgelsd(400, 50, 2, p.A, p.b);
    LeastSquaresSolver solver(platform("CPU"), {{"Threads", "2"}});
    EXPECT_EQ("CPU", solver.getPlatformName());
    for (LeastSquaresMethod method : {LeastSquaresMethod::QR, LeastSquaresMethod::Gauss, LeastSquaresMethod::Cholesky}) {
        LeastSquaresResult r = solver.solve(400, 50, 2, p.A, p.b, withMethod(method));
        EXPECT_LE(relativeError(r.x, ref), 1e-10);
    }
}

/* Gauss-Seidel converges on well-conditioned problems to its tolerance, and reports its iterations. */
TEST(LeastSquares, GaussSeidelConvergence) {
    LeastSquaresSolver solver(platform("Reference"));
    for (int n : {3, 50, 400}) {
        int m = 4 * n;
        double cond = 3.0;
        Problem p = makeProblem(m, n, 2, cond, 1e-2, 100 + n);
        vector<double> ref = dgelsd(m, n, 2, p.A, p.b);
        int previousIterations = 0;
        double previousError = 1e300;
        for (double tol : {1e-3, 1e-6, 1e-9, 1e-12}) {
            LeastSquaresOptions o = withMethod(LeastSquaresMethod::GaussSeidel);
            o.tolerance = tol;
            LeastSquaresResult r = solver.solve(m, n, 2, p.A, p.b, o);
            double err = relativeError(r.x, ref);
            SCOPED_TRACE("n=" + to_string(n) + " tol=" + to_string(tol));
            EXPECT_GT(r.iterations, 0);
            EXPECT_GE(r.iterations, previousIterations);
            EXPECT_LE(r.relativeNormalResidual, tol);
            EXPECT_LE(err, cond * cond * tol * 10);
            EXPECT_LE(err, previousError * 1.0001);
            previousIterations = r.iterations;
            previousError = err;
        }
        // Over-relaxation converges too; a converged initial guess needs no sweep.
        LeastSquaresOptions o = withMethod(LeastSquaresMethod::GaussSeidel);
        o.tolerance = 1e-10;
        o.relaxation = 1.3;
        LeastSquaresResult sor = solver.solve(m, n, 2, p.A, p.b, o);
        EXPECT_LE(relativeError(sor.x, ref), cond * cond * 1e-9);
        o.relaxation = 1.0;
        o.initialGuess = ref;
        EXPECT_EQ(0, solver.solve(m, n, 2, p.A, p.b, o).iterations);
    }
}

TEST(LeastSquares, GaussSeidelNonConvergence) {
    Problem p = makeProblem(200, 50, 1, 1e4, 0.0, 5);
    LeastSquaresOptions o = withMethod(LeastSquaresMethod::GaussSeidel);
    o.maxIterations = 50;
    o.tolerance = 1e-12;
    EXPECT_ERROR_CONTAINS(solveLeastSquares(platform("Reference"), 200, 50, 1, p.A, p.b, o), "did not converge in 50 iterations");
}

/* Equality constraints: sum of x fixed (as for ESP charges), and a general p = 3 case. */
TEST(LeastSquares, SumConstraintAgainstElimination) {
    int m = 200, n = 12;
    Problem p = makeProblem(m, n, 1, 1e3, 1e-2, 21);
    double total = -1.5;
    vector<double> C(n, 1.0), d{total};
    // Independent solution: eliminate x_{n-1} = total - sum(others) and solve the reduced problem by dgelsd.
    vector<double> Ar((size_t) m * (n - 1)), br(m);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n - 1; j++)
            Ar[(size_t) i * (n - 1) + j] = p.A[(size_t) i * n + j] - p.A[(size_t) i * n + n - 1];
        br[i] = p.b[i] - p.A[(size_t) i * n + n - 1] * total;
    }
    vector<double> y = dgelsd(m, n - 1, 1, Ar, br);
    vector<double> ref(y);
    double s = 0;
    for (double v : y)
        s += v;
    ref.push_back(total - s);
    for (LeastSquaresMethod method :
         {LeastSquaresMethod::QR, LeastSquaresMethod::Gauss, LeastSquaresMethod::Cholesky, LeastSquaresMethod::GaussSeidel}) {
        SCOPED_TRACE(leastSquaresMethodName(method));
        LeastSquaresOptions o = withMethod(method);
        o.tolerance = 1e-14;
        o.maxIterations = 200000;
        LeastSquaresResult r;
        if (method == LeastSquaresMethod::GaussSeidel) {
            // Gauss-Seidel needs a well-conditioned problem.
            Problem q = makeProblem(m, n, 1, 2.0, 1e-2, 22);
            LeastSquaresResult qr = solveConstrainedLeastSquares(platform("Reference"), m, n, 1, q.A, q.b, 1, C, d);
            o.tolerance = 1e-13;
            r = solveConstrainedLeastSquares(platform("Reference"), m, n, 1, q.A, q.b, 1, C, d, o);
            EXPECT_GT(r.iterations, 0);
            EXPECT_LE(relativeError(r.x, qr.x), 1e-11);
            EXPECT_NEAR(qr.lagrangeMultipliers[0], r.lagrangeMultipliers[0], 1e-9 * (1 + fabs(qr.lagrangeMultipliers[0])));
            continue;
        }
        r = solveConstrainedLeastSquares(platform("Reference"), m, n, 1, p.A, p.b, 1, C, d, o);
        double tol = (method == LeastSquaresMethod::QR ? 1e-11 : 1e-8);
        EXPECT_LE(relativeError(r.x, ref), tol);
        double sum = 0;
        for (double v : r.x)
            sum += v;
        EXPECT_NEAR(total, sum, 1e-12);
        ASSERT_EQ(1u, r.lagrangeMultipliers.size());
        // Stationarity: A^T (A x - b) + C^T lambda = 0.
        for (int j = 0; j < n; j++) {
            double g = 0;
            for (int i = 0; i < m; i++) {
                double ri = -p.b[i];
                for (int k = 0; k < n; k++)
                    ri += p.A[(size_t) i * n + k] * r.x[k];
                g += p.A[(size_t) i * n + j] * ri;
            }
            EXPECT_NEAR(0.0, g + r.lagrangeMultipliers[0], 1e-8 * (1 + fabs(r.lagrangeMultipliers[0])));
        }
    }
}

TEST(LeastSquares, GeneralConstraintsKKT) {
    int m = 150, n = 20, pc = 3, nrhs = 2;
    Problem p = makeProblem(m, n, nrhs, 1e2, 1e-2, 31);
    mt19937_64 rng(32);
    normal_distribution<double> g;
    vector<double> C((size_t) pc * n), d((size_t) pc * nrhs);
    for (double& v : C)
        v = g(rng);
    for (double& v : d)
        v = g(rng);
    vector<LeastSquaresResult> results;
    for (LeastSquaresMethod method : {LeastSquaresMethod::QR, LeastSquaresMethod::Gauss, LeastSquaresMethod::Cholesky}) {
        SCOPED_TRACE(leastSquaresMethodName(method));
        LeastSquaresResult r = solveConstrainedLeastSquares(platform("Reference"), m, n, nrhs, p.A, p.b, pc, C, d, withMethod(method));
        ASSERT_EQ((size_t) pc * nrhs, r.lagrangeMultipliers.size());
        EXPECT_EQ(n - pc, r.rank);
        for (int k = 0; k < nrhs; k++) {
            for (int c = 0; c < pc; c++) {
                double cx = 0;
                for (int j = 0; j < n; j++)
                    cx += C[(size_t) c * n + j] * r.x[(size_t) j * nrhs + k];
                EXPECT_NEAR(d[(size_t) c * nrhs + k], cx, 1e-11);
            }
            for (int j = 0; j < n; j++) {
                double grad = 0;
                for (int i = 0; i < m; i++) {
                    double ri = -p.b[(size_t) i * nrhs + k];
                    for (int l = 0; l < n; l++)
                        ri += p.A[(size_t) i * n + l] * r.x[(size_t) l * nrhs + k];
                    grad += p.A[(size_t) i * n + j] * ri;
                }
                for (int c = 0; c < pc; c++)
                    grad += C[(size_t) c * n + j] * r.lagrangeMultipliers[(size_t) c * nrhs + k];
                EXPECT_NEAR(0.0, grad, 1e-9);
            }
        }
        results.push_back(r);
    }
    EXPECT_LE(relativeError(results[1].x, results[0].x), 1e-10);
    EXPECT_LE(relativeError(results[2].x, results[0].x), 1e-10);
    EXPECT_LE(relativeError(results[1].lagrangeMultipliers, results[0].lagrangeMultipliers), 1e-9);
    EXPECT_LE(relativeError(results[2].lagrangeMultipliers, results[0].lagrangeMultipliers), 1e-9);
    // p == n: the constraints alone fix x.
    Problem sq = makeProblem(30, 4, 1, 10, 0.1, 33);
    vector<double> I{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, dd{1, 2, 3, 4};
    LeastSquaresResult fixedX = solveConstrainedLeastSquares(platform("Reference"), 30, 4, 1, sq.A, sq.b, 4, I, dd);
    for (int j = 0; j < 4; j++)
        EXPECT_NEAR(dd[j], fixedX.x[j], 1e-13);
}

/* Rank deficiency: an error by default, the minimum-norm solution with allowRankDeficient (QR). */
TEST(LeastSquares, RankDeficient) {
    int m = 60, n = 8;
    Problem p = makeProblem(m, n, 1, 10, 0.1, 41);
    for (int i = 0; i < m; i++)
        p.A[(size_t) i * n + 5] = 2.0 * p.A[(size_t) i * n + 2]; // column 5 = 2 * column 2
    for (LeastSquaresMethod method : {LeastSquaresMethod::QR, LeastSquaresMethod::Gauss, LeastSquaresMethod::Cholesky}) {
        SCOPED_TRACE(leastSquaresMethodName(method));
        string msg = errorMessage([&]() { solveLeastSquares(platform("Reference"), m, n, 1, p.A, p.b, withMethod(method)); });
        EXPECT_TRUE(msg.find("rank deficient") != string::npos || msg.find("singular") != string::npos) << msg;
    }
    LeastSquaresOptions o;
    o.allowRankDeficient = true;
    LeastSquaresResult r = solveLeastSquares(platform("Reference"), m, n, 1, p.A, p.b, o);
    int rank;
    vector<double> ref = dgelsd(m, n, 1, p.A, p.b, &rank);
    EXPECT_EQ(n - 1, rank);
    EXPECT_TRUE(r.rankDeficient);
    EXPECT_EQ(n - 1, r.rank);
    EXPECT_LE(relativeError(r.x, ref), 1e-10); // both are the minimum-norm solution
    // A zero column: Gauss-Seidel names it.
    for (int i = 0; i < m; i++)
        p.A[(size_t) i * n + 3] = 0.0;
    EXPECT_ERROR_CONTAINS(solveLeastSquares(platform("Reference"), m, n, 1, p.A, p.b, withMethod(LeastSquaresMethod::GaussSeidel)),
                          "column 3 of A");
    // Linearly dependent constraints.
    Problem q = makeProblem(m, n, 1, 10, 0.1, 42);
    vector<double> C(2 * n, 1.0), d{1.0, 1.0};
    EXPECT_ERROR_CONTAINS(solveConstrainedLeastSquares(platform("Reference"), m, n, 1, q.A, q.b, 2, C, d), "linearly dependent");
}

TEST(LeastSquares, BadInput) {
    Platform& ref = platform("Reference");
    Problem p = makeProblem(20, 4, 1, 10, 0.1, 51);
    EXPECT_ERROR_CONTAINS(solveLeastSquares(ref, 3, 4, 1, vector<double>(12, 1.0), vector<double>(3, 1.0)), "m < n");
    EXPECT_ERROR_CONTAINS(solveLeastSquares(ref, 20, 4, 1, vector<double>(79, 1.0), p.b), "mismatched sizes: A");
    EXPECT_ERROR_CONTAINS(solveLeastSquares(ref, 20, 4, 1, p.A, vector<double>(19, 1.0)), "mismatched sizes: b");
    EXPECT_ERROR_CONTAINS(solveLeastSquares(ref, 20, 4, 2, p.A, p.b), "mismatched sizes: b");
    EXPECT_ERROR_CONTAINS(solveLeastSquares(ref, 0, 4, 1, p.A, p.b), "must be positive");
    vector<double> A = p.A, b = p.b;
    A[13] = numeric_limits<double>::quiet_NaN();
    EXPECT_ERROR_CONTAINS(solveLeastSquares(ref, 20, 4, 1, A, b), "A contains NaN or Inf at (3, 1)");
    b[7] = numeric_limits<double>::infinity();
    EXPECT_ERROR_CONTAINS(solveLeastSquares(ref, 20, 4, 1, p.A, b), "b contains NaN or Inf at (7, 0)");
    EXPECT_ERROR_CONTAINS(solveConstrainedLeastSquares(ref, 20, 4, 1, p.A, p.b, 1, vector<double>(3, 1.0), {0.0}),
                          "mismatched sizes: C");
    EXPECT_ERROR_CONTAINS(solveConstrainedLeastSquares(ref, 20, 4, 1, p.A, p.b, 1, vector<double>(4, 1.0), {}), "mismatched sizes: d");
    EXPECT_ERROR_CONTAINS(solveConstrainedLeastSquares(ref, 20, 4, 1, p.A, p.b, 5, vector<double>(20, 1.0), vector<double>(5, 1.0)),
                          "more constraints than unknowns");
    EXPECT_ERROR_CONTAINS(solveConstrainedLeastSquares(ref, 20, 4, 1, p.A, p.b, 1, {1.0, NAN, 1.0, 1.0}, {0.0}), "C contains NaN");
    LeastSquaresOptions o = withMethod(LeastSquaresMethod::GaussSeidel);
    o.tolerance = 0;
    EXPECT_ERROR_CONTAINS(solveLeastSquares(ref, 20, 4, 1, p.A, p.b, o), "tolerance");
    o.tolerance = 1e-8;
    o.initialGuess = {1.0};
    EXPECT_ERROR_CONTAINS(solveLeastSquares(ref, 20, 4, 1, p.A, p.b, o), "mismatched sizes: initialGuess");
    EXPECT_ERROR_CONTAINS(leastSquaresMethodFromName("svd"), "unknown method");
    EXPECT_EQ(LeastSquaresMethod::GaussSeidel, leastSquaresMethodFromName("gauss-seidel"));
    EXPECT_EQ(LeastSquaresMethod::QR, leastSquaresMethodFromName("qr"));
    EXPECT_EQ("Cholesky", leastSquaresMethodName(leastSquaresMethodFromName("CHOLESKY")));
}

// Normal equations given by the caller (as density fitting has them): the same solution as from A itself.
TEST(LeastSquaresNormalEquationsGiven, MatchesSolvingFromA) {
    std::mt19937 rng(17);
    std::normal_distribution<double> normal;
    const int m = 60, n = 12;
    std::vector<double> A(m * n), b(m);
    for (auto& v : A)
        v = normal(rng);
    for (auto& v : b)
        v = normal(rng);
    std::vector<double> G(n * n, 0.0), h(n, 0.0);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            for (int k = 0; k < m; k++)
                G[i * n + j] += A[k * n + i] * A[k * n + j];
        for (int k = 0; k < m; k++)
            h[i] += A[k * n + i] * b[k];
    }
    OpenMM::Platform& platform = ::platform("Reference");
    OpenMMDFT::LeastSquaresResult fromA = OpenMMDFT::solveLeastSquares(platform, m, n, 1, A, b);
    for (auto method : {OpenMMDFT::LeastSquaresMethod::Cholesky, OpenMMDFT::LeastSquaresMethod::Gauss}) {
        OpenMMDFT::LeastSquaresOptions options;
        options.method = method;
        options.normalEquationsGiven = true;
        OpenMMDFT::LeastSquaresResult given = OpenMMDFT::solveLeastSquares(platform, n, n, 1, G, h, options);
        for (int i = 0; i < n; i++)
            EXPECT_NEAR(given.x[i], fromA.x[i], 1e-12 * (1 + std::fabs(fromA.x[i])));
    }
    OpenMMDFT::LeastSquaresOptions qr;
    qr.normalEquationsGiven = true;
    EXPECT_THROW(OpenMMDFT::solveLeastSquares(platform, n, n, 1, G, h, qr), OpenMM::OpenMMException);
    G[1] += 1.0;  // no longer symmetric
    OpenMMDFT::LeastSquaresOptions cholesky;
    cholesky.method = OpenMMDFT::LeastSquaresMethod::Cholesky;
    cholesky.normalEquationsGiven = true;
    EXPECT_THROW(OpenMMDFT::solveLeastSquares(platform, n, n, 1, G, h, cholesky), OpenMM::OpenMMException);
}

/*
 * The inverse of a given symmetric positive definite matrix (the density fitting's metric): Cholesky with a multiple
 * of the identity as right-hand sides takes LAPACK's dpotri; it must equal the general path (dpotrs) of a right-hand
 * side that is not the identity, and Gauss, for n across LAPACK's blocking.
 */
/* A^T A / (2n) of a random 2n x n matrix A: symmetric positive definite, condition number about 30 (row-major). */
std::vector<double> randomNormalMatrix(int n, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g;
    std::vector<double> A((size_t) 2 * n * n), G((size_t) n * n, 0.0);
    for (double& v : A)
        v = g(rng);
    for (int k = 0; k < 2 * n; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                G[(size_t) i * n + j] += A[(size_t) k * n + i] * A[(size_t) k * n + j] / (2 * n);
    return G;
}

TEST(LeastSquares, InverseOfGivenMatrixByDpotri) {
    const int n = 130;
    const std::vector<double> G = randomNormalMatrix(n, 9);
    std::vector<double> scaledIdentity((size_t) n * n, 0.0);
    for (int i = 0; i < n; i++)
        scaledIdentity[(size_t) i * n + i] = 3.0;
    OpenMM::Platform& platform = ::platform("Reference");
    OpenMMDFT::LeastSquaresOptions cholesky, gauss;
    cholesky.method = OpenMMDFT::LeastSquaresMethod::Cholesky;
    gauss.method = OpenMMDFT::LeastSquaresMethod::Gauss;
    cholesky.normalEquationsGiven = gauss.normalEquationsGiven = true;
    const std::vector<double> inverse = OpenMMDFT::solveLeastSquares(platform, n, n, n, G, scaledIdentity, cholesky).x;
    const std::vector<double> byLU = OpenMMDFT::solveLeastSquares(platform, n, n, n, G, scaledIdentity, gauss).x;
    EXPECT_LE(relativeError(inverse, byLU), 1e-12);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            EXPECT_EQ(inverse[(size_t) i * n + j], inverse[(size_t) j * n + i]);
    // One element off the identity: the general path, whose columns are 3 G^-1's but the changed one.
    std::vector<double> almost(scaledIdentity);
    almost[(size_t) 5 * n + 7] = 1.0;
    const std::vector<double> general = OpenMMDFT::solveLeastSquares(platform, n, n, n, G, almost, cholesky).x;
    double worst = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (j != 7)
                worst = std::max(worst, std::fabs(general[(size_t) i * n + j] - inverse[(size_t) i * n + j]));
    EXPECT_LE(worst, 1e-12 * std::fabs(inverse[0]) * n);
}

/*
 * The inverse of a given symmetric positive definite matrix as its own call (the density fitting's metric), on
 * Reference and CPU: LAPACK on one copy, equal to the solve with the identity as right-hand sides (the same
 * scaling, dpotrf and dpotri, so to the last bit while the inverse stays clear of subnormal numbers, as here), scaled
 * exactly for a matrix near the end of the double range, and clear errors for what it cannot invert.
 */
TEST(LeastSquares, InverseOfSymmetricPositiveDefiniteMatrix) {
    const int n = 90;
    const std::vector<double> G = randomNormalMatrix(n, 21);
    std::vector<double> identity((size_t) n * n, 0.0);
    for (int i = 0; i < n; i++)
        identity[(size_t) i * n + i] = 1.0;
    OpenMMDFT::LeastSquaresOptions cholesky;
    cholesky.method = OpenMMDFT::LeastSquaresMethod::Cholesky;
    for (const char* name : {"Reference", "CPU"}) {
        SCOPED_TRACE(name);
        OpenMMDFT::LeastSquaresSolver solver(::platform(name));
        const OpenMMDFT::LeastSquaresResult inverse = solver.invertSymmetricPositiveDefinite(n, G, cholesky);
        OpenMMDFT::LeastSquaresOptions normal = cholesky;
        normal.normalEquationsGiven = true;
        const OpenMMDFT::LeastSquaresResult solved = solver.solve(n, n, n, G, identity, normal);
        EXPECT_EQ(inverse.x, solved.x);
        EXPECT_EQ(inverse.conditionEstimate, solved.conditionEstimate);
        EXPECT_TRUE(inverse.residualNorms.empty());
        // G G^-1 = I to rounding times the condition number.
        double worst = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double sum = 0;
                for (int k = 0; k < n; k++)
                    sum += G[(size_t) i * n + k] * inverse.x[(size_t) k * n + j];
                worst = std::max(worst, std::fabs(sum - (i == j ? 1.0 : 0.0)));
            }
        EXPECT_LE(worst, 1e-14 * inverse.conditionEstimate);
        // 2^-1000 G: its inverse 2^1000 G^-1, exactly.
        std::vector<double> tiny(G);
        for (double& v : tiny)
            v = std::ldexp(v, -1000);
        const std::vector<double> large = solver.invertSymmetricPositiveDefinite(n, tiny, cholesky).x;
        for (size_t k = 0; k < large.size(); k++)
            ASSERT_EQ(large[k], std::ldexp(inverse.x[k], 1000));
        // What it cannot invert, named.
        std::vector<double> asymmetric(G), indefinite(G), nan(G);
        asymmetric[3 * n + 5] += 0.1;
        indefinite[0] = -1.0;
        nan[7] = NAN;
        EXPECT_ERROR_CONTAINS(solver.invertSymmetricPositiveDefinite(n, asymmetric, cholesky), "must be symmetric");
        EXPECT_ERROR_CONTAINS(solver.invertSymmetricPositiveDefinite(n, indefinite, cholesky), "not positive definite");
        EXPECT_EQ(errorMessage([&]() { solver.invertSymmetricPositiveDefinite(n, indefinite, cholesky); }).find("QR"), string::npos);
        EXPECT_ERROR_CONTAINS(solver.invertSymmetricPositiveDefinite(n, indefinite, cholesky), "invertSymmetricPositiveDefinite (");
        // Without options: a Cholesky inverse (the default options' method is QR, which an inverse does not take).
        EXPECT_EQ(solver.invertSymmetricPositiveDefinite(n, G).x, inverse.x);
        EXPECT_ERROR_CONTAINS(solver.invertSymmetricPositiveDefinite(n, nan, cholesky), "NaN");
        EXPECT_ERROR_CONTAINS(solver.invertSymmetricPositiveDefinite(n, std::vector<double>((size_t) n * n, 0.0), cholesky), "zero");
        EXPECT_ERROR_CONTAINS(solver.invertSymmetricPositiveDefinite(n, std::vector<double>(10), cholesky), "n*n");
        OpenMMDFT::LeastSquaresOptions gauss;
        gauss.method = OpenMMDFT::LeastSquaresMethod::Gauss;
        EXPECT_ERROR_CONTAINS(solver.invertSymmetricPositiveDefinite(n, G, gauss), "Cholesky");
    }
}

/*
 * Problems near the ends of the double range. A^T A of an A scaled by 1e300 overflows, of one scaled by 1e-300
 * underflows, and the squares of the residual leave the range in both, although the least-squares problem itself
 * is as well-conditioned as the unscaled one. Every method, constrained or not, must return the solution of the
 * scaled problem with finite residual norms and condition estimate, or, where the solution itself lies beyond the
 * double range, raise an error that says it is not finite (never NaN or Inf without an error).
 */
namespace {

const vector<LeastSquaresMethod> ALL_METHODS = {LeastSquaresMethod::QR, LeastSquaresMethod::Gauss, LeastSquaresMethod::Cholesky,
                                                LeastSquaresMethod::GaussSeidel};

/* Gauss-Seidel to 1e-12 (cond 10 converges in well under 1000 sweeps); the other methods' options are the defaults. */
LeastSquaresOptions scaleTestOptions(LeastSquaresMethod method) {
    LeastSquaresOptions o = withMethod(method);
    o.tolerance = 1e-12;
    return o;
}

/*
 * Relative error bound of x for cond(A) = cond (as LeastSquaresAccuracy): QR 20 cond eps sqrt(n) (1 + cond rho), the
 * normal equations 20 cond^2 eps sqrt(n), Gauss-Seidel that plus cond^2 times ten times its tolerance. Scaling by a
 * power of ten rounds A and b (relative eps), a perturbation these bounds already cover.
 */
double scaleTestTolerance(LeastSquaresMethod method, int n, double cond, double rho, const LeastSquaresOptions& o) {
    const double sq = sqrt((double) n);
    if (method == LeastSquaresMethod::QR)
        return 20 * cond * EPS * sq * (1 + cond * rho);
    const double normal = 20 * cond * cond * EPS * sq;
    return method == LeastSquaresMethod::GaussSeidel ? normal + 10 * cond * cond * o.tolerance : normal;
}

/* A scale for a trace line: to_string would print all 300 digits. */
string sci(double v) {
    char text[32];
    snprintf(text, sizeof(text), "%.3g", v);
    return text;
}

bool allFinite(const vector<double>& v) {
    for (double x : v)
        if (!std::isfinite(x))
            return false;
    return true;
}

} // namespace

/* A scaled by sA and b by sb, so x scales by sb/sA; against dgelsd on the scaled problem. */
TEST(LeastSquaresExtremeScales, EveryMethodAgainstDgelsd) {
    const int m = 60, n = 8, nrhs = 2;
    const double cond = 10;
    Problem p = makeProblem(m, n, nrhs, cond, 1e-3, 61);
    LeastSquaresSolver solver(platform("Reference"));
    const LeastSquaresResult unscaled = solver.solve(m, n, nrhs, p.A, p.b);
    // (sA, sb): A^T A overflows; underflows; x near the smallest normal numbers; x near the largest.
    for (auto scales : vector<pair<double, double>>{{1e300, 1e300}, {1e-300, 1e-300}, {1e300, 1.0}, {1e-200, 1e100}}) {
        const vector<double> A = scaled(p.A, scales.first), b = scaled(p.b, scales.second);
        const vector<double> ref = dgelsd(m, n, nrhs, A, b);
        ASSERT_TRUE(allFinite(ref));
        for (LeastSquaresMethod method : ALL_METHODS) {
            SCOPED_TRACE(leastSquaresMethodName(method) + " sA=" + sci(scales.first) + " sb=" + sci(scales.second));
            const LeastSquaresOptions o = scaleTestOptions(method);
            LeastSquaresResult r;
            ASSERT_NO_THROW(r = solver.solve(m, n, nrhs, A, b, o));
            EXPECT_LE(relativeError(r.x, ref), scaleTestTolerance(method, n, cond, p.rho, o));
            // The residual norms: those of the returned x (recomputed in long double), and the optimum the problem was
            // built with, ||r_k|| = sb * 1e-3 * ||A x_k|| (k+1)/nrhs, which the unscaled solve reports times sb.
            const vector<double> exact = residualNormsLongDouble(m, n, nrhs, A, r.x, b);
            ASSERT_EQ((size_t) nrhs, r.residualNorms.size());
            for (int k = 0; k < nrhs; k++) {
                EXPECT_NEAR(exact[k], r.residualNorms[k], 1e-10 * exact[k]);
                EXPECT_NEAR(unscaled.residualNorms[k] * scales.second, r.residualNorms[k], 1e-6 * exact[k]);
            }
            EXPECT_TRUE(std::isfinite(r.conditionEstimate)) << r.conditionEstimate;
            if (method != LeastSquaresMethod::GaussSeidel) {
                const LeastSquaresResult base = solver.solve(m, n, nrhs, p.A, p.b, o);
                EXPECT_NEAR(base.conditionEstimate, r.conditionEstimate, 1e-6 * base.conditionEstimate); // scale invariant
            }
        }
    }
    // A solution beyond the double range (x ~ 1e600) is an error that says so, from every method.
    const vector<double> A = scaled(p.A, 1e-300), b = scaled(p.b, 1e300);
    for (LeastSquaresMethod method : ALL_METHODS) {
        SCOPED_TRACE(leastSquaresMethodName(method));
        EXPECT_ERROR_CONTAINS(solver.solve(m, n, nrhs, A, b, scaleTestOptions(method)), "solution is not finite");
    }
}

/* The same on the CPU platform (the same LAPACK kernel behind another platform's Context). */
TEST(LeastSquaresExtremeScales, CpuPlatform) {
    const int m = 60, n = 8, nrhs = 1;
    Problem p = makeProblem(m, n, nrhs, 10, 1e-3, 62);
    LeastSquaresSolver solver(platform("CPU"), {{"Threads", "2"}});
    for (double s : {1e300, 1e-300}) {
        const vector<double> A = scaled(p.A, s), b = scaled(p.b, s);
        const vector<double> ref = dgelsd(m, n, nrhs, A, b);
        for (LeastSquaresMethod method : ALL_METHODS) {
            SCOPED_TRACE(leastSquaresMethodName(method) + " s=" + sci(s));
            const LeastSquaresOptions o = scaleTestOptions(method);
            LeastSquaresResult r;
            ASSERT_NO_THROW(r = solver.solve(m, n, nrhs, A, b, o));
            EXPECT_LE(relativeError(r.x, ref), scaleTestTolerance(method, n, 10, p.rho, o));
            const double exact = residualNormsLongDouble(m, n, nrhs, A, r.x, b)[0];
            EXPECT_NEAR(exact, r.residualNorms[0], 1e-10 * exact);
        }
    }
}

/*
 * Equality constraints on scaled data: A, b by s and C, d by t leave x as it is and scale the multipliers by s^2 / t.
 * Against dgglse on the scaled problem; the constraints and the stationarity A^T (A x - b) + C^T lambda = 0 are checked
 * in long double. Where the multipliers themselves leave the double range (s = 1e300, t = 1: lambda ~ 1e600), an error.
 */
TEST(LeastSquaresExtremeScales, ConstraintsAgainstDgglse) {
    const int m = 60, n = 8, p = 2, nrhs = 2;
    const double cond = 10;
    Problem pr = makeProblem(m, n, nrhs, cond, 1e-1, 63);
    mt19937_64 rng(64);
    normal_distribution<double> g;
    vector<double> C((size_t) p * n), d((size_t) p * nrhs);
    for (double& v : C)
        v = g(rng);
    for (double& v : d)
        v = g(rng);
    LeastSquaresSolver solver(platform("Reference"));
    // (s, t): both 1e300 (A^T A overflows); both 1e-300 (underflows); C and d alone at 1e+-300; the two parts 1e200 apart.
    for (auto scales : vector<pair<double, double>>{{1e300, 1e300}, {1e-300, 1e-300}, {1.0, 1e300}, {1.0, 1e-300}, {1e100, 1e-100}}) {
        const vector<double> A = scaled(pr.A, scales.first), b = scaled(pr.b, scales.first);
        const vector<double> Cs = scaled(C, scales.second), ds = scaled(d, scales.second);
        const vector<double> ref = dgglse(m, n, nrhs, p, A, b, Cs, ds);
        ASSERT_TRUE(allFinite(ref));
        for (LeastSquaresMethod method : ALL_METHODS) {
            SCOPED_TRACE(leastSquaresMethodName(method) + " s=" + sci(scales.first) + " t=" + sci(scales.second));
            const LeastSquaresOptions o = scaleTestOptions(method);
            LeastSquaresResult r;
            ASSERT_NO_THROW(r = solver.solveConstrained(m, n, nrhs, A, b, p, Cs, ds, o));
            // The constrained methods work on A restricted to null(C), or on A^T A: the normal-equation bound for all.
            EXPECT_LE(relativeError(r.x, ref), scaleTestTolerance(LeastSquaresMethod::GaussSeidel, n, cond, 0, o));
            ASSERT_TRUE(allFinite(r.lagrangeMultipliers));
            EXPECT_LE(stationarityViolation(m, n, nrhs, p, A, b, Cs, r.x, r.lagrangeMultipliers), 1e-8);
            for (int k = 0; k < nrhs; k++)
                for (int s = 0; s < p; s++) {
                    long double cx = 0, size = fabsl(ds[(size_t) s * nrhs + k]);
                    for (int j = 0; j < n; j++) {
                        cx += (long double) Cs[(size_t) s * n + j] * r.x[(size_t) j * nrhs + k];
                        size += fabsl((long double) Cs[(size_t) s * n + j] * r.x[(size_t) j * nrhs + k]);
                    }
                    EXPECT_LE((double) (fabsl(cx - ds[(size_t) s * nrhs + k]) / size), 1e-12);
                }
            const vector<double> exact = residualNormsLongDouble(m, n, nrhs, A, r.x, b);
            for (int k = 0; k < nrhs; k++)
                EXPECT_NEAR(exact[k], r.residualNorms[k], 1e-10 * exact[k]);
        }
    }
    const vector<double> A = scaled(pr.A, 1e300), b = scaled(pr.b, 1e300);
    for (LeastSquaresMethod method : ALL_METHODS) {
        SCOPED_TRACE(leastSquaresMethodName(method));
        EXPECT_ERROR_CONTAINS(solver.solveConstrained(m, n, nrhs, A, b, p, C, d, scaleTestOptions(method)),
                              "Lagrange multipliers are not finite");
    }
}

/* Given normal equations scaled towards both ends of the range: the solution is that of the unscaled fit. */
TEST(LeastSquaresExtremeScales, GivenNormalEquations) {
    const int m = 60, n = 8;
    const double cond = 10;
    Problem p = makeProblem(m, n, 1, cond, 1e-3, 65);
    const vector<double> ref = dgelsd(m, n, 1, p.A, p.b);
    vector<double> G((size_t) n * n, 0.0), h(n, 0.0);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            h[j] += p.A[(size_t) i * n + j] * p.b[i];
            for (int k = 0; k < n; k++)
                G[(size_t) j * n + k] += p.A[(size_t) i * n + j] * p.A[(size_t) i * n + k];
        }
    LeastSquaresSolver solver(platform("Reference"));
    for (double s : {0x1p1020, 1e-300, 0x1p-1060}) { // the largest normal power of two; near and inside the subnormal range
        for (LeastSquaresMethod method : {LeastSquaresMethod::Gauss, LeastSquaresMethod::Cholesky, LeastSquaresMethod::GaussSeidel}) {
            SCOPED_TRACE(leastSquaresMethodName(method) + " s=" + sci(s));
            LeastSquaresOptions o = scaleTestOptions(method);
            o.normalEquationsGiven = true;
            LeastSquaresResult r;
            ASSERT_NO_THROW(r = solver.solve(n, n, 1, scaled(G, s), scaled(h, s), o));
            // Subnormal G and h carry only about 2^-14 relative precision at 2^-1060 (their exponents reach 2^-1074).
            const double tol = (s < 1e-307 ? cond * cond * 0x1p-10 : scaleTestTolerance(method, n, cond, 0, o));
            EXPECT_LE(relativeError(r.x, ref), tol);
            EXPECT_TRUE(allFinite(r.residualNorms));
        }
    }
}

/*
 * Scaling by powers of two is exact in binary floating point, so it must not change the answer at all: x(2^a A, 2^b b)
 * is 2^(b-a) x(A, b) bit for bit, the residual norms 2^b times, the condition estimate the same; with constraints
 * (C by 2^c, d by 2^(c+b-a)) the multipliers are 2^(a+b-c) times. This holds for ordinary exponents with or without
 * any internal scaling; at |a|, |b| near 1000 only if the solver keeps A^T A and the residual inside the double range.
 */
TEST(LeastSquaresExtremeScales, PowerOfTwoScalingIsExact) {
    const int m = 40, n = 6, p = 1, nrhs = 2;
    Problem pr = makeProblem(m, n, nrhs, 10, 1e-2, 66);
    vector<double> C(n, 1.0), d{0.5, -0.25};
    LeastSquaresSolver solver(platform("Reference"));
    for (LeastSquaresMethod method : ALL_METHODS) {
        const LeastSquaresOptions o = scaleTestOptions(method);
        const LeastSquaresResult base = solver.solve(m, n, nrhs, pr.A, pr.b, o);
        const LeastSquaresResult baseC = solver.solveConstrained(m, n, nrhs, pr.A, pr.b, p, C, d, o);
        for (auto e : vector<array<int, 3>>{{3, -2, 5}, {1000, 1000, 1000}, {-1000, -1000, -1000}, {1000, 0, 0}, {-600, 400, 0}}) {
            const int ea = e[0], eb = e[1], ec = e[2];
            SCOPED_TRACE(leastSquaresMethodName(method) + " 2^" + to_string(ea) + " A, 2^" + to_string(eb) + " b, 2^" + to_string(ec) + " C");
            const vector<double> A = scaled(pr.A, ldexp(1.0, ea)), b = scaled(pr.b, ldexp(1.0, eb));
            LeastSquaresResult r;
            ASSERT_NO_THROW(r = solver.solve(m, n, nrhs, A, b, o));
            for (size_t i = 0; i < r.x.size(); i++)
                EXPECT_EQ(ldexp(base.x[i], eb - ea), r.x[i]) << i;
            for (int k = 0; k < nrhs; k++)
                EXPECT_EQ(ldexp(base.residualNorms[k], eb), r.residualNorms[k]) << k;
            EXPECT_EQ(base.conditionEstimate, r.conditionEstimate);
            EXPECT_EQ(base.iterations, r.iterations);
            const vector<double> Cs = scaled(C, ldexp(1.0, ec)), ds = scaled(d, ldexp(1.0, ec + eb - ea));
            ASSERT_NO_THROW(r = solver.solveConstrained(m, n, nrhs, A, b, p, Cs, ds, o));
            for (size_t i = 0; i < r.x.size(); i++)
                EXPECT_EQ(ldexp(baseC.x[i], eb - ea), r.x[i]) << i;
            for (size_t i = 0; i < r.lagrangeMultipliers.size(); i++)
                EXPECT_EQ(ldexp(baseC.lagrangeMultipliers[i], ea + eb - ec), r.lagrangeMultipliers[i]) << i;
        }
    }
}
