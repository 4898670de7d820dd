/* Least squares: the API side. Validates the problem, scales it by powers of two into a range
 * where no platform can overflow or underflow, obtains the platform's SolveLeastSquares kernel
 * through a minimal private Context, unscales the answer, recomputes the residual norms in double
 * precision and checks that everything returned is finite. The numerical work is in the platform
 * kernels. */
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

/* A given normal matrix must be symmetric to rounding, relative to its largest element (tiny elements may differ in relative terms). */
void checkSymmetric(const vector<double>& A, int n, const char* what = "with normalEquationsGiven, A", double largest = -1) {
    double scale = largest;  // max |A|, unless the caller has it
    if (scale < 0)
        for (double v : A)
            scale = max(scale, std::fabs(v));
    const int B = 64;  // tiles, so that the transposed reads stay in cache
    for (int i0 = 0; i0 < n; i0 += B)
        for (int j0 = 0; j0 <= i0; j0 += B)
            for (int i = i0; i < min(n, i0 + B); i++)
                for (int j = j0; j < min(i, j0 + B); j++)
                    if (!(std::fabs(A[(size_t) i * n + j] - A[(size_t) j * n + i]) <= 1e-12 * scale)) {
                        stringstream msg;
                        msg << what << " must be symmetric ([" << i << "][" << j << "] != [" << j << "][" << i << "])";
                        throw OpenMMException(fail(msg.str()));
                    }
}

/*
 * Equilibration by powers of two. The kernels form A^T A, whose elements are squares of A's: an A
 * near 1e300 overflows it and one near 1e-300 underflows it, and single precision cannot hold
 * either. A least-squares problem is unchanged in substance by scaling the residual and the
 * unknowns, so the kernels solve
 *     min ||A' x' - b'||  subject to  C' x' = d'
 * with A' = 2^(alpha+xi) A, b' = 2^alpha b, C' = 2^(gamma+xi) C, d' = 2^gamma d, and x = 2^xi x'.
 * The exponents put the largest element of A' and of C' in [1/2, 1) and keep b' and d' at most
 * 1, so A'^T A' is at most m in size and cannot overflow. Scaling by a power of two is exact in
 * binary floating point (short of the subnormal range), so an ordinary problem gives the same
 * bits as it would unscaled, and every relative quantity (condition estimates, rank tolerance,
 * the Gauss-Seidel stopping rule) is unchanged. Only uniform scaling has these properties:
 * column scaling would change cond(A) and so the meaning of the rank tolerance.
 */
struct PowerOfTwoScaling {
    int alpha = 0; // residual A x - b (and the right-hand side b)
    int gamma = 0; // constraint residual C x - d
    int xi = 0;    // unknowns: x = 2^xi x'
};

/* The exponent e with max|v| = f 2^e, f in [1/2, 1); false (e untouched) when every element is zero. */
bool magnitudeExponent(const double* v, size_t count, int& e) {
    double largest = 0;
    for (size_t i = 0; i < count; i++)
        largest = max(largest, std::fabs(v[i]));
    if (largest == 0)
        return false;
    std::frexp(largest, &e);
    return true;
}

/*
 * The unknowns take the largest scale any part of the problem asks for (b against A, d against C, a
 * Gauss-Seidel starting point), so that b' and d' are at most 1 while A' and C' are normalized; a
 * part far smaller than the rest only loses digits that are below rounding of the larger part.
 */
PowerOfTwoScaling chooseScaling(int m, int n, int nrhs, int p, const vector<double>& A, const vector<double>& b,
                                const vector<double>& C, const vector<double>& d, const vector<double>& initialGuess) {
    int eA = 0, eb, eC = 0, ed, e0;
    const bool aNonzero = magnitudeExponent(A.data(), (size_t) m * n, eA);
    const bool cNonzero = (p > 0 && magnitudeExponent(C.data(), (size_t) p * n, eC));
    bool haveScale = false;
    int xi = 0;
    auto propose = [&](int e) {
        xi = (haveScale ? max(xi, e) : e);
        haveScale = true;
    };
    if (aNonzero && magnitudeExponent(b.data(), (size_t) m * nrhs, eb))
        propose(eb - eA);
    if (cNonzero && magnitudeExponent(d.data(), (size_t) p * nrhs, ed))
        propose(ed - eC);
    if (!initialGuess.empty() && magnitudeExponent(initialGuess.data(), initialGuess.size(), e0))
        propose(e0);
    PowerOfTwoScaling s;
    s.xi = xi;
    s.alpha = -eA - xi;
    s.gamma = -eC - xi;
    return s;
}

