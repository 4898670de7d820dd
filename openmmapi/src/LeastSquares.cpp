/* Least squares (issue 4): the API side. Validates the problem, obtains the platform's
 * SolveLeastSquares kernel through a minimal private Context, and recomputes the residual
 * norms in double precision. The numerical work is in the platform kernels. */
#include "openmmdft/LeastSquares.h"
#include "openmmdft/internal/ContextImplAccess.h"
#include "openmmdft/LeastSquaresKernels.h"
#include "openmm/Context.h"
#include "openmm/Force.h"
#include "openmm/Kernel.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include "openmm/internal/ContextImpl.h"
#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

using namespace OpenMM;
using namespace std;

namespace OpenMMDFT {

namespace {

string fail(const string& what) {
    return "solveLeastSquares: " + what;
}

void checkSize(const char* name, size_t actual, size_t expected, const string& shape) {
    if (actual != expected) {
        stringstream msg;
        msg << "mismatched sizes: " << name << " has " << actual << " elements but must have " << shape << " = " << expected
            << " (row-major)";
        throw OpenMMException(fail(msg.str()));
    }
}

void checkFinite(const char* name, const double* v, int rows, int cols) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            if (!std::isfinite(v[(size_t) i * cols + j])) {
                stringstream msg;
                msg << name << " contains NaN or Inf at (" << i << ", " << j << ")";
                throw OpenMMException(fail(msg.str()));
            }
}

} // namespace

string leastSquaresMethodName(LeastSquaresMethod method) {
    switch (method) {
    case LeastSquaresMethod::Gauss:
        return "Gauss";
    case LeastSquaresMethod::Cholesky:
        return "Cholesky";
    case LeastSquaresMethod::GaussSeidel:
        return "GaussSeidel";
    case LeastSquaresMethod::QR:
        return "QR";
    }
    throw OpenMMException(fail("unknown least-squares method"));
}

LeastSquaresMethod leastSquaresMethodFromName(const string& name) {
    string s;
    for (char c : name)
        if (c != '-' && c != '_' && c != ' ')
            s += (char) tolower((unsigned char) c);
    if (s == "gauss" || s == "lu")
        return LeastSquaresMethod::Gauss;
    if (s == "cholesky")
        return LeastSquaresMethod::Cholesky;
    if (s == "gaussseidel" || s == "seidel")
        return LeastSquaresMethod::GaussSeidel;
    if (s == "qr")
        return LeastSquaresMethod::QR;
    throw OpenMMException(fail("unknown method '" + name + "' (expected Gauss, Cholesky, GaussSeidel or QR)"));
}

LeastSquaresSolver::LeastSquaresSolver(Platform& platform, const map<string, string>& properties) {
    system.reset(new System());
    system->addParticle(1.0);
    integrator.reset(new VerletIntegrator(0.001));
    context.reset(new Context(*system, *integrator, platform, properties));
    ContextImplAccess access;
    createKernel(access.of(*context));
}

LeastSquaresSolver::LeastSquaresSolver(ContextImpl& contextImpl) {
    createKernel(contextImpl);
}

LeastSquaresSolver::~LeastSquaresSolver() {
    // The kernel must go before the Context whose platform data it uses.
    kernel.reset();
    context.reset();
    integrator.reset();
    system.reset();
}

void LeastSquaresSolver::createKernel(ContextImpl& contextImpl) {
    Platform& platform = contextImpl.getPlatform();
    platformName = platform.getName();
    try {
        kernel.reset(new Kernel(platform.createKernel(SolveLeastSquaresKernel::Name(), contextImpl)));
    }
    catch (const OpenMMException& e) {
        throw OpenMMException(fail("the " + platformName + " platform has no least-squares kernel (is the openmm-dft plugin for it loaded?): " + e.what()));
    }
    kernel->getAs<SolveLeastSquaresKernel>().initialize();
}

string LeastSquaresSolver::getPlatformName() const {
    return platformName;
}

LeastSquaresResult LeastSquaresSolver::solve(int m, int n, int nrhs, const vector<double>& A, const vector<double>& b,
                                             const LeastSquaresOptions& options) {
    return solveConstrained(m, n, nrhs, A, b, 0, vector<double>(), vector<double>(), options);
}

