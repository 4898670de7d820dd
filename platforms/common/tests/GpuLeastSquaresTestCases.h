#ifndef OPENMMDFT_GPULEASTSQUARESTESTCASES_H_
#define OPENMMDFT_GPULEASTSQUARESTESTCASES_H_

/*
 * Least squares on a GPU platform (OpenCL or CUDA: the common Compute API kernels), in
 * the solver's precision, against LAPACK computed in the test: dgelsd (SVD) for plain problems,
 * dgglse for equality-constrained ones, dgesv for a given (indefinite) normal matrix.
 * Tolerances (relative 2-norm error of x, epsS = 1.2e-7, epsD = 2.2e-16, c = 20 sqrt(n)):
 *   double  QR c cond epsD;                     normal equations c cond^2 epsD
 *   mixed   QR c cond epsS (input rounded);     normal equations c (cond epsS + cond^2 epsD)
 *   single  QR c cond epsS;                     normal equations c cond^2 epsS (only while cond^2 epsS < 1e-2)
 * The sizes cross the panel width of the blocked factorizations (64): n = 3, 40, 50, 64, 65, 129, 150, 1000;
 * cond(A) up to 1e8 (QR in double; the normal equations are tested where their tolerance stays below 1e-2).
 * Data scaled by 1e+-300 (testExtremeScales, run within testErrors) must give the scaled problem's solution in every
 * precision, with the same tolerances: the solver scales them by powers of two before they reach the device.
 */

#include "../../../tests/LapackReference.h"
#include "openmmdft/LeastSquares.h"
#include "openmm/OpenMMException.h"
#include <gtest/gtest.h>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

extern "C" {
void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b, const int* ldb, int* info);
}

