#include "CommonMatrixProducts.h"
#include "LeastSquaresProgram.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>

using namespace OpenMM;
using namespace std;

namespace OpenMMDFT {

namespace {
/** The least-squares kernels' tile: 64 x 64 outputs per work group of 256 work items (lsqGemm.cc). */
const int TILE = 64, GROUP = 256;
} // namespace

CommonMatrixProducts::CommonMatrixProducts(ComputeContext& cc, double minimumFlops) : cc(cc), smallest(minimumFlops) {
}

void CommonMatrixProducts::compile() const {
    if (kernel)
        return;
    // The least-squares program's tiled product alone, with double inputs and accumulation.
    kernel = cc.compileProgram(matrixProductProgramSource(), leastSquaresProgramDefines(true, true))->createKernel("matrixProduct");
    for (int i = 0; i < 17; i++)
        kernel->addArg();
}

template <class T>
void CommonMatrixProducts::reserve(ComputeArray& array, size_t elements, const char* name) const {
    elements = max<size_t>(elements, 1);
    if (!array.isInitialized() || array.getSize() < elements) {
        if (array.isInitialized())
            array.resize(elements);
        else
            array.initialize<T>(cc, elements, name);
    }
}

void CommonMatrixProducts::uploadOperands(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const {
    compile();
    reserve(left, A.size(), "qmMatrixProductLeft");
    reserve(right, B.size(), "qmMatrixProductRight");
    left.uploadSubArray(A.data(), 0, (int) A.size());
    right.uploadSubArray(B.data(), 0, (int) B.size());
}

ComputeArray& CommonMatrixProducts::resultArray(size_t elements) const {
    elements = max<size_t>(elements, 1);
    auto found = results.find(elements);
    if (found != results.end())
        return found->second;
    if ((int) results.size() >= MAX_RESULT_SIZES)
        results.clear();  // sizes of earlier geometries or molecules: none of them is in use between calls
    ComputeArray& array = results[elements];
    array.initialize<double>(cc, elements, "qmMatrixProductResult");
    return array;
}

void CommonMatrixProducts::multiply(int m, int n, int k, ComputeArray& A, int lda, bool transposeA, ComputeArray& B, int ldb,
                                    bool transposeB, ComputeArray& C) const {
    // C(i, j) = sum_k op(A)(i, k) op(B)(k, j): neither subtracted nor accumulated, every tile computed.
    kernel->setArg(0, m);
    kernel->setArg(1, n);
    kernel->setArg(2, k);
    kernel->setArg(3, 0);
    kernel->setArg(4, 0);
    kernel->setArg(5, A);
    kernel->setArg(6, 0);
    kernel->setArg(7, lda);
    kernel->setArg(8, (int) transposeA);
    kernel->setArg(9, B);
    kernel->setArg(10, 0);
    kernel->setArg(11, ldb);
    kernel->setArg(12, (int) transposeB);
    kernel->setArg(13, C);
    kernel->setArg(14, 0);
    kernel->setArg(15, m);
    kernel->setArg(16, 0);
    const int tiles = ((m + TILE - 1) / TILE) * ((n + TILE - 1) / TILE);
    kernel->execute(tiles * GROUP, GROUP);
    run++;
}

Eigen::MatrixXd CommonMatrixProducts::product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB) const {
    int k;
    Eigen::MatrixXd C = QM::productResult(A, transposeA, B, transposeB, k);
    const int m = C.rows(), n = C.cols();
    if (m == 0 || n == 0 || k == 0)
        return C;
    ContextSelector selector(cc);
    uploadOperands(A, B);
    ComputeArray& out = resultArray(C.size());
    multiply(m, n, k, left, (int) A.rows(), transposeA, right, (int) B.rows(), transposeB, out);
    out.download(C.data());
    return C;
}

Eigen::MatrixXd CommonMatrixProducts::congruence(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const {
    const int n = A.rows(), m = B.cols();
    if (A.cols() != n || B.rows() != n)
        throw OpenMMException("QM: congruence of a matrix that is not square or does not match (internal error)");
    Eigen::MatrixXd C(m, m);
    if (m == 0)
        return C;
    if (n == 0) {
        C.setZero();
        return C;
    }
    ContextSelector selector(cc);
    uploadOperands(A, B);
    reserve(middle, (size_t) n * m, "qmMatrixProductMiddle");
    multiply(n, m, n, left, n, false, right, n, false, middle);  // A B (n x m)
    ComputeArray& out = resultArray(C.size());
    multiply(m, m, n, right, n, true, middle, n, false, out);     // B^T (A B)
    out.download(C.data());
    return C;
}

size_t CommonMatrixProducts::storedBytes() const {
    size_t bytes = 0;
    for (const ComputeArray* array : {&left, &right, &middle})
        if (array->isInitialized())
            bytes += array->getSize() * sizeof(double);
    for (const auto& result : results)
        bytes += result.second.getSize() * sizeof(double);
    return bytes;
}

} // namespace OpenMMDFT
