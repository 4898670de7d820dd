/* Least squares on Reference/CPU: double precision with LAPACK/BLAS (see the header). All
 * matrices are column-major inside this file (LAPACK's order); the API's row-major data are
 * either transposed once (QR) or used directly as their transposes (A^T A, A^T b).
 * The front end (LeastSquaresSolver) hands over a problem scaled by powers of two, so A^T A
 * cannot overflow here; every condition test is still written to fail closed for NaN
 * (!(rcond >= tol)), so that a non-finite factorization is an error, never an answer. */
#include "ReferenceLeastSquaresKernel.h"
#include "openmmdft/internal/DenseLayout.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <vector>

using namespace OpenMM;
using namespace std;

// Fortran LAPACK/BLAS, with gfortran's hidden string-length arguments spelled out.
extern "C" {
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork, int* info);
void dormqr_(const char* side, const char* trans, const int* m, const int* n, const int* k, const double* a, const int* lda,
             const double* tau, double* c, const int* ldc, double* work, const int* lwork, int* info, size_t, size_t);
void dtrtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs, const double* a, const int* lda,
             double* b, const int* ldb, int* info, size_t, size_t, size_t);
void dtrcon_(const char* norm, const char* uplo, const char* diag, const int* n, const double* a, const int* lda, double* rcond,
             double* work, int* iwork, int* info, size_t, size_t, size_t);
void dgelsy_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb, int* jpvt,
             const double* rcond, int* rank, double* work, const int* lwork, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv, double* b,
             const int* ldb, int* info, size_t);
void dgecon_(const char* norm, const int* n, const double* a, const int* lda, const double* anorm, double* rcond, double* work,
             int* iwork, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda, double* b, const int* ldb, int* info,
             size_t);
void dpocon_(const char* uplo, const int* n, const double* a, const int* lda, const double* anorm, double* rcond, double* work,
             int* iwork, int* info, size_t);
double dlange_(const char* norm, const int* m, const int* n, const double* a, const int* lda, double* work, size_t);
double dlansy_(const char* norm, const char* uplo, const int* n, const double* a, const int* lda, double* work, size_t, size_t);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha, const double* a, const int* lda,
            const double* beta, double* c, const int* ldc, size_t, size_t);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha, const double* a,
            const int* lda, const double* b, const int* ldb, const double* beta, double* c, const int* ldc, size_t, size_t);
void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* lda, const double* x,
            const int* incx, const double* beta, double* y, const int* incy, size_t);
double ddot_(const int* n, const double* x, const int* incx, const double* y, const int* incy);
double dnrm2_(const int* n, const double* x, const int* incx);
}