namespace GpuLeastSquaresTest {

using namespace OpenMMDFT;
using namespace LapackReference;
using std::string;
using std::vector;


/* Row-major A = U diag(s) V^T with cond(A) = cond, and consistent right-hand sides b (nrhs columns). */
inline void makeProblem(int m, int n, int nrhs, double cond, unsigned seed, vector<double>& A, vector<double>& b) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> g;
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


/** The stated tolerances (top of this file) for QR (normalEquations false) or the normal equations. */
inline double tolerance(const string& precision, int n, double cond, bool normalEquations) {
    const double epsS = FLT_EPSILON, epsD = DBL_EPSILON, k = 20 * sqrt((double) n);
    if (precision == "double")
        return k * (normalEquations ? cond * cond : cond) * epsD;
    if (precision == "mixed")
        return k * (normalEquations ? cond * epsS + cond * cond * epsD : cond * epsS);
    return k * (normalEquations ? cond * cond : cond) * epsS;
}

struct AccuracyCase {
    int m, n;
    vector<double> conds;
};

/** QR, Cholesky and Gauss against dgelsd; a case whose tolerance would exceed 1e-2 is not run. */
inline void testAgainstDgelsd(LeastSquaresSolver& solver, const string& platformName, const string& precision,
                              const vector<AccuracyCase>& cases) {
    for (const AccuracyCase& c : cases)
        for (double cond : c.conds) {
            vector<double> A, b;
            makeProblem(c.m, c.n, 2, cond, 1000 + c.n + (unsigned) log10(cond), A, b);
            vector<double> ref = dgelsd(c.m, c.n, 2, A, b);
            printf("[ %s ] %4d x %4d cond %5.0e:", precision.c_str(), c.m, c.n, cond);
            for (LeastSquaresMethod method : {LeastSquaresMethod::QR, LeastSquaresMethod::Cholesky, LeastSquaresMethod::Gauss}) {
                SCOPED_TRACE(precision + " " + leastSquaresMethodName(method) + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                             " cond=" + std::to_string(cond));
                const double tol = tolerance(precision, c.n, cond, method != LeastSquaresMethod::QR);
                if (tol > 1e-2)
                    continue;
                LeastSquaresOptions o;
                o.method = method;
                LeastSquaresResult r = solver.solve(c.m, c.n, 2, A, b, o);
                EXPECT_EQ(precision, r.precision);
                EXPECT_EQ(platformName, r.platformName);
                // At least A itself is on the device (QR keeps [A | b] in the working type, the normal equations A in the storage type).
                EXPECT_GE(r.deviceMemoryBytes, (long long) c.m * c.n * (precision == "double" ? 8 : 4));
                const double err = relativeError(r.x, ref);
                EXPECT_LE(err, tol);
                printf("  %s %.1e (tol %.1e)", leastSquaresMethodName(method).c_str(), err, tol);
            }
            printf("\n");
        }
}

inline void testGaussSeidel(LeastSquaresSolver& solver, const string& precision) {
    const int m = 400, n = 100;
    vector<double> A, b;
    makeProblem(m, n, 2, 3.0, 77, A, b);
    vector<double> ref = dgelsd(m, n, 2, A, b);
    LeastSquaresOptions o;
    o.method = LeastSquaresMethod::GaussSeidel;
    o.tolerance = (precision == "single" ? 1e-5 : 1e-10);
    LeastSquaresResult r = solver.solve(m, n, 2, A, b, o);
    EXPECT_GT(r.iterations, 0);
    EXPECT_LE(r.relativeNormalResidual, o.tolerance);
    const double floor = (precision == "double" ? 0.0 : 20 * sqrt((double) n) * 9 * FLT_EPSILON);
    EXPECT_LE(relativeError(r.x, ref), 10 * 9 * o.tolerance + floor);
    // Non-convergence is an error that names the iterations.
    o.maxIterations = 3;
    o.tolerance = 1e-14;
    try {
        solver.solve(m, n, 2, A, b, o);
        ADD_FAILURE() << "expected non-convergence";
    }
    catch (const OpenMM::OpenMMException& e) {
        EXPECT_NE(string::npos, string(e.what()).find("did not converge in 3 iterations")) << e.what();
    }
}

/**
 * Equality constraints (range-space method on the device) against LAPACK dgglse, every method,
 * two right-hand sides, n = 130 (three panels). The multipliers are checked through the optimality
 * condition A^T (A x - b) + C^T lambda = 0 (evaluated here in double), the constraints through C x - d.
 */
inline void testConstrained(LeastSquaresSolver& solver, const string& precision) {
    const int m = 390, n = 130, p = 3, nrhs = 2;
    const double cond = 10;
    vector<double> A, b;
    makeProblem(m, n, nrhs, cond, 4242, A, b);
    std::mt19937_64 rng(99);
    std::normal_distribution<double> g;
    for (double& v : b)
        v += 0.1 * g(rng); // an inconsistent b, so that the constraints bind
    vector<double> C((size_t) p * n), d((size_t) p * nrhs);
    for (int j = 0; j < n; j++) {
        C[j] = 1.0; // a total, as for ESP charges
        C[n + j] = (j % 2 ? 1.0 : -1.0);
        C[2 * n + j] = g(rng);
    }
    for (double& v : d)
        v = g(rng);
    vector<double> ref = dgglse(m, n, nrhs, p, A, b, C, d);
    for (LeastSquaresMethod method :
         {LeastSquaresMethod::QR, LeastSquaresMethod::Cholesky, LeastSquaresMethod::Gauss, LeastSquaresMethod::GaussSeidel}) {
        SCOPED_TRACE(precision + " " + leastSquaresMethodName(method));
        LeastSquaresOptions o;
        o.method = method;
        o.tolerance = (precision == "single" ? 1e-5 : 1e-11);
        LeastSquaresResult r = solver.solveConstrained(m, n, nrhs, A, b, p, C, d, o);
        // The Schur complement C (A^T A)^-1 C^T is formed in the working precision for every method.
        double tol = tolerance(precision, n, cond, true);
        if (method == LeastSquaresMethod::GaussSeidel)
            tol += 10 * cond * cond * o.tolerance;
        const double err = relativeError(r.x, ref);
        EXPECT_LE(err, tol);
        ASSERT_EQ((size_t) p * nrhs, r.lagrangeMultipliers.size());
        double worstStationarity = 0, worstConstraint = 0;
        for (int rr = 0; rr < nrhs; rr++) {
            vector<double> res(m);
            for (int i = 0; i < m; i++) {
                double s = -b[(size_t) i * nrhs + rr];
                for (int j = 0; j < n; j++)
                    s += A[(size_t) i * n + j] * r.x[(size_t) j * nrhs + rr];
                res[i] = s;
            }
            double g2 = 0, atb2 = 0;
            for (int j = 0; j < n; j++) {
                double gj = 0, aj = 0;
                for (int i = 0; i < m; i++) {
                    gj += A[(size_t) i * n + j] * res[i];
                    aj += A[(size_t) i * n + j] * b[(size_t) i * nrhs + rr];
                }
                for (int s = 0; s < p; s++)
                    gj += C[(size_t) s * n + j] * r.lagrangeMultipliers[(size_t) s * nrhs + rr];
                g2 += gj * gj;
                atb2 += aj * aj;
            }
            worstStationarity = std::max(worstStationarity, sqrt(g2 / atb2));
            for (int s = 0; s < p; s++) {
                double cx = 0, cnorm = 0;
                for (int j = 0; j < n; j++) {
                    cx += C[(size_t) s * n + j] * r.x[(size_t) j * nrhs + rr];
                    cnorm += fabs(C[(size_t) s * n + j] * r.x[(size_t) j * nrhs + rr]);
                }
                worstConstraint = std::max(worstConstraint, fabs(cx - d[(size_t) s * nrhs + rr]) / (cnorm + fabs(d[(size_t) s * nrhs + rr])));
            }
        }
        // x is within tol of the optimum, so the gradient of the Lagrangian is within about cond^2 tol of zero.
        EXPECT_LE(worstStationarity, cond * cond * tol);
        EXPECT_LE(worstConstraint, tol);
        printf("[ %s ] constrained %s: err %.1e (tol %.1e), stationarity %.1e, constraints %.1e\n", precision.c_str(),
               leastSquaresMethodName(method).c_str(), err, tol, worstStationarity, worstConstraint);
    }
    // Dependent constraint rows are named.
    vector<double> C2(C);
    for (int j = 0; j < n; j++)
        C2[2 * n + j] = 2 * C[j] - C[n + j];
    try {
        solver.solveConstrained(m, n, nrhs, A, b, p, C2, d);
        ADD_FAILURE() << "dependent constraints not detected";
    }
    catch (const OpenMM::OpenMMException& e) {
        EXPECT_NE(string::npos, string(e.what()).find("linearly dependent")) << e.what();
    }
}

/**
 * normalEquationsGiven: the normal matrix and right-hand side are handed over. A^T A of a fitting
 * problem (every normal-equation method, against dgelsd), and a symmetric indefinite matrix that
 * Gauss can only factor with row exchanges (zero diagonal; against dgesv).
 */
inline void testGivenNormalEquations(LeastSquaresSolver& solver, const string& precision) {
    const int m = 300, n = 90;
    vector<double> A, b;
    makeProblem(m, n, 1, 5.0, 31, A, b);
    vector<double> ref = dgelsd(m, n, 1, A, b);
    vector<double> G((size_t) n * n, 0.0), h(n, 0.0);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            h[j] += A[(size_t) i * n + j] * b[i];
            for (int k = 0; k < n; k++)
                G[(size_t) j * n + k] += A[(size_t) i * n + j] * A[(size_t) i * n + k];
        }
    for (LeastSquaresMethod method : {LeastSquaresMethod::Cholesky, LeastSquaresMethod::Gauss, LeastSquaresMethod::GaussSeidel}) {
        SCOPED_TRACE(precision + " " + leastSquaresMethodName(method));
        LeastSquaresOptions o;
        o.method = method;
        o.normalEquationsGiven = true;
        o.tolerance = (precision == "single" ? 1e-5 : 1e-11);
        LeastSquaresResult r = solver.solve(n, n, 1, G, h, o);
        double tol = tolerance(precision, n, 5.0, true) + (method == LeastSquaresMethod::GaussSeidel ? 10 * 25 * o.tolerance : 0.0);
        EXPECT_LE(relativeError(r.x, ref), tol);
    }
    // Symmetric indefinite, zero diagonal: [[0, B], [B^T, 0]] with B = I + small coupling.
    const int half = 70, n2 = 2 * half;
    vector<double> K((size_t) n2 * n2, 0.0), k(n2);
    std::mt19937_64 rng(5);
    std::normal_distribution<double> g;
    for (int i = 0; i < half; i++)
        for (int j = 0; j < half; j++) {
            const double v = (i == j ? 2.0 : 0.05 * g(rng));
            K[(size_t) i * n2 + half + j] = v;
            K[(size_t) (half + j) * n2 + i] = v;
        }
    for (double& v : k)
        v = g(rng);
    vector<double> lu(K), x(k);
    vector<int> ipiv(n2);
    int info, one = 1, nn = n2;
    dgesv_(&nn, &one, lu.data(), &nn, ipiv.data(), x.data(), &nn, &info); // K symmetric: row- and column-major agree
    ASSERT_EQ(0, info);
    LeastSquaresOptions o;
    o.method = LeastSquaresMethod::Gauss;
    o.normalEquationsGiven = true;
    LeastSquaresResult r = solver.solve(n2, n2, 1, K, k, o);
    EXPECT_LE(relativeError(r.x, x), tolerance(precision, n2, 10.0, false));
    // The same matrix made singular (two equal rows of the coupling block, mirrored): an error, not an answer.
    for (int j = 0; j < half; j++) {
        K[(size_t) (half - 1) * n2 + half + j] = K[(size_t) half + j];
        K[(size_t) (half + j) * n2 + half - 1] = K[(size_t) (half + j) * n2];
    }
    try {
        solver.solve(n2, n2, 1, K, k, o);
        ADD_FAILURE() << "a singular given normal matrix was accepted";
    }
    catch (const OpenMM::OpenMMException& e) {
        EXPECT_NE(string::npos, string(e.what()).find("singular")) << e.what();
    }
}

