/* Least squares on the GPU platforms: the host side (see CommonLeastSquaresKernel.h). */
#include "CommonLeastSquaresKernel.h"
#include "LeastSquaresProgram.h"
#include "openmmdft/internal/DenseLayout.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

using namespace OpenMM;
using namespace std;

namespace OpenMMDFT {

namespace {
const int BLOCK = LEAST_SQUARES_BLOCK;
const int NB = LEAST_SQUARES_NB;
/// Triangular solves with at least this many right-hand sides update the rows below a block by the tiled product; fewer
/// (the condition estimate's single column) by one thread per element, which wastes no tile.
const int MIN_GEMM_COLUMNS = 16;

string prefix(const LeastSquaresOptions& options, const string& precision) {
    return "solveLeastSquares (" + leastSquaresMethodName(options.method) + ", GPU platform, " + precision + " precision): ";
}

/** Create a kernel with its arguments. */
template <class... Args>
ComputeKernel makeKernel(ComputeProgram& program, const string& name, Args&&... args) {
    ComputeKernel kernel = program->createKernel(name);
    (kernel->addArg(args), ...);
    return kernel;
}

/** Set every argument of a kernel, in order. */
template <class... Args>
void setArgs(ComputeKernel& kernel, Args&&... args) {
    int index = 0;
    (kernel->setArg(index++, args), ...);
}

/** Upload double data into part of an existing float or double array. */
void uploadPart(ComputeArray& array, const vector<double>& data, int offset, bool isDouble) {
    if (data.empty())
        return;
    if (isDouble)
        array.uploadSubArray(data.data(), offset, (int) data.size());
    else {
        vector<float> f(data.begin(), data.end());
        array.uploadSubArray(f.data(), offset, (int) f.size());
    }
}

vector<double> downloadAsDouble(ComputeArray& array, bool isDouble) {
    if (isDouble) {
        vector<double> d;
        array.download(d);
        return d;
    }
    vector<float> f;
    array.download(f);
    return vector<double>(f.begin(), f.end());
}

/** C^T, column-major n x p: the extra right-hand sides of the constrained solve (the same memory as row-major C). */
vector<double> constraintColumns(const LeastSquaresProblem& pr) {
    return vector<double>(pr.C, pr.C + (size_t) pr.p * pr.n);
}

/**
 * A lower bound of ||A^T A||_2 in double, from the caller's data: max_j ||a_j||^2 = max_j (A^T A)(j,j); for a given
 * normal matrix G, max_j ||G e_j||_2 (its diagonal alone would say nothing for a symmetric indefinite G).
 */
double normalMatrixNormLowerBound(const LeastSquaresProblem& pr, bool normalEquationsGiven) {
    vector<double> norms(pr.n, 0.0);
    for (int i = 0; i < pr.m; i++)
        for (int j = 0; j < pr.n; j++)
            norms[j] += pr.A[(size_t) i * pr.n + j] * pr.A[(size_t) i * pr.n + j];
    double best = 0;
    for (double v : norms)
        best = max(best, normalEquationsGiven ? sqrt(v) : v);
    return best;
}

/**
 * The smallest and largest |v_i|. False when some element is NaN or Inf: std::max and std::min skip a NaN
 * silently, which would let a non-finite factorization pass a spread test, so the callers fail closed on it.
 */
bool magnitudeRange(const vector<double>& v, double& smallest, double& largest) {
    smallest = numeric_limits<double>::infinity();
    largest = 0;
    for (double x : v) {
        if (!std::isfinite(x))
            return false;
        smallest = min(smallest, fabs(x));
        largest = max(largest, fabs(x));
    }
    return true;
}

} // namespace

void CommonSolveLeastSquaresKernel::initialize() {
    ContextSelector selector(cc);
    const bool useDouble = cc.getUseDoublePrecision(), useMixed = cc.getUseMixedPrecision();
    storeDouble = useDouble;
    accDouble = (useDouble || useMixed) && cc.getSupportsDoublePrecision();
    precision = (useDouble ? "double" : useMixed ? "mixed" : "single");
    // Mixed: the input is rounded to float, so its eps bounds what the answer can resolve.
    eps = (storeDouble ? DBL_EPSILON : FLT_EPSILON);
    program = cc.compileProgram(leastSquaresProgramSource(), leastSquaresProgramDefines(storeDouble, accDouble));
    gemmStore = program->createKernel("gemmStore");
    gemmAcc = program->createKernel("gemmAcc");
    for (int i = 0; i < 17; i++) {
        gemmStore->addArg();
        gemmAcc->addArg();
    }
}

void CommonSolveLeastSquaresKernel::allocate(ComputeArray& array, size_t elements, int elementSize, const string& name) {
    array.initialize(cc, max<size_t>(1, elements), elementSize, name);
    deviceBytes += max<size_t>(1, elements) * elementSize;
}

void CommonSolveLeastSquaresKernel::uploadNew(ComputeArray& array, const vector<double>& data, bool isDouble, const string& name) {
    allocate(array, data.size(), isDouble ? sizeof(double) : sizeof(float), name);
    if (data.empty())
        return;
    if (isDouble)
        array.upload(data);
    else {
        vector<float> f(data.begin(), data.end());
        array.upload(f);
    }
}

void CommonSolveLeastSquaresKernel::gemm(bool storeInput, int M, int N, int K, bool subtract, bool accumulate, ComputeArray& A, int aOff,
                                         int lda, bool transA, ComputeArray& B, int bOff, int ldb, bool transB, ComputeArray& C, int cOff,
                                         int ldc, bool lowerOnly) {
    if (M <= 0 || N <= 0)
        return;
    ComputeKernel& kernel = (storeInput ? gemmStore : gemmAcc);
    setArgs(kernel, M, N, K, (int) subtract, (int) accumulate, A, aOff, lda, (int) transA, B, bOff, ldb, (int) transB, C, cOff, ldc,
            (int) lowerOnly);
    const int tiles = ((M + 63) / 64) * ((N + 63) / 64);
    kernel->execute(tiles * 256, 256);
}

void CommonSolveLeastSquaresKernel::triangularSolve(int n, int cols, ComputeArray& T, int tOff, int ldt, bool lower, bool transposed,
                                                    bool unitDiagonal, ComputeArray& H, int hOff, int ldh, bool lowerTriangularRHS) {
    if (n <= 0 || cols <= 0)
        return;
    const bool forward = (lower != transposed); // op(T) is lower triangular
    if (lowerTriangularRHS && !forward)
        throw OpenMMException("least squares: a lower triangular right-hand side needs a forward solve (internal error)");
    const int allColumns = cols;
    ComputeKernel diagonal = makeKernel(program, "triangularDiagonal", cols, T, tOff, ldt, (int) transposed, (int) forward,
                                        (int) unitDiagonal, H, hOff, ldh, 0, 0);
    ComputeKernel update = makeKernel(program, "triangularUpdate", cols, T, tOff, ldt, (int) transposed, H, hOff, ldh, 0, 0, 0, 0);
    const int blocks = (n + NB - 1) / NB;
    for (int b = 0; b < blocks; b++) {
        const int k0 = (forward ? b : blocks - 1 - b) * NB, kb = min(NB, n - k0);
        // Column c of a lower triangular H (e.g. the identity) is zero above row c and stays so in a forward solve:
        // block row k0 only concerns the columns before k0 + kb.
        if (lowerTriangularRHS)
            cols = min(allColumns, k0 + kb);
        diagonal->setArg(0, cols);
        diagonal->setArg(10, k0);
        diagonal->setArg(11, kb);
        diagonal->execute(cols * 64, 64);
        const int rowStart = (forward ? k0 + kb : 0), rows = (forward ? n - k0 - kb : k0);
        if (rows == 0)
            continue;
        if (cols >= MIN_GEMM_COLUMNS) {
            // H(rowStart.., :) -= op(T)(rowStart.., block) H(block, :): a tiled product (the rows read and the rows
            // written are disjoint). op(T)(i, l) = T(l, i) when transposed.
            const int aOff = tOff + (transposed ? k0 + rowStart * ldt : rowStart + k0 * ldt);
            gemm(false, rows, cols, kb, true, true, T, aOff, ldt, transposed, H, hOff + k0, ldh, false, H, hOff + rowStart, ldh, false);
            continue;
        }
        update->setArg(0, cols);
        update->setArg(8, k0);
        update->setArg(9, kb);
        update->setArg(10, rowStart);
        update->setArg(11, rows);
        update->execute(rows * cols);
    }
}

double CommonSolveLeastSquaresKernel::inverseNormEstimate(int n, const function<void(ComputeArray&)>& applyInverse) {
    // Power iteration with M^-1 (M symmetric: A^T A, R^T R or a given symmetric matrix), applied by the factorization
    // just computed: ||M^-1 y|| for unit y approaches |lambda|max(M^-1) = 1 / |lambda|min(M) from below within a few
    // steps. A fixed pseudo-random start (reproducible) has a component along every eigenvector.
    ComputeArray Z;
    allocate(Z, n, accumulationSize(), "lsConditionProbe");
    mt19937 rng(20261125);
    uniform_real_distribution<double> uniform(-1.0, 1.0);
    vector<double> y(n);
    double norm = 0;
    for (double& v : y) {
        v = uniform(rng);
        norm += v * v;
    }
    for (double& v : y)
        v /= sqrt(norm);
    double estimate = 0;
    for (int iteration = 0; iteration < 3; iteration++) {
        uploadPart(Z, y, 0, accDouble);
        applyInverse(Z);
        vector<double> z = downloadAsDouble(Z, accDouble);
        norm = 0;
        for (double v : z)
            norm += v * v;
        norm = sqrt(norm);
        if (!std::isfinite(norm))
            return numeric_limits<double>::infinity();
        estimate = max(estimate, norm);
        if (norm == 0)
            break;
        for (int j = 0; j < n; j++)
            y[j] = z[j] / norm;
    }
    return estimate;
}

double CommonSolveLeastSquaresKernel::normalEquationTolerance(const LeastSquaresOptions& options, int n) const {
    // The condition estimates only bound cond(A^T A) from below, so the default threshold carries a factor max(n, 10).
    return options.rankTolerance > 0 ? options.rankTolerance : max(n, 10) * eps;
}

void CommonSolveLeastSquaresKernel::singular(const LeastSquaresOptions& options, double conditionLowerBound, const string& how) const {
    stringstream msg;
    if (invertingGivenMatrix) {
        // G itself was given: there is no A to advise QR for.
        msg << "invertSymmetricPositiveDefinite (GPU platform, " << precision << " precision): the matrix to invert is not positive "
            << "definite or too ill-conditioned for its inverse in this precision (" << how << "; condition number at least "
            << conditionLowerBound << ")";
        throw OpenMMException(msg.str());
    }
    msg << prefix(options, precision) << "A^T A is numerically singular (" << how << "; condition number at least " << conditionLowerBound
        << ", i.e. cond(A) at least about " << sqrt(conditionLowerBound)
        << "): A is rank deficient or too ill-conditioned for the normal equations in this precision; use method QR";
    throw OpenMMException(msg.str());
}

void CommonSolveLeastSquaresKernel::invertSymmetricPositiveDefinite(int n, vector<double>& G, const LeastSquaresOptions& options,
                                                                    LeastSquaresResult& result) {
    struct Naming {
        bool& flag;
        explicit Naming(bool& f) : flag(f) { flag = true; }
        ~Naming() { flag = false; }
    } naming(invertingGivenMatrix);
    SolveLeastSquaresKernel::invertSymmetricPositiveDefinite(n, G, options, result);
}

void CommonSolveLeastSquaresKernel::solve(const LeastSquaresProblem& pr, const LeastSquaresOptions& options, LeastSquaresResult& result) {
    result.precision = precision;
    if (options.allowRankDeficient)
        throw OpenMMException(prefix(options, precision) + "the minimum-norm solution of rank-deficient problems (allowRankDeficient) "
                                                           "is only implemented on the Reference and CPU platforms");
    if (pr.p > 0 && pr.m < pr.n)
        throw OpenMMException(prefix(options, precision) + "with constraints the GPU platforms need A of full column rank, so m >= n "
                                                           "(here m < n); use the Reference or CPU platform");
    if ((long long) pr.m * (pr.n + pr.nrhs) > numeric_limits<int>::max() || (long long) pr.n * (pr.n + pr.nrhs + pr.p) > numeric_limits<int>::max())
        throw OpenMMException(prefix(options, precision) + "the problem has more than 2^31 matrix elements");
    ContextSelector selector(cc);
    deviceBytes = 0;
    const int n = pr.n, nrhs = pr.nrhs, p = pr.p;
    // X: column-major n x (nrhs + p): the unconstrained solution for each b, then Y = (A^T A)^-1 C^T.
    vector<double> X = (options.method == LeastSquaresMethod::QR ? solveQR(pr, options, result) : solveNormal(pr, options, result));
    result.deviceMemoryBytes = (long long) deviceBytes;
    result.x.assign((size_t) n * nrhs, 0.0);
    if (p == 0) {
        transposeTiled(X.data(), nrhs, n, n, result.x.data(), nrhs);  // column-major n x nrhs to row-major
        return;
    }
    // Range-space method on the host, in double: S = C Y (p x p, symmetric positive definite when C has
    // full row rank), S lambda = C X0 - d, x = X0 - Y lambda.
    auto Y = [&](int j, int s) { return X[(size_t) (nrhs + s) * n + j]; };
    vector<double> S((size_t) p * p, 0.0);
    for (int r = 0; r < p; r++)
        for (int s = 0; s < p; s++) {
            double sum = 0;
            for (int j = 0; j < n; j++)
                sum += pr.C[(size_t) r * n + j] * Y(j, s);
            S[(size_t) r * p + s] = sum;
        }
    for (int r = 0; r < p; r++) // symmetrize: the device result carries rounding of the working precision
        for (int s = 0; s < r; s++)
            S[(size_t) r * p + s] = S[(size_t) s * p + r] = 0.5 * (S[(size_t) r * p + s] + S[(size_t) s * p + r]);
    // Cholesky of S, in place (lower), with a relative pivot test: a dependent constraint row gives a zero pivot.
    double smax = 0;
    for (int r = 0; r < p; r++)
        smax = max(smax, fabs(S[(size_t) r * p + r]));
    for (int j = 0; j < p; j++) {
        double dj = S[(size_t) j * p + j];
        for (int k = 0; k < j; k++)
            dj -= S[(size_t) j * p + k] * S[(size_t) j * p + k];
        if (!(dj > 100 * p * eps * smax)) {
            stringstream msg;
            msg << prefix(options, precision) << "the constraint rows are linearly dependent (constraint " << j
                << " is a combination of the rows before it, to working precision)";
            throw OpenMMException(msg.str());
        }
        dj = sqrt(dj);
        S[(size_t) j * p + j] = dj;
        for (int i = j + 1; i < p; i++) {
            double v = S[(size_t) i * p + j];
            for (int k = 0; k < j; k++)
                v -= S[(size_t) i * p + k] * S[(size_t) j * p + k];
            S[(size_t) i * p + j] = v / dj;
        }
    }
    result.lagrangeMultipliers.assign((size_t) p * nrhs, 0.0);
    for (int r = 0; r < nrhs; r++) {
        vector<double> lambda(p);
        for (int s = 0; s < p; s++) {
            double v = -pr.d[(size_t) s * nrhs + r];
            for (int j = 0; j < n; j++)
                v += pr.C[(size_t) s * n + j] * X[(size_t) r * n + j];
            lambda[s] = v;
        }
        for (int i = 0; i < p; i++) { // L L^T lambda = C X0 - d
            for (int k = 0; k < i; k++)
                lambda[i] -= S[(size_t) i * p + k] * lambda[k];
            lambda[i] /= S[(size_t) i * p + i];
        }
        for (int i = p - 1; i >= 0; i--) {
            for (int k = i + 1; k < p; k++)
                lambda[i] -= S[(size_t) k * p + i] * lambda[k];
            lambda[i] /= S[(size_t) i * p + i];
        }
        for (int s = 0; s < p; s++)
            result.lagrangeMultipliers[(size_t) s * nrhs + r] = lambda[s];
        for (int j = 0; j < n; j++) {
            double v = X[(size_t) r * n + j];
            for (int s = 0; s < p; s++)
                v -= Y(j, s) * lambda[s];
            result.x[(size_t) j * nrhs + r] = v;
        }
    }
}

namespace {
/** LeastSquaresOptions::timePhases: each mark waits for the device (a one-element download; the queue is in order)
 *  and adds the wall-clock time since the previous mark to the phase's entry. */
class PhaseClock {
public:
    PhaseClock(bool on, ComputeContext& cc, LeastSquaresResult& result) : on(on), result(result), last(std::chrono::steady_clock::now()) {
        if (on)
            probe.initialize<int>(cc, 1, "lsPhaseProbe");
    }
    void mark(const char* phase) {
        if (!on)
            return;
        vector<int> value;
        probe.download(value);
        const auto now = std::chrono::steady_clock::now();
        result.phaseSeconds[phase] += std::chrono::duration<double>(now - last).count();
        last = now;
    }
private:
    bool on;
    LeastSquaresResult& result;
    ComputeArray probe;
    std::chrono::steady_clock::time_point last;
};
} // namespace

vector<double> CommonSolveLeastSquaresKernel::solveNormal(const LeastSquaresProblem& pr, const LeastSquaresOptions& options,
                                                          LeastSquaresResult& result) {
    const int m = pr.m, n = pr.n, nrhs = pr.nrhs, p = pr.p, cols = nrhs + p;
    const int accSize = accumulationSize();
    const bool cholesky = (options.method == LeastSquaresMethod::Cholesky);
    PhaseClock clock(options.timePhases, cc, result);
    ComputeArray G, H;
    if (options.normalEquationsGiven) {
        // The given symmetric matrix is G itself (row-major reads as column-major: the front end checked the
        // symmetry, to rounding, as the Reference platform relies on too); b is A^T b.
        vector<double> g(pr.A, pr.A + (size_t) n * n), h((size_t) n * cols, 0.0);
        transposeTiled(pr.b, n, nrhs, nrhs, h.data(), n);
        uploadNew(G, g, accDouble, "lsG");
        uploadNew(H, h, accDouble, "lsH");
        clock.mark("upload");
    }
    else {
        // Row-major A (m x n) is column-major A^T (n x m, ld n); b goes up column-major (m x nrhs, ld m).
        vector<double> a(pr.A, pr.A + (size_t) m * n), bcm((size_t) m * nrhs);
        for (int i = 0; i < m; i++)
            for (int r = 0; r < nrhs; r++)
                bcm[(size_t) r * m + i] = pr.b[(size_t) i * nrhs + r];
        ComputeArray At, B;
        uploadNew(At, a, storeDouble, "lsAt");
        uploadNew(B, bcm, storeDouble, "lsB");
        allocate(G, (size_t) n * n, accSize, "lsG");
        allocate(H, (size_t) n * cols, accSize, "lsH");
        clock.mark("upload");
        // Cholesky reads the lower triangle only; Gauss and Gauss-Seidel need all of A^T A.
        gemm(true, n, n, m, false, false, At, 0, n, false, At, 0, n, true, G, 0, n, cholesky);
        gemm(true, n, nrhs, m, false, false, At, 0, n, false, B, 0, m, false, H, 0, n, false);
        clock.mark("normalEquations");
    }
    if (p > 0) {
        uploadPart(H, constraintColumns(pr), n * nrhs, accDouble);
        clock.mark("upload");
    }
    if (options.method == LeastSquaresMethod::GaussSeidel) {
        ComputeArray X;
        vector<double> x0((size_t) n * cols, 0.0);
        if (!options.initialGuess.empty())
            for (int j = 0; j < n; j++)
                for (int r = 0; r < nrhs; r++)
                    x0[(size_t) r * n + j] = options.initialGuess[(size_t) j * nrhs + r];
        uploadNew(X, x0, accDouble, "lsX");
        gaussSeidel(G, H, X, n, cols, options, result);
        clock.mark("sweeps");
        vector<double> x = downloadAsDouble(X, accDouble);
        clock.mark("download");
        return x;
    }
    // After the factorization, x = G^-1 h is two triangular solves (and the row exchanges for LU on later columns).
    ComputeArray swaps;
    function<void(ComputeArray&, int, bool)> applyInverse;
    if (cholesky) {
        factorCholesky(G, n, options, result);
        applyInverse = [&](ComputeArray& Z, int columns, bool) {
            triangularSolve(n, columns, G, 0, n, true, false, false, Z, 0, n); // L y = h
            triangularSolve(n, columns, G, 0, n, true, true, false, Z, 0, n);  // L^T x = y
        };
    }
    else {
        factorLU(G, H, swaps, n, cols, options, result);
        applyInverse = [&](ComputeArray& Z, int columns, bool exchangeRows) {
            if (exchangeRows) {
                ComputeKernel exchange = makeKernel(program, "luApplySwaps", n, columns, swaps, Z);
                exchange->execute(columns);
            }
            triangularSolve(n, columns, G, 0, n, true, false, true, Z, 0, n);   // L y = P h, unit diagonal
            triangularSolve(n, columns, G, 0, n, false, false, false, Z, 0, n); // U x = y
        };
    }
    clock.mark("factorization");
    // The pivot spreads checked in the factorization are cheap lower bounds of cond(A^T A) that can miss a
    // near-singular matrix by many orders; estimate cond_2(A^T A) >= max_j G(j,j) ||G^-1||_2 properly.
    const double conditionEstimate =
        normalMatrixNormLowerBound(pr, options.normalEquationsGiven) * inverseNormEstimate(n, [&](ComputeArray& Z) { applyInverse(Z, 1, true); });
    result.conditionEstimate = max(result.conditionEstimate, conditionEstimate);
    const double tol = normalEquationTolerance(options, n);
    if (!(conditionEstimate * tol <= 1))
        singular(options, conditionEstimate, "estimated from the factorization");
    clock.mark("conditionEstimate");
    double identityScale = 0;
    if (cholesky && p == 0 && nrhs == n && isScaledIdentity(pr.b, n, identityScale)) {
        // The inverse of G = L L^T (what the density fitting asks for): W = L^-1 by a forward solve that skips the
        // zero upper part of the identity (n^3/3), then G^-1 = W^T W as one lower-triangle product (n^3), instead of
        // two full triangular solves with n right-hand sides (2 n^3). The upper triangle is mirrored on the host.
        triangularSolve(n, n, G, 0, n, true, false, false, H, 0, n, true);
        ComputeArray inverse;
        allocate(inverse, (size_t) n * n, accSize, "lsInverse");
        gemm(false, n, n, n, false, false, H, 0, n, true, H, 0, n, false, inverse, 0, n, true);
        clock.mark("solves");
        // H = c L^-1 for the right-hand side c I, so H^T H = c^2 G^-1 and the solution c G^-1 is that over c.
        vector<double> x = downloadAsDouble(inverse, accDouble);
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) {
                const double value = x[(size_t) i + (size_t) j * n] / identityScale;
                x[(size_t) i + (size_t) j * n] = x[(size_t) j + (size_t) i * n] = value;
            }
        clock.mark("download");
        return x;
    }
    applyInverse(H, cols, false); // the row exchanges of LU were applied to H during the factorization
    clock.mark("solves");
    vector<double> x = downloadAsDouble(H, accDouble);
    clock.mark("download");
    return x;
}