/* v[i] 2^e for i < count into out. A product with 2^e (a normal double) is correctly rounded, as ldexp is, so the
 * two agree bit for bit, subnormal results included; the product vectorizes (the density fitting's metric passes
 * millions of elements). */
void scaleByPowerOfTwo(const double* v, size_t count, int e, double* out) {
    if (e >= -1022 && e <= 1023) {
        const double factor = std::ldexp(1.0, e);
        for (size_t i = 0; i < count; i++)
            out[i] = v[i] * factor;
    }
    else
        for (size_t i = 0; i < count; i++)
            out[i] = std::ldexp(v[i], e);
}

/* v times 2^e, element by element (exact unless a result falls into the subnormal range). */
vector<double> timesPowerOfTwo(const double* v, size_t count, int e) {
    vector<double> out(count);
    scaleByPowerOfTwo(v, count, e, out.data());
    return out;
}

void scaleInPlace(vector<double>& v, int e) {
    scaleByPowerOfTwo(v.data(), v.size(), e, v.data());
}

/*
 * ||A x_k - b_k|| for each right-hand side, from the scaled data: the residual is 2^alpha times the
 * caller's exactly, so its norm is unscaled by 2^-alpha. The scaled data are at most 1 in size, so
 * the squares cannot overflow for any solution a kernel accepts (that would need |x'| near 1e154).
 */
vector<double> residualNorms(int m, int n, int nrhs, const double* A, const double* b, const vector<double>& x, int alpha) {
    vector<double> sums(nrhs, 0.0), r(nrhs);
    for (int i = 0; i < m; i++) {
        for (int k = 0; k < nrhs; k++)
            r[k] = -b[(size_t) i * nrhs + k];
        const double* row = &A[(size_t) i * n];
        for (int j = 0; j < n; j++) {
            const double aij = row[j];
            const double* xj = &x[(size_t) j * nrhs];
            for (int k = 0; k < nrhs; k++)
                r[k] += aij * xj[k];
        }
        for (int k = 0; k < nrhs; k++)
            sums[k] += r[k] * r[k];
    }
    for (int k = 0; k < nrhs; k++)
        sums[k] = std::ldexp(sqrt(sums[k]), -alpha);
    return sums;
}

/* Throws, naming what ("the solution is") and where, if v (rows x cols, row-major) holds NaN or Inf. */
void checkResultFinite(const char* what, const vector<double>& v, int cols, const string& why) {
    for (size_t i = 0; i < v.size(); i++)
        if (!std::isfinite(v[i])) {
            stringstream msg;
            msg << what << " not finite (" << v[i] << " at (" << i / cols << ", " << i % cols << ")): " << why;
            throw OpenMMException(fail(msg.str()));
        }
}

