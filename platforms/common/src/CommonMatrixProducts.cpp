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

/** A matrix held in (a block of) a device array by `owner`: element (i, j) at offset + i + j ld. */
class DeviceHeld : public QM::HeldMatrix {
public:
    DeviceHeld(const CommonMatrixProducts& owner, int rows, int cols, shared_ptr<ComputeArray> array, int offset, int ld)
        : HeldMatrix(rows, cols), owner(owner), array(std::move(array)), offset(offset), ld(ld) {}
    const CommonMatrixProducts& owner;
    const shared_ptr<ComputeArray> array;
    const int offset, ld;
};

const DeviceHeld& deviceHeld(const QM::Held& A) {
    const DeviceHeld* held = dynamic_cast<const DeviceHeld*>(A.get());
    if (held == nullptr)
        throw OpenMMException("QM: a matrix held by one MatrixProducts given to another (internal error)");
    return *held;
}
} // namespace

CommonMatrixProducts::CommonMatrixProducts(ComputeContext& cc, double minimumFlops)
    : cc(cc), smallest(minimumFlops), kept(cc) {
}

void CommonMatrixProducts::compile() const {
    if (kernel)
        return;
    // The least-squares program's tiled product alone, with double inputs and accumulation.
    ComputeProgram program = cc.compileProgram(matrixProductsProgramSource(), leastSquaresProgramDefines(true, true));
    kernel = program->createKernel("matrixProduct");
    for (int i = 0; i < 17; i++)
        kernel->addArg();
    copyKernel = program->createKernel("copyMatrixBlock");
    for (int i = 0; i < 8; i++)
        copyKernel->addArg();
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
    // Without blocking (on CUDA a blocking upload from pageable memory waits for the kernels queued before it): the
    // callers download the result on the same queue before they return, while A and B still live.
    left.uploadSubArray(A.data(), 0, (int) A.size(), false);
    right.uploadSubArray(B.data(), 0, (int) B.size(), false);
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

void CommonMatrixProducts::multiply(int m, int n, int k, ComputeArray& A, int aOffset, int lda, bool transposeA, ComputeArray& B,
                                    int bOffset, int ldb, bool transposeB, ComputeArray& C, bool accumulate, bool subtract) const {
    // C(i, j) = [C(i, j) +-] sum_k op(A)(i, k) op(B)(k, j), every tile computed.
    kernel->setArg(0, m);
    kernel->setArg(1, n);
    kernel->setArg(2, k);
    kernel->setArg(3, (int) subtract);
    kernel->setArg(4, (int) accumulate);
    kernel->setArg(5, A);
    kernel->setArg(6, aOffset);
    kernel->setArg(7, lda);
    kernel->setArg(8, (int) transposeA);
    kernel->setArg(9, B);
    kernel->setArg(10, bOffset);
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
    kept.releaseRead();
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
    kept.releaseRead();
    return C;
}

size_t CommonMatrixProducts::storedBytes() const {
    size_t bytes = 0;
    for (const ComputeArray* array : {&left, &right, &middle})
        if (array->isInitialized())
            bytes += array->getSize() * sizeof(double);
    for (const auto& result : results)
        bytes += result.second.getSize() * sizeof(double);
    for (const auto& array : spare)
        bytes += array.first * sizeof(double);
    return bytes;
}

shared_ptr<ComputeArray> CommonMatrixProducts::heldArray(size_t elements) const {
    elements = max<size_t>(elements, 1);
    unique_ptr<ComputeArray> array;
    auto found = spare.find(elements);
    if (found != spare.end()) {
        array = std::move(found->second);
        spare.erase(found);
    }
    else {
        array.reset(new ComputeArray());
        array->initialize<double>(cc, elements, "qmHeldMatrix");
    }
    // Back to the spare ones when the last held matrix on it goes (while this object lives: see HeldMatrix).
    return shared_ptr<ComputeArray>(array.release(), [this](ComputeArray* released) {
        unique_ptr<ComputeArray> owned(released);
        if ((int) spare.size() < MAX_SPARE_ARRAYS)
            spare.emplace(owned->getSize(), std::move(owned));
        else {
            ContextSelector selector(cc);
            owned.reset();
        }
    });
}

void CommonMatrixProducts::copyBlock(int rows, int cols, ComputeArray& src, int srcOffset, int srcLd, ComputeArray& dst, int dstOffset,
                                     int dstLd) const {
    copyKernel->setArg(0, rows);
    copyKernel->setArg(1, cols);
    copyKernel->setArg(2, src);
    copyKernel->setArg(3, srcOffset);
    copyKernel->setArg(4, srcLd);
    copyKernel->setArg(5, dst);
    copyKernel->setArg(6, dstOffset);
    copyKernel->setArg(7, dstLd);
    copyKernel->execute(rows * cols);
}

QM::Held CommonMatrixProducts::hold(const Eigen::MatrixXd& A) const {
    ContextSelector selector(cc);
    compile();
    shared_ptr<ComputeArray> array = heldArray(A.size());
    // Without blocking, from a host copy kept until the next download (fetch): a chain of products then goes to the
    // device without the host waiting for the kernels queued before each operand.
    if (A.size() > 0)
        array->uploadSubArray(kept.keep(A.data(), (size_t) A.size()), 0, (int) A.size(), false);
    return make_shared<DeviceHeld>(*this, (int) A.rows(), (int) A.cols(), array, 0, max(1, (int) A.rows()));
}

QM::Held CommonMatrixProducts::block(const QM::Held& A, int row, int col, int rows, int cols) const {
    const DeviceHeld& held = deviceHeld(A);
    if (row < 0 || col < 0 || rows < 0 || cols < 0 || row + rows > A->rows() || col + cols > A->cols())
        throw OpenMMException("QM: a block outside its held matrix (internal error)");
    return make_shared<DeviceHeld>(*this, rows, cols, held.array, held.offset + row + col * held.ld, held.ld);
}

QM::Held CommonMatrixProducts::multiply(const QM::Held& A, bool transposeA, const QM::Held& B, bool transposeB, const QM::Held& added,
                                        bool subtract) const {
    const DeviceHeld &a = deviceHeld(A), &b = deviceHeld(B);
    const int m = transposeA ? A->cols() : A->rows(), k = transposeA ? A->rows() : A->cols();
    const int n = transposeB ? B->rows() : B->cols();
    if (k != (transposeB ? B->cols() : B->rows()))
        throw OpenMMException("QM: product of held matrices with mismatched inner dimensions (internal error)");
    if (added && (added->rows() != m || added->cols() != n))
        throw OpenMMException("QM: a held product and its added matrix differ in shape (internal error)");
    ContextSelector selector(cc);
    compile();
    shared_ptr<ComputeArray> out = heldArray((size_t) m * n);
    if (m > 0 && n > 0) {
        if (added) {
            const DeviceHeld& first = deviceHeld(added);
            copyBlock(m, n, *first.array, first.offset, first.ld, *out, 0, m);
        }
        else if (k == 0)
            cc.clearBuffer(*out);
        if (k > 0)
            multiply(m, n, k, *a.array, a.offset, a.ld, transposeA, *b.array, b.offset, b.ld, transposeB, *out, (bool) added, subtract);
    }
    return make_shared<DeviceHeld>(*this, m, n, out, 0, max(1, m));
}

bool CommonMatrixProducts::storageOf(const QM::Held& A, const ComputeContext& cc, DeviceStorage& storage) {
    const DeviceHeld* held = dynamic_cast<const DeviceHeld*>(A.get());
    if (held == nullptr || &held->owner.cc != &cc)
        return false;
    storage.array = held->array.get();
    storage.offset = held->offset;
    storage.ld = held->ld;
    return true;
}

QM::Held CommonMatrixProducts::heldBeside(const QM::Held& A, int rows, int cols, DeviceStorage& storage) {
    const CommonMatrixProducts& owner = deviceHeld(A).owner;
    ContextSelector selector(owner.cc);
    shared_ptr<ComputeArray> array = owner.heldArray((size_t) rows * cols);
    storage.array = array.get();
    storage.offset = 0;
    storage.ld = max(1, rows);
    return make_shared<DeviceHeld>(owner, rows, cols, array, 0, storage.ld);
}

Eigen::MatrixXd CommonMatrixProducts::fetch(const QM::Held& A) const {
    const DeviceHeld& held = deviceHeld(A);
    Eigen::MatrixXd out(A->rows(), A->cols());
    if (out.size() == 0)
        return out;
    ContextSelector selector(cc);
    if (held.offset == 0 && held.ld == A->rows() && held.array->getSize() == (size_t) out.size())
        held.array->download(out.data());
    else {
        // A block: made whole first (a download takes a whole array).
        compile();
        shared_ptr<ComputeArray> whole = heldArray(out.size());
        copyBlock(A->rows(), A->cols(), *held.array, held.offset, held.ld, *whole, 0, A->rows());
        whole->download(out.data());
    }
    kept.releaseRead();
    return out;
}

} // namespace OpenMMDFT