void CommonSolveLeastSquaresKernel::factorCholesky(ComputeArray& G, int n, const LeastSquaresOptions& options, LeastSquaresResult& result) {
    const int accSize = accumulationSize();
    ComputeArray diag, failure;
    allocate(diag, n, accSize, "lsDiag");
    allocate(failure, 1, sizeof(int), "lsFailure");
    failure.upload(vector<int>{-1});
    ComputeKernel block = makeKernel(program, "choleskyDiagonalBlock", n, 0, 0, G, diag, failure);
    ComputeKernel panel = makeKernel(program, "choleskyPanel", n, 0, 0, G);
    for (int k0 = 0; k0 < n; k0 += NB) {
        const int kb = min(NB, n - k0), rest = n - k0 - kb;
        block->setArg(1, k0);
        block->setArg(2, kb);
        block->execute(256, 256);
        if (rest == 0)
            break;
        panel->setArg(1, k0);
        panel->setArg(2, kb);
        panel->execute(rest);
        gemm(false, rest, rest, kb, true, true, G, k0 + kb + k0 * n, n, false, G, k0 + kb + k0 * n, n, true, G, (k0 + kb) * (n + 1), n,
             true);
    }
    vector<int> failed;
    failure.download(failed);
    if (failed[0] >= 0) {
        stringstream how;
        how << "the Cholesky factorization breaks down at column " << failed[0];
        singular(options, numeric_limits<double>::infinity(), how.str());
    }
    double dmin, dmax;
    if (!magnitudeRange(downloadAsDouble(diag, accDouble), dmin, dmax))
        singular(options, numeric_limits<double>::infinity(), "the Cholesky pivots are not finite (overflow?)");
    result.conditionEstimate = (dmax / dmin) * (dmax / dmin);
    const double tol = normalEquationTolerance(options, n);
    if (!(dmin * dmin >= tol * dmax * dmax))
        singular(options, result.conditionEstimate, "spread of the Cholesky pivots");
}