/**
 * The inverse of a given symmetric positive definite matrix (n = 150, three panels of 64): n right-hand sides, the
 * identity, as density fitting inverts its Coulomb metric. Many right-hand sides take the tiled product in the
 * triangular solves (one column takes the per-element update), so this checks that path for Cholesky (L and L^T)
 * and Gauss (unit L and U), against LAPACK's dgesv on the same matrix, to the normal-equation tolerance.
 */
inline void testManyRightHandSides(LeastSquaresSolver& solver, const string& precision) {
    const int m = 400, n = 150;
    vector<double> A, unused;
    makeProblem(m, n, 1, 5.0, 77, A, unused);
    vector<double> G((size_t) n * n, 0.0);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++)
                G[(size_t) j * n + k] += A[(size_t) i * n + j] * A[(size_t) i * n + k];
    vector<double> identity((size_t) n * n, 0.0);
    for (int j = 0; j < n; j++)
        identity[(size_t) j * n + j] = 1.0;
    vector<double> lu(G), reference(identity);
    vector<int> ipiv(n);
    int info, nn = n;
    dgesv_(&nn, &nn, lu.data(), &nn, ipiv.data(), reference.data(), &nn, &info); // G symmetric: its inverse too
    ASSERT_EQ(0, info);
    for (LeastSquaresMethod method : {LeastSquaresMethod::Cholesky, LeastSquaresMethod::Gauss}) {
        SCOPED_TRACE(precision + " " + leastSquaresMethodName(method));
        LeastSquaresOptions o;
        o.method = method;
        o.normalEquationsGiven = true;
        const LeastSquaresResult r = solver.solve(n, n, n, G, identity, o);
        EXPECT_LE(relativeError(r.x, reference), tolerance(precision, n, 5.0, true));
    }
    // Cholesky takes a path of its own for a multiple of the identity (the inverse as W^T W, W = L^-1): 3 I gives
    // 3 G^-1; a right-hand side that differs from the identity in one element takes the general path.
    LeastSquaresOptions o;
    o.method = LeastSquaresMethod::Cholesky;
    o.normalEquationsGiven = true;
    vector<double> scaled(identity), scaledReference(reference);
    for (double& v : scaled)
        v *= 3;
    for (double& v : scaledReference)
        v *= 3;
    EXPECT_LE(relativeError(solver.solve(n, n, n, G, scaled, o).x, scaledReference), tolerance(precision, n, 5.0, true));
    vector<double> almost(identity), columnMajor(identity), almostReference((size_t) n * n);
    almost[(size_t) 3 * n + 100] = 0.5;        // row 3, column 100 of the row-major right-hand sides
    columnMajor[3 + (size_t) 100 * n] = 0.5;   // the same element for dgesv
    lu = G;
    dgesv_(&nn, &nn, lu.data(), &nn, ipiv.data(), columnMajor.data(), &nn, &info);
    ASSERT_EQ(0, info);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            almostReference[(size_t) i * n + j] = columnMajor[i + (size_t) j * n];
    EXPECT_LE(relativeError(solver.solve(n, n, n, G, almost, o).x, almostReference), tolerance(precision, n, 5.0, true));
    // The inverse as its own call: the same solve, so the same bits as the identity's.
    const LeastSquaresResult inverse = solver.invertSymmetricPositiveDefinite(n, G, o);
    EXPECT_EQ(inverse.x, solver.solve(n, n, n, G, identity, o).x);
    EXPECT_LE(relativeError(inverse.x, reference), tolerance(precision, n, 5.0, true));
    EXPECT_GT(inverse.conditionEstimate, 1.0);
    vector<double> indefinite(G);
    indefinite[0] = -1.0;
    try {
        solver.invertSymmetricPositiveDefinite(n, indefinite, o);
        ADD_FAILURE() << "an indefinite matrix was inverted";
    }
    catch (const OpenMM::OpenMMException& e) {
        const string what = e.what();
        EXPECT_NE(what.find("the matrix to invert is not positive definite"), string::npos) << what;
        EXPECT_NE(what.find("invertSymmetricPositiveDefinite ("), string::npos) << what;
        EXPECT_EQ(what.find("A^T A"), string::npos) << what;
        EXPECT_EQ(what.find("use method QR"), string::npos) << what;
    }
}

