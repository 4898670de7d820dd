#ifndef OPENMMDFT_COMMONMATRIXPRODUCTS_H_
#define OPENMMDFT_COMMONMATRIXPRODUCTS_H_

#include "KeptUploads.h"
#include "openmmdft/qm/MatrixProducts.h"
#include "CommonQMMMKernelSources.h"
#include "LeastSquaresProgram.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeKernel.h"
#include <map>
#include <memory>
#include <string>

namespace OpenMMDFT {

/** The products' program: the least-squares kernels' tiled product (double) and the held matrices' block copy. */
inline std::string matrixProductsProgramSource() {
    return matrixProductProgramSource() + CommonQMMMKernelSources::qmMatrixBlocks;
}

/**
 * The SCF's products of basis-sized matrices on the device (QM::MatrixProducts), with the tiled product of the
 * least-squares kernels (leastsquares/kernels/lsqGemm.cc) in double precision: for each product the two matrices go
 * up, the product comes back; a congruence B^T A B keeps A B on the device. Inputs go into arrays that grow to the
 * largest product seen; results into one array per result size (a download takes a whole array), at most
 * MAX_RESULT_SIZES sizes (then they are released and made again): an SCF uses a handful (n x n, n x n_occ, ...).
 * The recycled DIIS pairs stay on the host: kept in device memory from step to step, their products there took
 * 0.065-0.14 s per MD step of 24 QM waters on an H200 against 0.020 s on its host's 16 cores (docs/PERFORMANCE.md).
 * Held matrices (QM::HeldMatrix) live in arrays of their exact size, taken from spare ones of that size and given
 * back when the last held matrix on them goes (at most MAX_SPARE_ARRAYS kept), so that an SCF's chains allocate
 * nothing after its first iterations; blocks are views of their matrix's array (offset and leading dimension).
 * Used from the SCF's thread only (the device queue is not shared between threads).
 */
class CommonMatrixProducts : public QM::MatrixProducts {
public:
    /** A held matrix's storage as kernels outside the products read and write it: element (i, j) at
     *  offset + i + j ld of array. */
    struct DeviceStorage {
        OpenMM::ComputeArray* array = nullptr;
        int offset = 0, ld = 1;
    };
    /** Where A is held by a CommonMatrixProducts on the context cc: its storage; false where it is held elsewhere (the
     *  host, another context). */
    static bool storageOf(const QM::Held& A, const OpenMM::ComputeContext& cc, DeviceStorage& storage);
    /** A new held matrix of rows x cols beside A (held as storageOf() found it: by the same products, from their
     *  arrays), for a kernel outside the products to fill; its storage (offset 0, ld rows) in `storage`. */
    static QM::Held heldBeside(const QM::Held& A, int rows, int cols, DeviceStorage& storage);
    /** minimumFlops: products smaller than this run on the host (productOn). */
    CommonMatrixProducts(OpenMM::ComputeContext& cc, double minimumFlops = DEFAULT_MINIMUM_FLOPS);
    Eigen::MatrixXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB) const override;
    Eigen::MatrixXd congruence(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const override;
    double minimumFlops() const override {
        return smallest;
    }
    size_t storedBytes() const override;
    long long productsRun() const override {
        return run;
    }
    const char* name() const override {
        return "device";
    }
    QM::Held hold(const Eigen::MatrixXd& A) const override;
    QM::Held block(const QM::Held& A, int row, int col, int rows, int cols) const override;
    QM::Held multiply(const QM::Held& A, bool transposeA, const QM::Held& B, bool transposeB, const QM::Held& added = nullptr,
                      bool subtract = false) const override;
    Eigen::MatrixXd fetch(const QM::Held& A) const override;
    /**
     * Below a 2 x 128^3 product (4 MFLOP) the host wins: on a GPU machine's host such a product takes about 0.1-0.2 ms
     * (20-45 GFLOPS, the lease host's OpenBLAS on 16 threads), the device's launch, three transfers and the wait about
     * as much.
     */
    static constexpr double DEFAULT_MINIMUM_FLOPS = 4.2e6;
    static constexpr int MAX_RESULT_SIZES = 16;
    static constexpr int MAX_SPARE_ARRAYS = 64;
private:
    /** An array of exactly this many doubles for a held matrix, from the spare ones where one fits. */
    std::shared_ptr<OpenMM::ComputeArray> heldArray(size_t elements) const;
    /** dst block = src block (rows x cols; offsets and leading dimensions of column-major storage). */
    void copyBlock(int rows, int cols, OpenMM::ComputeArray& src, int srcOffset, int srcLd, OpenMM::ComputeArray& dst, int dstOffset,
                   int dstLd) const;
    /** The product kernel, compiled on first use. */
    void compile() const;
    /** array holds at least elements of T (grown, contents lost, where it holds fewer). */
    template <class T = double>
    void reserve(OpenMM::ComputeArray& array, size_t elements, const char* name) const;
    /** The product kernel compiled, A in left and B in right (grown where they are smaller). */
    void uploadOperands(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const;
    /** The array that a result of this many elements is downloaded from. */
    OpenMM::ComputeArray& resultArray(size_t elements) const;
    /** C (m x n, column-major, leading dimension m) = op(A) op(B) for column-major A and B with leading dimensions lda, ldb. */
    void multiply(int m, int n, int k, OpenMM::ComputeArray& A, int lda, bool transposeA, OpenMM::ComputeArray& B, int ldb,
                  bool transposeB, OpenMM::ComputeArray& C) const {
        multiply(m, n, k, A, 0, lda, transposeA, B, 0, ldb, transposeB, C, false, false);
    }
    /** The same with offsets into A and B; accumulate: C += op(A) op(B) (C -= where subtract) instead of C =. */
    void multiply(int m, int n, int k, OpenMM::ComputeArray& A, int aOffset, int lda, bool transposeA, OpenMM::ComputeArray& B,
                  int bOffset, int ldb, bool transposeB, OpenMM::ComputeArray& C, bool accumulate, bool subtract) const;
    OpenMM::ComputeContext& cc;
    const double smallest;
    mutable OpenMM::ComputeKernel kernel, copyKernel;
    mutable std::multimap<size_t, std::unique_ptr<OpenMM::ComputeArray>> spare;  // held matrices' arrays not in use
    mutable OpenMM::ComputeArray left, right, middle;
    mutable std::map<size_t, OpenMM::ComputeArray> results;
    mutable long long run = 0;
    // The held matrices' host copies (hold() uploads without blocking), until a download on the same queue has returned.
    mutable KeptUploads kept;
};

} // namespace OpenMMDFT

#endif