void CommonSolveLeastSquaresKernel::factorLU(ComputeArray& G, ComputeArray& H, ComputeArray& swaps, int n, int columns,
                                             const LeastSquaresOptions& options, LeastSquaresResult& result) {
    const int accSize = accumulationSize();
    ComputeArray pivots;
    allocate(pivots, n, accSize, "lsPivots");
    allocate(swaps, n, sizeof(int), "lsSwaps");
    ComputeKernel pivot = makeKernel(program, "luPivot", n, columns, 0, G, H, pivots, swaps);
    ComputeKernel panel = makeKernel(program, "luPanel", n, 0, 0, G);
    ComputeKernel rowBlock = makeKernel(program, "luRowBlock", n, 0, 0, G);
    for (int k0 = 0; k0 < n; k0 += NB) {
        const int kb = min(NB, n - k0), end = k0 + kb, rest = n - end;
        for (int j = k0; j < end; j++) {
            pivot->setArg(2, j);
            pivot->execute(BLOCK, BLOCK);
            if (j + 1 < n) {
                panel->setArg(1, j);
                panel->setArg(2, end);
                panel->execute(n - j - 1);
            }
        }
        if (rest == 0)
            break;
        rowBlock->setArg(1, k0);
        rowBlock->setArg(2, kb);
        rowBlock->execute(rest);
        gemm(false, rest, rest, kb, true, true, G, end + k0 * n, n, false, G, k0 + end * n, n, false, G, end * (n + 1), n, false);
    }
    double pmin, pmax;
    if (!magnitudeRange(downloadAsDouble(pivots, accDouble), pmin, pmax))
        singular(options, numeric_limits<double>::infinity(), "the LU pivots are not finite (overflow?)");
    result.conditionEstimate = (pmin > 0 ? pmax / pmin : numeric_limits<double>::infinity());
    const double tol = normalEquationTolerance(options, n);
    if (!(pmin >= tol * pmax))
        singular(options, result.conditionEstimate, "spread of the LU pivots");
}