/**
 * Problems near the ends of the double range: A and b scaled by 1e+-300 (and, with a sum constraint, C and d too).
 * A^T A overflows or underflows even in double, and single precision cannot hold the data at all, yet the problem is
 * as well-conditioned as the unscaled one. Every method, in every precision, must return the scaled problem's
 * solution within the precision's tolerance (top of this file; against dgelsd and dgglse on the scaled problem), with
 * finite residual norms (checked against long double) and condition estimate: never NaN or Inf.
 */
inline void testExtremeScales(LeastSquaresSolver& solver) {
    const int m = 200, n = 70, nrhs = 2; // n crosses the 64-column panel
    const double cond = 10;
    vector<double> A0, b0;
    makeProblem(m, n, nrhs, cond, 71, A0, b0);
    std::mt19937_64 rng(72);
    std::normal_distribution<double> g;
    for (double& v : b0)
        v += 0.1 * g(rng); // inconsistent, so that the residual norms are not rounding noise
    vector<double> C(n, 1.0), d0(nrhs, 0.5);
    const string precision = solver.solve(2, 1, 1, {1.0, 1.0}, {1.0, 1.0}).precision;
    const vector<LeastSquaresMethod> methods = {LeastSquaresMethod::QR, LeastSquaresMethod::Cholesky, LeastSquaresMethod::Gauss,
                                                LeastSquaresMethod::GaussSeidel};
    for (double s : {1e300, 1e-300}) {
        const vector<double> A = scaled(A0, s), b = scaled(b0, s), Cs = scaled(C, s), d = scaled(d0, s);
        const vector<double> ref = dgelsd(m, n, nrhs, A, b), refC = dgglse(m, n, nrhs, 1, A, b, Cs, d);
        for (LeastSquaresMethod method : methods)
            for (bool constrained : {false, true}) {
                SCOPED_TRACE(leastSquaresMethodName(method) + (constrained ? " constrained" : "") + " s=" + (s > 1 ? "1e300" : "1e-300"));
                LeastSquaresOptions o;
                o.method = method;
                o.tolerance = (precision == "single" ? 1e-5 : 1e-11);
                LeastSquaresResult r;
                try {
                    r = constrained ? solver.solveConstrained(m, n, nrhs, A, b, 1, Cs, d, o) : solver.solve(m, n, nrhs, A, b, o);
                }
                catch (const OpenMM::OpenMMException& e) {
                    ADD_FAILURE() << e.what();
                    continue;
                }
                // Constrained solves (range space) and the normal equations get the normal-equation bound.
                double tol = tolerance(precision, n, cond, constrained || method != LeastSquaresMethod::QR);
                if (method == LeastSquaresMethod::GaussSeidel)
                    tol += 10 * cond * cond * o.tolerance;
                EXPECT_LE(relativeError(r.x, constrained ? refC : ref), tol);
                const vector<double> exact = residualNormsLongDouble(m, n, nrhs, A, r.x, b);
                for (int k = 0; k < nrhs; k++)
                    EXPECT_NEAR(exact[k], r.residualNorms[k], 1e-10 * exact[k]);
                EXPECT_TRUE(std::isfinite(r.conditionEstimate)) << r.conditionEstimate;
                for (double v : r.lagrangeMultipliers)
                    EXPECT_TRUE(std::isfinite(v)) << v;
            }
    }
}