LeastSquaresResult LeastSquaresSolver::solveConstrained(int m, int n, int nrhs, const vector<double>& A, const vector<double>& b,
                                                        int p, const vector<double>& C, const vector<double>& d,
                                                        const LeastSquaresOptions& options) {
    // ---- Validate everything the kernels rely on.
    if (m < 1 || n < 1 || nrhs < 1) {
        stringstream msg;
        msg << "m, n and nrhs must be positive (got m = " << m << ", n = " << n << ", nrhs = " << nrhs << ")";
        throw OpenMMException(fail(msg.str()));
    }
    if (p < 0)
        throw OpenMMException(fail("the number of constraints p must not be negative"));
    if (p > n) {
        stringstream msg;
        msg << "more constraints than unknowns (p = " << p << " > n = " << n << ")";
        throw OpenMMException(fail(msg.str()));
    }
    if (options.normalEquationsGiven) {
        if (m != n)
            throw OpenMMException(fail("with normalEquationsGiven, A must be the square n x n normal matrix (got m != n)"));
        if (p > 0)
            throw OpenMMException(fail("normalEquationsGiven does not take constraints"));
        if (options.method == LeastSquaresMethod::QR)
            throw OpenMMException(fail("normalEquationsGiven needs a normal-equation method (Cholesky, Gauss or GaussSeidel), not QR"));
        // Symmetric to rounding, relative to the largest element (tiny elements may differ in relative terms).
        double scale = 0;
        for (double v : A)
            scale = max(scale, std::fabs(v));
        for (int i = 0; i < n; i++)
            for (int j = 0; j < i; j++)
                if (std::fabs(A[(size_t) i * n + j] - A[(size_t) j * n + i]) > 1e-12 * scale) {
                    stringstream msg;
                    msg << "with normalEquationsGiven, A must be symmetric (A[" << i << "][" << j << "] != A[" << j << "][" << i << "])";
                    throw OpenMMException(fail(msg.str()));
                }
    }
    if (p == 0 && m < n) {
        stringstream msg;
        msg << "m < n: A has fewer rows than columns (m = " << m << ", n = " << n
            << "); the least-squares problem is underdetermined";
        throw OpenMMException(fail(msg.str()));
    }
    if (p > 0 && (long long) m + p < n) {
        stringstream msg;
        msg << "m + p < n: A has " << m << " rows and C " << p << " rows for n = " << n
            << " unknowns; the constrained problem is underdetermined";
        throw OpenMMException(fail(msg.str()));
    }
    checkSize("A", A.size(), (size_t) m * n, "m*n");
    checkSize("b", b.size(), (size_t) m * nrhs, "m*nrhs");
    checkSize("C", C.size(), (size_t) p * n, "p*n");
    checkSize("d", d.size(), (size_t) p * nrhs, "p*nrhs");
    checkFinite("A", A.data(), m, n);
    checkFinite("b", b.data(), m, nrhs);
    if (p > 0) {
        checkFinite("C", C.data(), p, n);
        checkFinite("d", d.data(), p, nrhs);
    }
    if (options.method == LeastSquaresMethod::GaussSeidel) {
        if (!(options.tolerance > 0) || !std::isfinite(options.tolerance))
            throw OpenMMException(fail("the Gauss-Seidel tolerance must be positive and finite"));
        if (options.maxIterations < 1)
            throw OpenMMException(fail("maxIterations must be at least 1"));
        if (!(options.relaxation > 0 && options.relaxation < 2))
            throw OpenMMException(fail("the Gauss-Seidel relaxation factor must lie in (0, 2)"));
        if (!options.initialGuess.empty()) {
            checkSize("initialGuess", options.initialGuess.size(), (size_t) n * nrhs, "n*nrhs");
            checkFinite("initialGuess", options.initialGuess.data(), n, nrhs);
        }
    }
    if (!(options.rankTolerance >= 0) || !std::isfinite(options.rankTolerance))
        throw OpenMMException(fail("rankTolerance must be a finite number >= 0"));
    switch (options.method) {
    case LeastSquaresMethod::Gauss:
    case LeastSquaresMethod::Cholesky:
    case LeastSquaresMethod::GaussSeidel:
    case LeastSquaresMethod::QR:
        break;
    default:
        throw OpenMMException(fail("unknown least-squares method"));
    }

    // ---- Solve on the platform.
    LeastSquaresProblem problem;
    problem.m = m;
    problem.n = n;
    problem.nrhs = nrhs;
    problem.p = p;
    problem.A = A.data();
    problem.b = b.data();
    problem.C = (p > 0 ? C.data() : nullptr);
    problem.d = (p > 0 ? d.data() : nullptr);
    LeastSquaresResult result;
    result.n = n;
    result.nrhs = nrhs;
    result.numConstraints = p;
    result.method = options.method;
    result.platformName = platformName;
    result.rank = n - p;
    kernel->getAs<SolveLeastSquaresKernel>().solve(problem, options, result);
    if (result.x.size() != (size_t) n * nrhs)
        throw OpenMMException(fail("internal error: the kernel returned a solution of the wrong size"));

    // ---- Residual norms ||A x_k - b_k||, in double, from the caller's data.
    if (!options.computeResidualNorms)
        return result;
    result.residualNorms.assign(nrhs, 0.0);
    vector<double> r(nrhs);
    for (int i = 0; i < m; i++) {
        for (int k = 0; k < nrhs; k++)
            r[k] = -b[(size_t) i * nrhs + k];
        const double* row = &A[(size_t) i * n];
        for (int j = 0; j < n; j++) {
            const double aij = row[j];
            const double* xj = &result.x[(size_t) j * nrhs];
            for (int k = 0; k < nrhs; k++)
                r[k] += aij * xj[k];
        }
        for (int k = 0; k < nrhs; k++)
            result.residualNorms[k] += r[k] * r[k];
    }
    for (int k = 0; k < nrhs; k++)
        result.residualNorms[k] = sqrt(result.residualNorms[k]);
    return result;
}

LeastSquaresResult solveLeastSquares(Platform& platform, int m, int n, int nrhs, const vector<double>& A, const vector<double>& b,
                                     const LeastSquaresOptions& options, const map<string, string>& platformProperties) {
    LeastSquaresSolver solver(platform, platformProperties);
    return solver.solve(m, n, nrhs, A, b, options);
}

LeastSquaresResult solveConstrainedLeastSquares(Platform& platform, int m, int n, int nrhs, const vector<double>& A,
                                                const vector<double>& b, int p, const vector<double>& C, const vector<double>& d,
                                                const LeastSquaresOptions& options, const map<string, string>& platformProperties) {
    LeastSquaresSolver solver(platform, platformProperties);
    return solver.solveConstrained(m, n, nrhs, A, b, p, C, d, options);
}

} // namespace OpenMMDFT