namespace OpenMMDFT {

namespace {

const double EPS = numeric_limits<double>::epsilon();
const int ONE = 1;

string prefix(const LeastSquaresOptions& options) {
    return "solveLeastSquares (" + leastSquaresMethodName(options.method) + ", Reference/CPU): ";
}

void lapackCheck(int info, const char* routine) {
    if (info < 0) {
        stringstream msg;
        msg << "solveLeastSquares: internal error, LAPACK " << routine << " rejected argument " << -info;
        throw OpenMMException(msg.str());
    }
}

/* Column-major dense matrix. */
struct Mat {
    int rows = 0, cols = 0;
    vector<double> v;
    Mat() {
    }
    Mat(int r, int c) : rows(r), cols(c), v((size_t) r * c, 0.0) {
    }
    double& operator()(int i, int j) {
        return v[i + (size_t) j * rows];
    }
    double operator()(int i, int j) const {
        return v[i + (size_t) j * rows];
    }
    double* data() {
        return v.data();
    }
    const double* data() const {
        return v.data();
    }
    double* col(int j) {
        return v.data() + (size_t) j * rows;
    }
};

/* Column-major copy of a row-major rows x cols matrix. */
Mat fromRowMajor(const double* src, int rows, int cols) {
    Mat a(rows, cols);
    transposeTiled(src, rows, cols, cols, a.v.data(), rows);
    return a;
}

/* Row-major copy of the first `rows` rows of a column-major matrix. */
vector<double> toRowMajor(const Mat& a, int rows) {
    vector<double> out((size_t) rows * a.cols);
    transposeTiled(a.v.data(), a.cols, rows, a.rows, out.data(), a.cols);
    return out;
}

/* dgeqrf with a workspace query. a is rows x cols with leading dimension lda. */
void householderQR(int rows, int cols, double* a, int lda, vector<double>& tau) {
    tau.assign(min(rows, cols), 0.0);
    int info, lwork = -1;
    double query;
    dgeqrf_(&rows, &cols, a, &lda, tau.data(), &query, &lwork, &info);
    lapackCheck(info, "dgeqrf");
    lwork = max(1, (int) query);
    vector<double> work(lwork);
    dgeqrf_(&rows, &cols, a, &lda, tau.data(), work.data(), &lwork, &info);
    lapackCheck(info, "dgeqrf");
}

/* c := op(Q) c or c op(Q), Q from householderQR (k reflectors stored in a, leading dimension lda). */
void applyQ(char side, char trans, int rows, int cols, int k, const double* a, int lda, const vector<double>& tau, double* c, int ldc) {
    if (rows == 0 || cols == 0 || k == 0)
        return;
    int info, lwork = -1;
    double query;
    dormqr_(&side, &trans, &rows, &cols, &k, a, &lda, tau.data(), c, &ldc, &query, &lwork, &info, 1, 1);
    lapackCheck(info, "dormqr");
    lwork = max(1, (int) query);
    vector<double> work(lwork);
    dormqr_(&side, &trans, &rows, &cols, &k, a, &lda, tau.data(), c, &ldc, work.data(), &lwork, &info, 1, 1);
    lapackCheck(info, "dormqr");
}

/* Estimated reciprocal 1-norm condition number of the upper triangle of a (n x n, leading dimension lda). */
double triangularRcond(int n, const double* a, int lda) {
    for (int i = 0; i < n; i++)
        if (a[i + (size_t) i * lda] == 0.0)
            return 0.0;
    double rcond;
    int info;
    vector<double> work(3 * n);
    vector<int> iwork(n);
    dtrcon_("1", "U", "N", &n, a, &lda, &rcond, work.data(), iwork.data(), &info, 1, 1, 1);
    lapackCheck(info, "dtrcon");
    return rcond;
}

void gemm(char ta, char tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb, double beta,
          double* c, int ldc) {
    if (m == 0 || n == 0)
        return;
    if (k == 0) {
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++)
                c[i + (size_t) j * ldc] *= beta;
        return;
    }
    dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}

/*
 * Least squares by Householder QR on the column-major a (rows x cols, leading dimension lda,
 * destroyed) for the right-hand sides in b (rows x nrhs, leading dimension ldb); on return the
 * first cols rows of b hold the solution. Returns the rank; sets the condition estimate.
 */
int qrLeastSquares(int rows, int cols, double* a, int lda, double* b, int ldb, int nrhs, const LeastSquaresOptions& options,
                   double tolerance, double& conditionEstimate, bool& rankDeficient, const char* what) {
    vector<double> original;
    if (options.allowRankDeficient)
        original.assign(a, a + (size_t) lda * cols);
    vector<double> tau;
    householderQR(rows, cols, a, lda, tau);
    double rcond = triangularRcond(cols, a, lda);
    conditionEstimate = (rcond > 0 ? 1.0 / rcond : numeric_limits<double>::infinity());
    if (!(rcond >= tolerance)) { // fails closed: a NaN estimate (non-finite R) is rank deficiency, not success
        if (!options.allowRankDeficient) {
            stringstream msg;
            msg << prefix(options) << what << " is rank deficient: estimated cond(" << what << ") = " << conditionEstimate
                << " exceeds 1/rankTolerance = " << 1.0 / tolerance
                << ". Set allowRankDeficient (method QR) for the minimum-norm solution.";
            throw OpenMMException(msg.str());
        }
        // Minimum-norm solution: complete orthogonal factorization with column pivoting.
        vector<int> jpvt(cols, 0);
        int rank, info, lwork = -1;
        double query;
        dgelsy_(&rows, &cols, &nrhs, original.data(), &lda, b, &ldb, jpvt.data(), &tolerance, &rank, &query, &lwork, &info);
        lapackCheck(info, "dgelsy");
        lwork = max(1, (int) query);
        vector<double> work(lwork);
        dgelsy_(&rows, &cols, &nrhs, original.data(), &lda, b, &ldb, jpvt.data(), &tolerance, &rank, work.data(), &lwork, &info);
        lapackCheck(info, "dgelsy");
        rankDeficient = (rank < cols);
        return rank;
    }
    applyQ('L', 'T', rows, nrhs, cols, a, lda, tau, b, ldb);
    int info;
    dtrtrs_("U", "N", "N", &cols, &nrhs, a, &lda, b, &ldb, &info, 1, 1, 1);
    lapackCheck(info, "dtrtrs");
    if (info > 0)
        throw OpenMMException(prefix(options) + what + " is rank deficient (exactly zero diagonal element of R)");
    return cols;
}

/* Copy the upper triangle of the square column-major G into its lower triangle (blocked for the cache). */
void symmetrize(Mat& G) {
    const int n = G.rows, B = 64;
    for (int j0 = 0; j0 < n; j0 += B)
        for (int i0 = j0; i0 < n; i0 += B) {
            int j1 = min(n, j0 + B), i1 = min(n, i0 + B);
            for (int j = j0; j < j1; j++)
                for (int i = max(i0, j + 1); i < i1; i++)
                    G.v[i + (size_t) j * n] = G.v[j + (size_t) i * n];
        }
}

/* G = A^T A (n x n; upper triangle, or full when `full`) and H = A^T b (n x nrhs) from the row-major A and b;
 * or, when the caller gives the normal equations, G = A and H = b as they are. */
void normalEquations(const LeastSquaresProblem& pr, const LeastSquaresOptions& options, Mat& G, Mat& H, bool full) {
    int m = pr.m, n = pr.n, nrhs = pr.nrhs;
    if (options.normalEquationsGiven) {
        // A symmetric row-major matrix is its own column-major form.
        G = Mat(n, n);
        std::copy(pr.A, pr.A + (size_t) n * n, G.v.begin());
        H = fromRowMajor(pr.b, n, nrhs);
        return;
    }
    G = Mat(n, n);
    H = Mat(n, nrhs);
    // The row-major m x n A is the column-major n x m A^T.
    double one = 1.0, zero = 0.0;
    dsyrk_("U", "N", &n, &m, &one, pr.A, &n, &zero, G.data(), &n, 1, 1);
    if (full)
        symmetrize(G);
    // The row-major b is the column-major b^T (nrhs x m).
    gemm('N', 'T', n, nrhs, m, 1.0, pr.A, n, pr.b, nrhs, 0.0, H.data(), n);
}

/* The QR of C^T (n x p) that all constrained methods use; checks that C has full row rank. */
struct ConstraintBasis {
    Mat Ct;             // the factored C^T: R in the top p x p, reflectors below
    vector<double> tau; // Q = H_1 ... H_p, an n x n orthogonal matrix; Q1 = Q(:, :p) spans range(C^T), Q2 = Q(:, p:) null(C)
    Mat W;              // R^-T d (p x nrhs): the particular solution is x_p = Q [W; 0]
};

ConstraintBasis constraintBasis(const LeastSquaresProblem& pr, const LeastSquaresOptions& options) {
    ConstraintBasis cb;
    int n = pr.n, p = pr.p;
    // C^T column-major = C row-major read as is.
    cb.Ct = Mat(n, p);
    std::copy(pr.C, pr.C + (size_t) n * p, cb.Ct.v.begin());
    householderQR(n, p, cb.Ct.data(), n, cb.tau);
    double rcond = triangularRcond(p, cb.Ct.data(), n);
    if (!(rcond >= max(n, p) * EPS)) { // NaN fails closed
        stringstream msg;
        msg << prefix(options) << "the constraint matrix C is rank deficient (its rows are linearly dependent; estimated cond(C) = "
            << (rcond > 0 ? 1.0 / rcond : numeric_limits<double>::infinity()) << ")";
        throw OpenMMException(msg.str());
    }
    cb.W = fromRowMajor(pr.d, p, pr.nrhs);
    int nrhs = pr.nrhs, info;
    dtrtrs_("U", "T", "N", &p, &nrhs, cb.Ct.data(), &n, cb.W.data(), &p, &info, 1, 1, 1);
    lapackCheck(info, "dtrtrs");
    return cb;
}

/* x = Q [top; bottom] for the constraint basis (top p x nrhs, bottom (n-p) x nrhs). */
Mat fromBasis(const ConstraintBasis& cb, const Mat& top, const Mat* bottom, int n, int nrhs) {
    int p = cb.Ct.cols;
    Mat x(n, nrhs);
    for (int k = 0; k < nrhs; k++) {
        for (int i = 0; i < p; i++)
            x(i, k) = top(i, k);
        if (bottom != nullptr)
            for (int i = p; i < n; i++)
                x(i, k) = (*bottom)(i - p, k);
    }
    applyQ('L', 'N', n, nrhs, p, cb.Ct.data(), n, cb.tau, x.data(), n);
    return x;
}

/* --------------------------------------------------------------------------------------- QR */

void solveQR(const LeastSquaresProblem& pr, const LeastSquaresOptions& options, LeastSquaresResult& result) {
    int m = pr.m, n = pr.n, nrhs = pr.nrhs, p = pr.p;
    Mat A = fromRowMajor(pr.A, m, n);
    Mat B = fromRowMajor(pr.b, m, nrhs);
    double tol = (options.rankTolerance > 0 ? options.rankTolerance : max(m, n) * EPS);
    bool rankDeficient = false;
    if (p == 0) {
        result.rank = qrLeastSquares(m, n, A.data(), m, B.data(), m, nrhs, options, tol, result.conditionEstimate, rankDeficient, "A");
        result.rankDeficient = rankDeficient;
        Mat X(n, nrhs);
        for (int k = 0; k < nrhs; k++)
            for (int i = 0; i < n; i++)
                X(i, k) = B(i, k);
        result.x = toRowMajor(X, n);
        return;
    }
    // Null-space method: A Q = [A Q1, A Q2]; x = Q [W; y] with y from min ||A Q2 y - (b - A Q1 W)||.
    ConstraintBasis cb = constraintBasis(pr, options);
    applyQ('R', 'N', m, n, p, cb.Ct.data(), n, cb.tau, A.data(), m);
    gemm('N', 'N', m, nrhs, p, -1.0, A.data(), m, cb.W.data(), p, 1.0, B.data(), m);
    Mat Y(n - p, nrhs);
    result.rank = n - p;
    if (n > p) {
        result.rank = qrLeastSquares(m, n - p, A.col(p), m, B.data(), m, nrhs, options, tol, result.conditionEstimate, rankDeficient,
                                     "A restricted to the null space of C");
        result.rankDeficient = rankDeficient;
        for (int k = 0; k < nrhs; k++)
            for (int i = 0; i < n - p; i++)
                Y(i, k) = B(i, k);
    }
    Mat X = fromBasis(cb, cb.W, &Y, n, nrhs);
    result.x = toRowMajor(X, n);
    // Multipliers: C^T lambda = A^T (b - A x)  =>  lambda = R^-1 (A Q1)^T (b - A x).
    Mat r = fromRowMajor(pr.b, m, nrhs);
    gemm('T', 'N', m, nrhs, n, -1.0, pr.A, n, X.data(), n, 1.0, r.data(), m);
    Mat L(p, nrhs);
    gemm('T', 'N', p, nrhs, m, 1.0, A.data(), m, r.data(), m, 0.0, L.data(), p);
    int info;
    dtrtrs_("U", "N", "N", &p, &nrhs, cb.Ct.data(), &n, L.data(), &p, &info, 1, 1, 1);
    lapackCheck(info, "dtrtrs");
    result.lagrangeMultipliers = toRowMajor(L, p);
}

/* ------------------------------------------------------------------------------------ Gauss */

void solveGauss(const LeastSquaresProblem& pr, const LeastSquaresOptions& options, LeastSquaresResult& result) {
    int n = pr.n, nrhs = pr.nrhs, p = pr.p;
    Mat G, H;
    normalEquations(pr, options, G, H, true);
    if (p > 0)
        constraintBasis(pr, options); // only to report a rank-deficient C clearly
    // Bordered KKT system [G  s C^T; s C  0][x; lambda/s] = [H; s d], s balancing the blocks (just G x = H when p = 0).
    int N = n + p;
    Mat K, R;
    double s = 1.0;
    if (p == 0) {
        K = std::move(G);
        R = std::move(H);
    }
    else {
        K = Mat(N, N);
        R = Mat(N, nrhs);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                K(i, j) = G(i, j);
        for (int k = 0; k < nrhs; k++)
            for (int i = 0; i < n; i++)
                R(i, k) = H(i, k);
        double gnorm = 0, cnorm = 0;
        for (double g : G.v)
            gnorm = max(gnorm, fabs(g));
        for (size_t i = 0; i < (size_t) p * n; i++)
            cnorm = max(cnorm, fabs(pr.C[i]));
        s = (gnorm > 0 && cnorm > 0 ? gnorm / cnorm : 1.0);
        for (int r = 0; r < p; r++) {
            for (int j = 0; j < n; j++) {
                K(n + r, j) = s * pr.C[(size_t) r * n + j];
                K(j, n + r) = s * pr.C[(size_t) r * n + j];
            }
            for (int k = 0; k < nrhs; k++)
                R(n + r, k) = s * pr.d[(size_t) r * nrhs + k];
        }
    }
    vector<double> normWork(N);
    double anorm = dlange_("1", &N, &N, K.data(), &N, normWork.data(), 1);
    vector<int> ipiv(N);
    int info;
    dgetrf_(&N, &N, K.data(), &N, ipiv.data(), &info);
    lapackCheck(info, "dgetrf");
    const char* what = (p == 0 ? "A^T A" : "the KKT matrix [A^T A C^T; C 0]");
    double rcond = 0;
    if (info == 0) {
        vector<double> work(4 * N);
        vector<int> iwork(N);
        int info2;
        dgecon_("1", &N, K.data(), &N, &anorm, &rcond, work.data(), iwork.data(), &info2, 1);
        lapackCheck(info2, "dgecon");
    }
    result.conditionEstimate = (rcond > 0 ? 1.0 / rcond : numeric_limits<double>::infinity());
    double tol = (options.rankTolerance > 0 ? options.rankTolerance : EPS);
    if (info > 0 || !(rcond >= tol)) { // NaN fails closed
        stringstream msg;
        msg << prefix(options) << what << " is numerically singular (estimated condition number " << result.conditionEstimate
            << ", i.e. cond(A) about " << sqrt(result.conditionEstimate)
            << "): A is rank deficient or too ill-conditioned for the normal equations; use method QR";
        throw OpenMMException(msg.str());
    }
    dgetrs_("N", &N, &nrhs, K.data(), &N, ipiv.data(), R.data(), &N, &info, 1);
    lapackCheck(info, "dgetrs");
    if (p == 0) {
        result.x = toRowMajor(R, n);
        return;
    }
    Mat X(n, nrhs);
    for (int k = 0; k < nrhs; k++)
        for (int i = 0; i < n; i++)
            X(i, k) = R(i, k);
    result.x = toRowMajor(X, n);
    {
        Mat L(p, nrhs);
        for (int k = 0; k < nrhs; k++)
            for (int i = 0; i < p; i++)
                L(i, k) = s * R(n + i, k);
        result.lagrangeMultipliers = toRowMajor(L, p);
    }
}

/* --------------------------------------------------------------------------------- Cholesky */

/* G = U^T U in place with the condition estimate; what names G in the errors. For normal equations (normalMatrix) the
 * errors speak of A and advise QR; for a matrix given to invert, of that matrix alone. */
void choleskyFactor(Mat& G, int n, const LeastSquaresOptions& options, LeastSquaresResult& result, const char* what,
                    bool normalMatrix = true) {
    // The inverse's own call names itself: there is no least-squares problem to speak of.
    const string head = normalMatrix ? prefix(options) : "invertSymmetricPositiveDefinite (Reference/CPU): ";
    vector<double> normWork(n);
    double anorm = dlansy_("1", "U", &n, G.data(), &n, normWork.data(), 1, 1);
    int info;
    dpotrf_("U", &n, G.data(), &n, &info, 1);
    lapackCheck(info, "dpotrf");
    if (info > 0) {
        stringstream msg;
        msg << head << what << " is not positive definite in floating point (Cholesky breaks down at column " << info << ")";
        if (normalMatrix)
            msg << ": A is rank deficient or too ill-conditioned for the normal equations (cond(A) near 1/sqrt(eps)); use method QR";
        throw OpenMMException(msg.str());
    }
    double rcond;
    vector<double> work(3 * n);
    vector<int> iwork(n);
    dpocon_("U", &n, G.data(), &n, &anorm, &rcond, work.data(), iwork.data(), &info, 1);
    lapackCheck(info, "dpocon");
    result.conditionEstimate = (rcond > 0 ? 1.0 / rcond : numeric_limits<double>::infinity());
    double tol = (options.rankTolerance > 0 ? options.rankTolerance : EPS);
    if (!(rcond >= tol)) { // NaN fails closed
        stringstream msg;
        msg << head << what << " is numerically singular (estimated condition number " << result.conditionEstimate;
        if (normalMatrix)
            msg << ", i.e. cond(A) about " << sqrt(result.conditionEstimate)
                << "): A is rank deficient or too ill-conditioned for the normal equations; use method QR";
        else
            msg << ")";
        throw OpenMMException(msg.str());
    }
}

/* G^-1 in G from its Cholesky factor (choleskyFactor), both triangles. */
void inverseFromFactor(Mat& G, int n) {
    int info;
    dpotri_("U", &n, G.data(), &n, &info, 1);
    lapackCheck(info, "dpotri");
    symmetrize(G);
}

void solveCholesky(const LeastSquaresProblem& pr, const LeastSquaresOptions& options, LeastSquaresResult& result) {
    int n = pr.n, nrhs = pr.nrhs, p = pr.p, info;
    Mat G, H;
    normalEquations(pr, options, G, H, false);
    if (p > 0)
        constraintBasis(pr, options);
    choleskyFactor(G, n, options, result, "A^T A");
    double identityScale;
    if (p == 0 && nrhs == n && isScaledIdentity(H.data(), n, identityScale)) {
        // The inverse (what the density fitting asks for): dpotri from the factor, n^3 operations, instead of dpotrs
        // with n right-hand sides, 2 n^3.
        inverseFromFactor(G, n);
        for (double& v : G.v)
            v *= identityScale;
        result.x = toRowMajor(G, n);
        return;
    }
    dpotrs_("U", &n, &nrhs, G.data(), &n, H.data(), &n, &info, 1);
    lapackCheck(info, "dpotrs");
    if (p == 0) {
        result.x = toRowMajor(H, n);
        return;
    }
    // Range-space elimination of the KKT system: W = G^-1 C^T, S = C W, S lambda = C z - d, x = z - W lambda.
    Mat W(n, p);
    std::copy(pr.C, pr.C + (size_t) n * p, W.v.begin()); // column-major C^T
    Mat S(p, p), L = fromRowMajor(pr.d, p, nrhs);
    dpotrs_("U", &n, &p, G.data(), &n, W.data(), &n, &info, 1);
    lapackCheck(info, "dpotrs");
    // S = C W, rhs = C z - d, with C = (C^T)^T read from the row-major C as column-major C^T.
    gemm('T', 'N', p, p, n, 1.0, pr.C, n, W.data(), n, 0.0, S.data(), p);
    gemm('T', 'N', p, nrhs, n, 1.0, pr.C, n, H.data(), n, -1.0, L.data(), p);
    dpotrf_("U", &p, S.data(), &p, &info, 1);
    lapackCheck(info, "dpotrf");
    if (info > 0)
        throw OpenMMException(prefix(options) + "the Schur complement C (A^T A)^-1 C^T is not positive definite: the constraints are "
                                                "linearly dependent or numerically incompatible with A");
    dpotrs_("U", &p, &nrhs, S.data(), &p, L.data(), &p, &info, 1);
    lapackCheck(info, "dpotrs");
    gemm('N', 'N', n, nrhs, p, -1.0, W.data(), n, L.data(), p, 1.0, H.data(), n);
    result.x = toRowMajor(H, n);
    result.lagrangeMultipliers = toRowMajor(L, p);
}

/* ----------------------------------------------------------------------------- Gauss-Seidel */

/* Gauss-Seidel (SOR) on G y = h, G n x n symmetric positive semidefinite (column-major, full). */
void gaussSeidel(const Mat& G, const Mat& H, Mat& X, const LeastSquaresOptions& options, LeastSquaresResult& result, const char* what) {
    int n = G.rows, nrhs = H.cols;
    for (int i = 0; i < n; i++)
        if (!(G(i, i) > 0)) {
            stringstream msg;
            msg << prefix(options) << "zero diagonal element " << i << " of the normal matrix: column " << i
                << " of A (of A restricted to the null space of C) is zero, so A is rank deficient";
            throw OpenMMException(msg.str());
        }
    // The sweeps converge for a singular G too, to one of many solutions: the rank is checked as Cholesky checks it,
    // on a copy.
    Mat check = G;
    choleskyFactor(check, n, options, result, what);
    vector<double> r(n);
    const double omega = options.relaxation;
    int maxIterationsUsed = 0;
    double worst = 0.0;
    for (int k = 0; k < nrhs; k++) {
        const double* h = &H.v[(size_t) k * n];
        double* x = &X.v[(size_t) k * n];
        double hnorm = dnrm2_(&n, h, &ONE);
        if (hnorm == 0.0) {
            std::fill(x, x + n, 0.0);
            continue;
        }
        auto relativeResidual = [&]() {
            double one = 1.0, minusOne = -1.0;
            std::copy(h, h + n, r.begin());
            dgemv_("N", &n, &n, &minusOne, G.data(), &n, x, &ONE, &one, r.data(), &ONE, 1);
            return dnrm2_(&n, r.data(), &ONE) / hnorm;
        };
        double res = relativeResidual();
        int it = 0;
        while (!(res <= options.tolerance)) {
            if (it >= options.maxIterations || !std::isfinite(res)) {
                stringstream msg;
                msg << prefix(options) << "Gauss-Seidel did not converge in " << it << " iterations (relative normal-equation residual "
                    << res << " > tolerance " << options.tolerance << ", right-hand side " << k
                    << "); cond(A^T A) is too large for the iteration, raise maxIterations or use QR or Cholesky";
                throw OpenMMException(msg.str());
            }
            for (int i = 0; i < n; i++) {
                const double s = h[i] - ddot_(&n, &G.v[(size_t) i * n], &ONE, x, &ONE); // column i = row i (symmetric)
                x[i] += omega * s / G.v[i + (size_t) i * n];
            }
            it++;
            res = relativeResidual();
        }
        maxIterationsUsed = max(maxIterationsUsed, it);
        worst = max(worst, res);
    }
    result.iterations = maxIterationsUsed;
    result.relativeNormalResidual = worst;
}

void solveGaussSeidel(const LeastSquaresProblem& pr, const LeastSquaresOptions& options, LeastSquaresResult& result) {
    int n = pr.n, nrhs = pr.nrhs, p = pr.p;
    Mat G, H;
    normalEquations(pr, options, G, H, true);
    Mat X0(n, nrhs);
    if (!options.initialGuess.empty())
        X0 = fromRowMajor(options.initialGuess.data(), n, nrhs);
    if (p == 0) {
        gaussSeidel(G, H, X0, options, result, "A^T A");
        result.x = toRowMajor(X0, n);
        return;
    }
    // Null-space reduction: with Q from the QR of C^T, x = Q [W; y] and
    // (Q^T G Q)_22 y = (Q^T h)_2 - (Q^T G Q)_21 W.
    ConstraintBasis cb = constraintBasis(pr, options);
    const double* ct = cb.Ct.data();
    applyQ('L', 'T', n, n, p, ct, n, cb.tau, G.data(), n);
    applyQ('R', 'N', n, n, p, ct, n, cb.tau, G.data(), n);
    applyQ('L', 'T', n, nrhs, p, ct, n, cb.tau, H.data(), n); // Q^T h
    int q = n - p;
    Mat Y(q, nrhs);
    if (q > 0) {
        Mat G22(q, q), H2(q, nrhs);
        for (int j = 0; j < q; j++)
            for (int i = 0; i < q; i++)
                G22(i, j) = G(p + i, p + j);
        for (int k = 0; k < nrhs; k++)
            for (int i = 0; i < q; i++)
                H2(i, k) = H(p + i, k);
        gemm('N', 'N', q, nrhs, p, -1.0, &G.v[p], n, cb.W.data(), p, 1.0, H2.data(), q);
        if (!options.initialGuess.empty()) {
            applyQ('L', 'T', n, nrhs, p, ct, n, cb.tau, X0.data(), n);
            for (int k = 0; k < nrhs; k++)
                for (int i = 0; i < q; i++)
                    Y(i, k) = X0(p + i, k);
        }
        gaussSeidel(G22, H2, Y, options, result, "the reduced normal matrix (A Z)^T (A Z)");
    }
    Mat X = fromBasis(cb, cb.W, &Y, n, nrhs);
    result.x = toRowMajor(X, n);
    // lambda = R^-1 [(Q^T h)_1 - (Q^T G Q)_11 W - (Q^T G Q)_12 y].
    Mat L(p, nrhs);
    for (int k = 0; k < nrhs; k++)
        for (int i = 0; i < p; i++)
            L(i, k) = H(i, k);
    gemm('N', 'N', p, nrhs, p, -1.0, G.data(), n, cb.W.data(), p, 1.0, L.data(), p);
    if (q > 0)
        gemm('N', 'N', p, nrhs, q, -1.0, &G.v[(size_t) p * n], n, Y.data(), q, 1.0, L.data(), p);
    int info;
    dtrtrs_("U", "N", "N", &p, &nrhs, ct, &n, L.data(), &p, &info, 1, 1, 1);
    lapackCheck(info, "dtrtrs");
    result.lagrangeMultipliers = toRowMajor(L, p);
}

} // namespace