inline void testErrors(LeastSquaresSolver& solver) {
    vector<double> A, b;
    makeProblem(50, 6, 1, 10, 5, A, b);
    for (int i = 0; i < 50; i++)
        A[(size_t) i * 6 + 4] = 3.0 * A[(size_t) i * 6 + 1]; // rank deficient
    for (LeastSquaresMethod method : {LeastSquaresMethod::QR, LeastSquaresMethod::Cholesky, LeastSquaresMethod::Gauss}) {
        LeastSquaresOptions o;
        o.method = method;
        try {
            solver.solve(50, 6, 1, A, b, o);
            ADD_FAILURE() << "rank deficiency not detected by " << leastSquaresMethodName(method);
        }
        catch (const OpenMM::OpenMMException& e) {
            string msg = e.what();
            EXPECT_TRUE(msg.find("rank deficient") != string::npos || msg.find("singular") != string::npos) << msg;
        }
    }
    // cond(A) = 1e8 makes A^T A singular in every precision: the normal-equation methods say so instead of answering.
    vector<double> A8, b8;
    makeProblem(300, 50, 1, 1e8, 8, A8, b8);
    for (LeastSquaresMethod method : {LeastSquaresMethod::Cholesky, LeastSquaresMethod::Gauss}) {
        LeastSquaresOptions o;
        o.method = method;
        try {
            solver.solve(300, 50, 1, A8, b8, o);
            ADD_FAILURE() << "cond(A) = 1e8 accepted by " << leastSquaresMethodName(method);
        }
        catch (const OpenMM::OpenMMException& e) {
            EXPECT_NE(string::npos, string(e.what()).find("singular")) << e.what();
        }
    }
    // The minimum-norm solution is a Reference/CPU feature: refused with a message that says so.
    LeastSquaresOptions o;
    o.allowRankDeficient = true;
    try {
        solver.solve(50, 6, 1, A, b, o);
        ADD_FAILURE() << "allowRankDeficient accepted";
    }
    catch (const OpenMM::OpenMMException& e) {
        EXPECT_NE(string::npos, string(e.what()).find("Reference and CPU")) << e.what();
    }
    // Constraints with m < n (A cannot have full column rank): refused with a message that says so.
    vector<double> A2, b2;
    makeProblem(8, 8, 1, 2, 6, A2, b2);
    A2.resize(6 * 8);
    b2.resize(6);
    vector<double> C(2 * 8, 0.0), d(2, 0.0);
    C[0] = C[8 + 1] = 1.0;
    try {
        solver.solveConstrained(6, 8, 1, A2, b2, 2, C, d);
        ADD_FAILURE() << "m < n with constraints accepted";
    }
    catch (const OpenMM::OpenMMException& e) {
        EXPECT_NE(string::npos, string(e.what()).find("m >= n")) << e.what();
    }
    // Data near the ends of the double range give answers, not NaN, Inf or an error.
    testExtremeScales(solver);
}