/* Why a returned quantity can be non-finite: the kernel's scaled answer, or the answer's own magnitude. */
string overflowReason(const vector<double>& scaledValues, int exponent) {
    for (double v : scaledValues)
        if (!std::isfinite(v))
            return "the platform kernel returned NaN or Inf for the scaled problem (overflow?)";
    stringstream msg;
    msg << "its magnitude is 2^" << exponent << " times a finite value, beyond the double range (overflow)";
    return msg.str();
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
    if (options.normalEquationsGiven)
        checkSymmetric(A, n);
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
    if (options.allowRankDeficient && options.method != LeastSquaresMethod::QR)
        throw OpenMMException(fail("allowRankDeficient (the minimum-norm solution) needs method QR, not " +
                                   leastSquaresMethodName(options.method)));
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

    // ---- Solve the equilibrated problem on the platform.
    // Only Gauss-Seidel reads (and the validation above checks) the starting point.
    const bool useGuess = (options.method == LeastSquaresMethod::GaussSeidel);
    const PowerOfTwoScaling scale = chooseScaling(m, n, nrhs, p, A, b, C, d, useGuess ? options.initialGuess : vector<double>());
    const vector<double> As = timesPowerOfTwo(A.data(), A.size(), scale.alpha + scale.xi);
    const vector<double> bs = timesPowerOfTwo(b.data(), b.size(), scale.alpha);
    const vector<double> Cs = timesPowerOfTwo(C.data(), (size_t) p * n, scale.gamma + scale.xi);
    const vector<double> ds = timesPowerOfTwo(d.data(), (size_t) p * nrhs, scale.gamma);
    LeastSquaresOptions scaledOptions = options;
    if (useGuess)
        scaleInPlace(scaledOptions.initialGuess, -scale.xi);
    LeastSquaresProblem problem;
    problem.m = m;
    problem.n = n;
    problem.nrhs = nrhs;
    problem.p = p;
    problem.A = As.data();
    problem.b = bs.data();
    problem.C = (p > 0 ? Cs.data() : nullptr);
    problem.d = (p > 0 ? ds.data() : nullptr);
    LeastSquaresResult result;
    result.n = n;
    result.nrhs = nrhs;
    result.numConstraints = p;
    result.method = options.method;
    result.platformName = platformName;
    result.rank = n - p;
    kernel->getAs<SolveLeastSquaresKernel>().solve(problem, scaledOptions, result);
    if (result.x.size() != (size_t) n * nrhs)
        throw OpenMMException(fail("internal error: the kernel returned a solution of the wrong size"));
    if (result.lagrangeMultipliers.size() != (size_t) p * nrhs)
        throw OpenMMException(fail("internal error: the kernel returned Lagrange multipliers of the wrong size"));

    // ---- Back to the caller's scale: x = 2^xi x', lambda = 2^(gamma - 2 alpha) lambda' (from A'^T r' + C'^T lambda' = 0).
    // The condition estimate and the relative Gauss-Seidel residual are scale invariant.
    const vector<double> scaledX = result.x, scaledLambda = result.lagrangeMultipliers;
    if (options.computeResidualNorms)
        result.residualNorms = residualNorms(m, n, nrhs, As.data(), bs.data(), scaledX, scale.alpha);
    scaleInPlace(result.x, scale.xi);
    scaleInPlace(result.lagrangeMultipliers, scale.gamma - 2 * scale.alpha);

    // ---- Everything returned must be finite: an overflow is an error, never a silent NaN or Inf.
    checkResultFinite("the solution is", result.x, nrhs, overflowReason(scaledX, scale.xi));
    checkResultFinite("the residual norm is", result.residualNorms, nrhs, overflowReason(scaledX, -scale.alpha));
    checkResultFinite("the Lagrange multipliers are", result.lagrangeMultipliers, nrhs, overflowReason(scaledLambda, scale.gamma - 2 * scale.alpha));
    // An unbounded condition number is a legitimate report only for the minimum-norm solution of a rank-deficient A.
    if (std::isnan(result.conditionEstimate) || (std::isinf(result.conditionEstimate) && !options.allowRankDeficient)) {
        stringstream msg;
        msg << "the condition estimate is not finite (" << result.conditionEstimate
            << "): the platform kernel failed to detect a singular or overflowing problem";
        throw OpenMMException(fail(msg.str()));
    }
    return result;
}

void SolveLeastSquaresKernel::invertSymmetricPositiveDefinite(int n, vector<double>& G, const LeastSquaresOptions& options,
                                                              LeastSquaresResult& result) {
    vector<double> identity((size_t) n * n, 0.0);
    for (int i = 0; i < n; i++)
        identity[(size_t) i * n + i] = 1.0;
    LeastSquaresProblem problem;
    problem.m = problem.n = problem.nrhs = n;
    problem.A = G.data();
    problem.b = identity.data();
    LeastSquaresOptions normal = options;
    normal.normalEquationsGiven = true;
    normal.computeResidualNorms = false;
    solve(problem, normal, result);  // a kernel that keeps this default names G in its errors (it is not A^T A)
}