void ReferenceSolveLeastSquaresKernel::invertSymmetricPositiveDefinite(int n, vector<double>& G, const LeastSquaresOptions& options,
                                                                       LeastSquaresResult& result) {
    result.precision = "double";
    result.rank = n;
    result.rankDeficient = false;
    result.iterations = 0;
    Mat M;
    M.rows = M.cols = n;
    M.v = std::move(G);
    choleskyFactor(M, n, options, result, "the matrix to invert", false);
    inverseFromFactor(M, n);
    result.x = std::move(M.v);
}

void ReferenceSolveLeastSquaresKernel::solve(const LeastSquaresProblem& problem, const LeastSquaresOptions& options,
                                             LeastSquaresResult& result) {
    result.precision = "double";
    result.rank = problem.n - problem.p;
    result.rankDeficient = false;
    result.iterations = 0;
    switch (options.method) {
    case LeastSquaresMethod::QR:
        solveQR(problem, options, result);
        break;
    case LeastSquaresMethod::Gauss:
        solveGauss(problem, options, result);
        break;
    case LeastSquaresMethod::Cholesky:
        solveCholesky(problem, options, result);
        break;
    case LeastSquaresMethod::GaussSeidel:
        solveGaussSeidel(problem, options, result);
        break;
    }
}

} // namespace OpenMMDFT
