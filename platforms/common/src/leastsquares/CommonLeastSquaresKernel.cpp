/* Least squares on the GPU platforms: the host side (see CommonLeastSquaresKernel.h). */
#include "CommonLeastSquaresKernel.h"
#include "CommonLeastSquaresKernelSources.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeKernel.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <vector>

using namespace OpenMM;
using namespace std;

namespace OpenMMDFT {

namespace {

const int BLOCK = 128;

string prefix(const LeastSquaresOptions& options, const string& precision) {
    return "solveLeastSquares (" + leastSquaresMethodName(options.method) + ", GPU platform, " + precision + " precision): ";
}

/* Upload double data into an array of float or double elements. */
void uploadAs(ComputeContext& cc, ComputeArray& array, const vector<double>& data, bool isDouble, const string& name) {
    array.initialize(cc, max<size_t>(1, data.size()), isDouble ? sizeof(double) : sizeof(float), name);
    if (data.empty())
        return;
    if (isDouble)
        array.upload(data);
    else {
        vector<float> f(data.begin(), data.end());
        array.upload(f);
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

} // namespace

void CommonSolveLeastSquaresKernel::initialize() {
    ContextSelector selector(cc);
    const bool useDouble = cc.getUseDoublePrecision(), useMixed = cc.getUseMixedPrecision();
    storeDouble = useDouble;
    accDouble = (useDouble || useMixed) && cc.getSupportsDoublePrecision();
    precision = (useDouble ? "double" : useMixed ? "mixed" : "single");
    // Mixed: the input is rounded to float, so its eps bounds what the answer can resolve.
    eps = (storeDouble ? DBL_EPSILON : FLT_EPSILON);
    map<string, string> defines;
    defines["STORE"] = (storeDouble ? "double" : "float");
    defines["ACC"] = (accDouble ? "double" : "float");
    defines["BLOCK"] = to_string(BLOCK);
    program = cc.compileProgram(CommonLeastSquaresKernelSources::leastSquares, defines);
}

void CommonSolveLeastSquaresKernel::solve(const LeastSquaresProblem& problem, const LeastSquaresOptions& options, LeastSquaresResult& result) {
    result.precision = precision;
    if (problem.p > 0)
        throw OpenMMException(prefix(options, precision) + "equality constraints are not implemented on the GPU platforms yet; "
                                                           "use the Reference or CPU platform");
    if (options.normalEquationsGiven)
        throw OpenMMException(prefix(options, precision) + "given normal equations (normalEquationsGiven) are solved on the "
                                                           "Reference and CPU platforms only");
    if (options.allowRankDeficient)
        throw OpenMMException(prefix(options, precision) + "the minimum-norm solution of rank-deficient problems (allowRankDeficient) "
                                                           "is only implemented on the Reference and CPU platforms");
    if ((long long) problem.m * problem.n > numeric_limits<int>::max())
        throw OpenMMException(prefix(options, precision) + "A has more than 2^31 elements");
    ContextSelector selector(cc);
    if (options.method == LeastSquaresMethod::QR)
        solveQR(problem, options, result);
    else
        solveNormal(problem, options, result);
}

void CommonSolveLeastSquaresKernel::solveNormal(const LeastSquaresProblem& pr, const LeastSquaresOptions& options, LeastSquaresResult& result) {
    const int m = pr.m, n = pr.n, nrhs = pr.nrhs;
    const int accSize = (accDouble ? sizeof(double) : sizeof(float));
    // Upload A (row-major, as given) and b (column-major: each right-hand side contiguous).
    vector<double> a(pr.A, pr.A + (size_t) m * n), bcm((size_t) m * nrhs);
    for (int i = 0; i < m; i++)
        for (int r = 0; r < nrhs; r++)
            bcm[(size_t) r * m + i] = pr.b[(size_t) i * nrhs + r];
    ComputeArray A, B, G, H;
    uploadAs(cc, A, a, storeDouble, "lsA");
    uploadAs(cc, B, bcm, storeDouble, "lsB");
    G.initialize(cc, (size_t) n * n, accSize, "lsG");
    H.initialize(cc, (size_t) n * nrhs, accSize, "lsH");
    const int tiles = (n + 15) / 16;
    ComputeKernel normalMatrix = program->createKernel("normalMatrix");
    normalMatrix->addArg(m);
    normalMatrix->addArg(n);
    normalMatrix->addArg(A);
    normalMatrix->addArg(G);
    normalMatrix->execute(tiles * tiles * 256, 256);
    ComputeKernel normalRhs = program->createKernel("normalRhs");
    normalRhs->addArg(m);
    normalRhs->addArg(n);
    normalRhs->addArg(nrhs);
    normalRhs->addArg(A);
    normalRhs->addArg(B);
    normalRhs->addArg(H);
    normalRhs->execute(n * nrhs);
    // The pivot spread only bounds cond(A^T A) from below, so the default threshold carries a factor max(n, 10).
    const double tol = (options.rankTolerance > 0 ? options.rankTolerance : max(n, 10) * eps);
    auto singular = [&](double conditionLowerBound, const string& how) {
        stringstream msg;
        msg << prefix(options, precision) << "A^T A is numerically singular (" << how << "; condition number at least "
            << conditionLowerBound << ", i.e. cond(A) at least about " << sqrt(conditionLowerBound)
            << "): A is rank deficient or too ill-conditioned for the normal equations in this precision; use method QR";
        throw OpenMMException(msg.str());
    };
    vector<double> x;
    if (options.method == LeastSquaresMethod::Cholesky) {
        ComputeArray diag, failure;
        diag.initialize(cc, n, accSize, "lsDiag");
        failure.initialize<int>(cc, 1, "lsFailure");
        failure.upload(vector<int>{-1});
        ComputeKernel column = program->createKernel("choleskyColumn");
        column->addArg(n);
        column->addArg(0);
        column->addArg(G);
        column->addArg(diag);
        column->addArg(failure);
        ComputeKernel update = program->createKernel("choleskyUpdate");
        update->addArg(n);
        update->addArg(0);
        update->addArg(G);
        for (int j = 0; j < n; j++) {
            column->setArg(1, j);
            column->execute(n - j);
            if (j < n - 1) {
                update->setArg(1, j);
                update->execute((n - j - 1) * (n - j - 1));
            }
        }
        vector<int> failed;
        failure.download(failed);
        if (failed[0] >= 0) {
            stringstream how;
            how << "the Cholesky factorization breaks down at column " << failed[0];
            singular(numeric_limits<double>::infinity(), how.str());
        }
        vector<double> d = downloadAsDouble(diag, accDouble);
        double dmax = *max_element(d.begin(), d.end()), dmin = *min_element(d.begin(), d.end());
        result.conditionEstimate = (dmax / dmin) * (dmax / dmin);
        if (!(dmin * dmin >= tol * dmax * dmax))
            singular(result.conditionEstimate, "spread of the Cholesky pivots");
        ComputeKernel solveKernel = program->createKernel("choleskySolve");
        solveKernel->addArg(n);
        solveKernel->addArg(nrhs);
        solveKernel->addArg(G);
        solveKernel->addArg(diag);
        solveKernel->addArg(H);
        solveKernel->execute(nrhs * BLOCK, BLOCK);
        x = downloadAsDouble(H, accDouble);
    }
    else if (options.method == LeastSquaresMethod::Gauss) {
        ComputeArray pivots;
        pivots.initialize(cc, n, accSize, "lsPivots");
        ComputeKernel pivot = program->createKernel("gaussPivot");
        pivot->addArg(n);
        pivot->addArg(nrhs);
        pivot->addArg(0);
        pivot->addArg(G);
        pivot->addArg(H);
        pivot->addArg(pivots);
        ComputeKernel eliminate = program->createKernel("gaussEliminate");
        eliminate->addArg(n);
        eliminate->addArg(nrhs);
        eliminate->addArg(0);
        eliminate->addArg(G);
        eliminate->addArg(H);
        for (int j = 0; j < n; j++) {
            pivot->setArg(2, j);
            pivot->execute(BLOCK, BLOCK);
            if (j < n - 1) {
                eliminate->setArg(2, j);
                eliminate->execute((n - j - 1) * (n - j - 1 + nrhs));
            }
        }
        vector<double> p = downloadAsDouble(pivots, accDouble);
        double pmax = *max_element(p.begin(), p.end()), pmin = *min_element(p.begin(), p.end());
        result.conditionEstimate = (pmin > 0 ? pmax / pmin : numeric_limits<double>::infinity());
        if (!(pmin >= tol * pmax))
            singular(result.conditionEstimate, "spread of the LU pivots");
        ComputeKernel solveKernel = program->createKernel("upperSolve");
        solveKernel->addArg(n);
        solveKernel->addArg(nrhs);
        solveKernel->addArg(G);
        solveKernel->addArg(H);
        solveKernel->execute(nrhs * BLOCK, BLOCK);
        x = downloadAsDouble(H, accDouble);
    }
    else {
        // Gauss-Seidel. A zero column of A gives a zero diagonal element of A^T A: name it (checked on the host, in double).
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int i = 0; i < m; i++)
                s += pr.A[(size_t) i * n + j] * pr.A[(size_t) i * n + j];
            if (s == 0) {
                stringstream msg;
                msg << prefix(options, precision) << "zero diagonal element " << j << " of the normal matrix: column " << j
                    << " of A is zero, so A is rank deficient";
                throw OpenMMException(msg.str());
            }
        }
        vector<double> x0((size_t) n * nrhs, 0.0);
        if (!options.initialGuess.empty())
            for (int j = 0; j < n; j++)
                for (int r = 0; r < nrhs; r++)
                    x0[(size_t) r * n + j] = options.initialGuess[(size_t) j * nrhs + r];
        ComputeArray X, norms;
        uploadAs(cc, X, x0, accDouble, "lsX");
        norms.initialize(cc, 2 * nrhs, accSize, "lsNorms");
        ComputeKernel sweep = program->createKernel("gaussSeidelSweep");
        sweep->addArg(n);
        sweep->addArg(nrhs);
        sweep->addArg(G);
        sweep->addArg(H);
        sweep->addArg(X);
        if (accDouble)
            sweep->addArg(options.relaxation);
        else
            sweep->addArg((float) options.relaxation);
        ComputeKernel residual = program->createKernel("normalResidual");
        residual->addArg(n);
        residual->addArg(nrhs);
        residual->addArg(G);
        residual->addArg(H);
        residual->addArg(X);
        residual->addArg(norms);
        int it = 0;
        double worst = 0;
        while (true) {
            residual->execute(nrhs * BLOCK, BLOCK);
            vector<double> nr = downloadAsDouble(norms, accDouble);
            worst = 0;
            int worstRhs = 0;
            for (int r = 0; r < nrhs; r++) {
                double rel = (nr[2 * r + 1] > 0 ? sqrt(nr[2 * r] / nr[2 * r + 1]) : 0.0);
                if (!(rel <= worst)) {
                    worst = rel;
                    worstRhs = r;
                }
            }
            if (worst <= options.tolerance)
                break;
            if (it >= options.maxIterations || !std::isfinite(worst)) {
                stringstream msg;
                msg << prefix(options, precision) << "Gauss-Seidel did not converge in " << it
                    << " iterations (relative normal-equation residual " << worst << " > tolerance " << options.tolerance
                    << ", right-hand side " << worstRhs << "); cond(A^T A) is too large for the iteration"
                    << (accDouble ? "" : " or the tolerance is below single precision") << ", raise maxIterations or use QR or Cholesky";
                throw OpenMMException(msg.str());
            }
            sweep->execute(nrhs * BLOCK, BLOCK);
            it++;
        }
        result.iterations = it;
        result.relativeNormalResidual = worst;
        x = downloadAsDouble(X, accDouble);
    }
    result.x.assign((size_t) n * nrhs, 0.0);
    for (int j = 0; j < n; j++)
        for (int r = 0; r < nrhs; r++)
            result.x[(size_t) j * nrhs + r] = x[(size_t) r * n + j];
}

void CommonSolveLeastSquaresKernel::solveQR(const LeastSquaresProblem& pr, const LeastSquaresOptions& options, LeastSquaresResult& result) {
    const int m = pr.m, n = pr.n, nrhs = pr.nrhs;
    const int accSize = (accDouble ? sizeof(double) : sizeof(float));
    // Column-major A and b in the working type; mixed precision rounds the input to float first.
    vector<double> a((size_t) m * n), bcm((size_t) m * nrhs);
    auto round = [&](double v) { return storeDouble ? v : (double) (float) v; };
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++)
            a[(size_t) j * m + i] = round(pr.A[(size_t) i * n + j]);
        for (int r = 0; r < nrhs; r++)
            bcm[(size_t) r * m + i] = round(pr.b[(size_t) i * nrhs + r]);
    }
    ComputeArray Q, B, rdiag, beta;
    uploadAs(cc, Q, a, accDouble, "lsQ");
    uploadAs(cc, B, bcm, accDouble, "lsQB");
    rdiag.initialize(cc, n, accSize, "lsRdiag");
    beta.initialize(cc, n, accSize, "lsBeta");
    ComputeKernel vec = program->createKernel("householderVector");
    vec->addArg(m);
    vec->addArg(0);
    vec->addArg(Q);
    vec->addArg(rdiag);
    vec->addArg(beta);
    ComputeKernel apply = program->createKernel("householderApply");
    apply->addArg(m);
    apply->addArg(n);
    apply->addArg(nrhs);
    apply->addArg(0);
    apply->addArg(Q);
    apply->addArg(B);
    apply->addArg(beta);
    for (int k = 0; k < n; k++) {
        vec->setArg(1, k);
        vec->execute(BLOCK, BLOCK);
        apply->setArg(3, k);
        apply->execute((n - k - 1 + nrhs) * BLOCK, BLOCK);
    }
    vector<double> r = downloadAsDouble(rdiag, accDouble);
    double rmax = 0, rmin = numeric_limits<double>::infinity();
    for (double v : r) {
        rmax = max(rmax, fabs(v));
        rmin = min(rmin, fabs(v));
    }
    result.conditionEstimate = (rmin > 0 ? rmax / rmin : numeric_limits<double>::infinity());
    const double tol = (options.rankTolerance > 0 ? options.rankTolerance : max(m, n) * eps);
    if (!(rmin >= tol * rmax)) {
        stringstream msg;
        msg << prefix(options, precision) << "A is rank deficient: cond(A) is at least " << result.conditionEstimate
            << " (spread of |R(j,j)|), beyond 1/rankTolerance = " << 1.0 / tol
            << " for this precision. allowRankDeficient (the minimum-norm solution) needs the Reference or CPU platform.";
        throw OpenMMException(msg.str());
    }
    ComputeKernel solveKernel = program->createKernel("qrSolve");
    solveKernel->addArg(m);
    solveKernel->addArg(n);
    solveKernel->addArg(nrhs);
    solveKernel->addArg(Q);
    solveKernel->addArg(rdiag);
    solveKernel->addArg(B);
    solveKernel->execute(nrhs * BLOCK, BLOCK);
    vector<double> x = downloadAsDouble(B, accDouble);
    result.x.assign((size_t) n * nrhs, 0.0);
    for (int j = 0; j < n; j++)
        for (int rr = 0; rr < nrhs; rr++)
            result.x[(size_t) j * nrhs + rr] = x[(size_t) rr * m + j];
}

} // namespace OpenMMDFT