/** The cases shared by every GPU platform; the large one is the 5000 x 1000. */
inline vector<AccuracyCase> smallCases() {
    return {{10, 3, {1, 1e2, 1e4}},   {200, 40, {1, 10, 1e3}}, {300, 64, {10}},  {300, 65, {10}},
            {600, 150, {1, 1e3}}, {500, 129, {10}},         {300, 50, {1e8}}};
}
inline vector<AccuracyCase> largeCases() {
    return {{5000, 1000, {10}}};
}

} // namespace GpuLeastSquaresTest

/**
 * Every least-squares case of a GPU platform, one list for OpenCL and CUDA: Fixture is a parameterized fixture (the
 * precision) whose SetUp makes `solver` on the platform or skips, and platformName names it in the messages.
 */
#define GPU_LEAST_SQUARES_TESTS(Fixture, platformName)                                                                    \
    TEST_P(Fixture, AllMethodsAgainstDgelsd) {                                                                            \
        GpuLeastSquaresTest::testAgainstDgelsd(*solver, platformName, GetParam(), GpuLeastSquaresTest::smallCases());      \
    }                                                                                                                      \
    TEST_P(Fixture, Large5000x1000AgainstDgelsd) {                                                                        \
        GpuLeastSquaresTest::testAgainstDgelsd(*solver, platformName, GetParam(), GpuLeastSquaresTest::largeCases());      \
    }                                                                                                                      \
    TEST_P(Fixture, GaussSeidel) { GpuLeastSquaresTest::testGaussSeidel(*solver, GetParam()); }                           \
    TEST_P(Fixture, ConstrainedAgainstDgglse) { GpuLeastSquaresTest::testConstrained(*solver, GetParam()); }              \
    TEST_P(Fixture, GivenNormalEquations) { GpuLeastSquaresTest::testGivenNormalEquations(*solver, GetParam()); }         \
    TEST_P(Fixture, InverseOfGivenMatrix) { GpuLeastSquaresTest::testManyRightHandSides(*solver, GetParam()); }           \
    TEST_P(Fixture, ErrorsAndUnsupported) { GpuLeastSquaresTest::testErrors(*solver); }                                   \
    INSTANTIATE_TEST_SUITE_P(Precisions, Fixture, ::testing::Values("single", "mixed", "double"),                         \
                             [](const ::testing::TestParamInfo<std::string>& info) { return info.param; })

#endif