void CommonSolveLeastSquaresKernel::gaussSeidel(ComputeArray& G, ComputeArray& H, ComputeArray& X, int n, int columns,
                                                const LeastSquaresOptions& options, LeastSquaresResult& result) {
    const int accSize = accumulationSize();
    // A zero diagonal element of A^T A (a zero column of A) would divide by zero: name it.
    vector<double> g = downloadAsDouble(G, accDouble);
    for (int j = 0; j < n; j++)
        if (!(g[(size_t) j * n + j] > 0)) {
            stringstream msg;
            msg << prefix(options, precision) << "zero diagonal element " << j << " of the normal matrix: column " << j
                << " of A is zero, so A is rank deficient";
            throw OpenMMException(msg.str());
        }
    {
        // The sweeps converge for a singular A^T A too, to one of many solutions: the rank is checked as Cholesky
        // checks it, on a copy.
        ComputeArray check;
        allocate(check, (size_t) n * n, accSize, "lsRankCheck");
        G.copyTo(check);
        factorCholesky(check, n, options, result);
    }
    ComputeArray norms;
    allocate(norms, 2 * columns, accSize, "lsNorms");
    ComputeKernel sweep = makeKernel(program, "gaussSeidelSweep", n, columns, G, H, X);
    if (accDouble)
        sweep->addArg(options.relaxation);
    else
        sweep->addArg((float) options.relaxation);
    ComputeKernel residual = makeKernel(program, "normalResidual", n, columns, G, H, X, norms);
    int it = 0;
    double worst = 0;
    while (true) {
        residual->execute(columns * BLOCK, BLOCK);
        vector<double> nr = downloadAsDouble(norms, accDouble);
        worst = 0;
        int worstRhs = 0;
        for (int r = 0; r < columns; r++) {
            // A zero right-hand side is converged; a NaN norm must stay NaN (and fail the test below), not read as zero.
            const double rel = (nr[2 * r + 1] == 0 ? 0.0 : sqrt(nr[2 * r] / nr[2 * r + 1]));
            if (!(rel <= worst)) {
                worst = rel;
                worstRhs = r;
            }
        }
        if (worst <= options.tolerance)
            break;
        if (it >= options.maxIterations || !std::isfinite(worst)) {
            stringstream msg;
            msg << prefix(options, precision) << "Gauss-Seidel did not converge in " << it << " iterations (relative normal-equation residual "
                << worst << " > tolerance " << options.tolerance << ", right-hand side " << worstRhs
                << "); cond(A^T A) is too large for the iteration" << (accDouble ? "" : " or the tolerance is below single precision")
                << ", raise maxIterations or use QR or Cholesky";
            throw OpenMMException(msg.str());
        }
        sweep->execute(columns * BLOCK, BLOCK);
        it++;
    }
    result.iterations = it;
    result.relativeNormalResidual = worst;
}

