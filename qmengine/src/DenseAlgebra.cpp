#include "openmmdft/qm/DenseAlgebra.h"
#include <openmm/OpenMMException.h>
#include <string>
#include <vector>

extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c, const int* ldc,
            size_t, size_t);
void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* lda, const double* x,
            const int* incx, const double* beta, double* y, const int* incy, size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
}

namespace OpenMMDFT {
namespace QM {

Eigen::MatrixXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB) {
    const int m = transposeA ? A.cols() : A.rows(), k = transposeA ? A.rows() : A.cols();
    const int n = transposeB ? B.rows() : B.cols(), kb = transposeB ? B.cols() : B.rows();
    if (k != kb)
        throw OpenMM::OpenMMException("QM: product of matrices with mismatched inner dimensions (internal error)");
    Eigen::MatrixXd C(m, n);
    if (m == 0 || n == 0)
        return C;
    if (k == 0) {
        C.setZero();
        return C;
    }
    const double one = 1, zero = 0;
    const int lda = std::max<int>(1, A.rows()), ldb = std::max<int>(1, B.rows()), ldc = m;
    dgemm_(transposeA ? "T" : "N", transposeB ? "T" : "N", &m, &n, &k, &one, A.data(), &lda, B.data(), &ldb, &zero, C.data(), &ldc, 1, 1);
    return C;
}

Eigen::VectorXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::VectorXd& x) {
    const int m = A.rows(), n = A.cols();
    if ((transposeA ? m : n) != x.size())
        throw OpenMM::OpenMMException("QM: matrix-vector product with mismatched dimensions (internal error)");
    Eigen::VectorXd y = Eigen::VectorXd::Zero(transposeA ? n : m);
    if (m == 0 || n == 0)
        return y;
    const double one = 1, zero = 0;
    const int lda = m, inc = 1;
    dgemv_(transposeA ? "T" : "N", &m, &n, &one, A.data(), &lda, x.data(), &inc, &zero, y.data(), &inc, 1);
    return y;
}

Eigen::MatrixXd congruence(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
    return product(B, true, product(A, false, B, false), false);
}

void symmetricEigensystem(const Eigen::MatrixXd& A, Eigen::VectorXd& values, Eigen::MatrixXd& vectors) {
    const int n = A.rows();
    if (A.cols() != n)
        throw OpenMM::OpenMMException("QM: eigensystem of a non-square matrix (internal error)");
    vectors = A;
    values.resize(n);
    if (n == 0)
        return;
    int info = 0, lwork = -1, liwork = -1, iworkSize = 0;
    double workSize = 0;
    dsyevd_("V", "L", &n, vectors.data(), &n, values.data(), &workSize, &lwork, &iworkSize, &liwork, &info, 1, 1);
    lwork = (int) workSize;
    liwork = iworkSize;
    std::vector<double> work(std::max(1, lwork));
    std::vector<int> iwork(std::max(1, liwork));
    dsyevd_("V", "L", &n, vectors.data(), &n, values.data(), work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
    if (info != 0)
        throw OpenMM::OpenMMException("QM: the symmetric eigensolver (LAPACK dsyevd) failed with info = " + std::to_string(info) +
                                      (info > 0 ? " (no convergence: are the matrix elements finite?)" : ""));
}

} // namespace QM
} // namespace OpenMMDFT