LeastSquaresResult LeastSquaresSolver::invertSymmetricPositiveDefinite(int n, const vector<double>& G) {
    LeastSquaresOptions cholesky;
    cholesky.method = LeastSquaresMethod::Cholesky;
    return invertSymmetricPositiveDefinite(n, G, cholesky);
}

LeastSquaresResult LeastSquaresSolver::invertSymmetricPositiveDefinite(int n, const vector<double>& G, const LeastSquaresOptions& options) {
    if (n < 1) {
        stringstream msg;
        msg << "the matrix to invert must have at least one row (got n = " << n << ")";
        throw OpenMMException(fail(msg.str()));
    }
    if (options.method != LeastSquaresMethod::Cholesky)
        throw OpenMMException(fail("the inverse of a symmetric positive definite matrix is computed by Cholesky, not " +
                                   leastSquaresMethodName(options.method)));
    if (!(options.rankTolerance >= 0) || !std::isfinite(options.rankTolerance))
        throw OpenMMException(fail("rankTolerance must be a finite number >= 0"));
    checkSize("G", G.size(), (size_t) n * n, "n*n");
    // One pass for finiteness and the largest element (this serves matrices of millions of elements).
    double largest = 0;
    bool finite = true;
    for (double v : G) {
        finite = finite && std::isfinite(v);
        largest = max(largest, std::fabs(v));
    }
    if (!finite)
        checkFinite("G", G.data(), n, n);  // names the element
    checkSymmetric(G, n, "the matrix to invert", largest);
    if (largest == 0)
        throw OpenMMException(fail("the matrix to invert is zero, so not positive definite"));
    // G' = 2^-e G with its largest element in [1/2, 1), and G^-1 = 2^-e G'^-1: exact, as solve() scales.
    int e;
    std::frexp(largest, &e);
    vector<double> scaled = timesPowerOfTwo(G.data(), G.size(), -e);
    LeastSquaresResult result;
    result.n = result.nrhs = n;
    result.method = LeastSquaresMethod::Cholesky;
    result.platformName = platformName;
    result.rank = n;
    kernel->getAs<SolveLeastSquaresKernel>().invertSymmetricPositiveDefinite(n, scaled, options, result);
    if (result.x.size() != (size_t) n * n)
        throw OpenMMException(fail("internal error: the kernel returned an inverse of the wrong size"));
    result.residualNorms.clear();  // not computed: the right-hand sides are implied
    // Back to G's scale and checked in one pass: a non-finite element is the kernel's, or beyond the double range.
    const double factor = std::ldexp(1.0, -e);  // a normal double for these e: the product rounds as ldexp does
    const bool exactFactor = (e >= -1023 && e <= 1022);
    for (size_t i = 0; i < result.x.size(); i++) {
        const double scaledValue = result.x[i];
        result.x[i] = exactFactor ? scaledValue * factor : std::ldexp(scaledValue, -e);
        if (!std::isfinite(result.x[i])) {
            stringstream msg;
            msg << "the inverse is not finite (" << result.x[i] << " at (" << i / n << ", " << i % n << ")): ";
            if (!std::isfinite(scaledValue))
                msg << "the platform kernel returned NaN or Inf for the scaled problem (overflow?)";
            else
                msg << "its magnitude is 2^" << -e << " times a finite value, beyond the double range (overflow)";
            throw OpenMMException(fail(msg.str()));
        }
    }
    if (!std::isfinite(result.conditionEstimate)) {
        stringstream msg;
        msg << "the condition estimate is not finite (" << result.conditionEstimate
            << "): the platform kernel failed to detect a singular or overflowing matrix";
        throw OpenMMException(fail(msg.str()));
    }
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