vector<double> CommonSolveLeastSquaresKernel::solveQR(const LeastSquaresProblem& pr, const LeastSquaresOptions& options,
                                                      LeastSquaresResult& result) {
    const int m = pr.m, n = pr.n, nrhs = pr.nrhs, p = pr.p, width = n + nrhs;
    const int accSize = accumulationSize();
    // W = [A | b], column-major m x (n + nrhs), in the working type; mixed precision rounds the input to float first.
    vector<double> w((size_t) m * width);
    auto round = [&](double v) { return storeDouble ? v : (double) (float) v; };
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++)
            w[(size_t) j * m + i] = round(pr.A[(size_t) i * n + j]);
        for (int r = 0; r < nrhs; r++)
            w[(size_t) (n + r) * m + i] = round(pr.b[(size_t) i * nrhs + r]);
    }
    ComputeArray W, rdiag, beta, V, S, T, VtC, TtVtC;
    uploadNew(W, w, accDouble, "lsW");
    w.clear();
    w.shrink_to_fit();
    allocate(rdiag, n, accSize, "lsRdiag");
    allocate(beta, n, accSize, "lsBeta");
    allocate(V, (size_t) m * NB, accSize, "lsV");
    allocate(S, NB * NB, accSize, "lsS");
    allocate(T, NB * NB, accSize, "lsT");
    allocate(VtC, (size_t) NB * width, accSize, "lsVtC");
    allocate(TtVtC, (size_t) NB * width, accSize, "lsTtVtC");
    ComputeKernel vec = makeKernel(program, "householderVector", m, 0, W, rdiag, beta);
    ComputeKernel apply = makeKernel(program, "householderPanelApply", m, 0, 0, W, beta);
    ComputeKernel copyPanel = makeKernel(program, "qrCopyPanel", m, 0, 0, W, V);
    ComputeKernel buildT = makeKernel(program, "qrBuildT", 0, 0, S, beta, T);
    for (int k0 = 0; k0 < n; k0 += NB) {
        const int kb = min(NB, n - k0), end = k0 + kb, rest = width - end;
        for (int k = k0; k < end; k++) {
            vec->setArg(1, k);
            vec->execute(BLOCK, BLOCK);
            if (k + 1 < end) {
                apply->setArg(1, k);
                apply->setArg(2, end);
                apply->execute((end - k - 1) * BLOCK, BLOCK);
            }
        }
        // Q_panel^T = I - V T^T V^T on every column right of the panel (b included).
        copyPanel->setArg(1, k0);
        copyPanel->setArg(2, kb);
        copyPanel->execute((m - k0) * kb);
        gemm(false, kb, kb, m - k0, false, false, V, k0, m, true, V, k0, m, false, S, 0, NB, false);
        buildT->setArg(0, k0);
        buildT->setArg(1, kb);
        buildT->execute(NB, NB);
        gemm(false, kb, rest, m - k0, false, false, V, k0, m, true, W, k0 + end * m, m, false, VtC, 0, NB, false);
        gemm(false, kb, rest, kb, false, false, T, 0, NB, true, VtC, 0, NB, false, TtVtC, 0, NB, false);
        gemm(false, m - k0, rest, kb, true, true, V, k0, m, false, TtVtC, 0, NB, false, W, k0 + end * m, m, false);
    }
    double rmin, rmax;
    const bool finiteR = magnitudeRange(downloadAsDouble(rdiag, accDouble), rmin, rmax);
    result.conditionEstimate = (finiteR && rmin > 0 ? rmax / rmin : numeric_limits<double>::infinity());
    const double tol = (options.rankTolerance > 0 ? options.rankTolerance : max(m, n) * eps);
    if (!finiteR || !(rmin >= tol * rmax)) {
        stringstream msg;
        msg << prefix(options, precision) << "A is rank deficient: cond(A) is at least " << result.conditionEstimate
            << " (spread of |R(j,j)|), beyond 1/rankTolerance = " << 1.0 / tol
            << " for this precision. allowRankDeficient (the minimum-norm solution) needs the Reference or CPU platform.";
        throw OpenMMException(msg.str());
    }
    ComputeKernel setDiagonal = makeKernel(program, "qrSetDiagonal", m, n, W, rdiag);
    setDiagonal->execute(n);
    // As for the normal equations, the |R(j,j)| spread can miss a near rank deficiency by orders: estimate
    // cond_2(A) >= max_j ||a_j|| / sigma_min, with 1/sigma_min^2 = ||(R^T R)^-1||_2 by power iteration.
    const double inverseEstimate = inverseNormEstimate(n, [&](ComputeArray& Z) {
        triangularSolve(n, 1, W, 0, m, false, true, false, Z, 0, n);  // R^T y = z
        triangularSolve(n, 1, W, 0, m, false, false, false, Z, 0, n); // R x = y
    });
    const double conditionEstimate = sqrt(normalMatrixNormLowerBound(pr, false) * inverseEstimate);
    result.conditionEstimate = max(result.conditionEstimate, conditionEstimate);
    if (!(conditionEstimate * tol <= 1)) {
        stringstream msg;
        msg << prefix(options, precision) << "A is rank deficient: cond(A) is at least about " << conditionEstimate
            << " (estimated from R), beyond 1/rankTolerance = " << 1.0 / tol
            << " for this precision. allowRankDeficient (the minimum-norm solution) needs the Reference or CPU platform.";
        throw OpenMMException(msg.str());
    }
    // X = [(Q^T b)[0:n] | C^T]; then R^T z = C^T for the constraint columns and R x = . for all.
    ComputeArray X;
    allocate(X, (size_t) n * (nrhs + p), accSize, "lsX");
    ComputeKernel copy = makeKernel(program, "copyBlock", n, nrhs, W, n * m, m, X, 0, n);
    copy->execute(n * nrhs);
    if (p > 0) {
        uploadPart(X, constraintColumns(pr), n * nrhs, accDouble);
        triangularSolve(n, p, W, 0, m, false, true, false, X, n * nrhs, n); // R^T z = C^T
    }
    triangularSolve(n, nrhs + p, W, 0, m, false, false, false, X, 0, n); // R x = .
    return downloadAsDouble(X, accDouble);
}

} // namespace OpenMMDFT
