#pragma once
// Where the SCF's products of basis-sized matrices run. Every SCF iteration of an MD step multiplies matrices of the
// size of the basis (the error FDS - SDF, the Fock matrix in the orbitals, the orbital rotations, the Coulomb
// response, the density from the occupied orbitals): about 1.2 GFLOP per iteration for 24 waters in DZVP. A GPU
// machine's host runs these products at a few tens of GFLOPS (16 threads of OpenBLAS on matrices of a few hundred
// rows: measured on an H200 lease host, an orbital rotation of 456 functions took 11 ms on 16 threads and 29 ms on
// one), the GPU at several TFLOPS, so that even with the matrices crossing the bus for each product it pays. The
// products stay the same: op(A) op(B), in double precision; only where they run differs.
#include "openmmdft/qm/DenseAlgebra.h"
#include <Eigen/Dense>
#include <cstddef>
#include <memory>

namespace OpenMMDFT {
namespace QM {

/**
 * A matrix held where a MatrixProducts runs its products, so that a chain of products keeps its intermediates there:
 * only the operands that change and the results the host needs cross the bus. (Each product of basis-sized matrices
 * sent to a GPU on its own took 0.14-0.5 ms on an H200 lease, mostly its matrices crossing the bus; an SCF iteration
 * of 24 waters in DZVP makes about 40 of them, about 90 MB up and down.) Made by MatrixProducts::hold, block and
 * multiply, read by fetch; it must not outlive the MatrixProducts that made it.
 */
class HeldMatrix {
public:
    HeldMatrix(int rows, int cols) : rows_(rows), cols_(cols) {}
    virtual ~HeldMatrix() = default;
    int rows() const {
        return rows_;
    }
    int cols() const {
        return cols_;
    }
private:
    int rows_, cols_;
};
using Held = std::shared_ptr<const HeldMatrix>;

class MatrixProducts {
public:
    virtual ~MatrixProducts() = default;
    /** op(A) op(B) (op = transpose where asked), as product() of DenseAlgebra.h computes it, run here. */
    virtual Eigen::MatrixXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB) const = 0;
    /** B^T A B, as congruence() of DenseAlgebra.h computes it (B^T (A B): A B stays here), run here. */
    virtual Eigen::MatrixXd congruence(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const = 0;
    /** Products of at least this many floating-point operations (2 m n k) are worth running here (productOn); smaller
     *  ones cost less on the host than their matrices' trip here and back. */
    virtual double minimumFlops() const = 0;
    /** Bytes held here (0: nothing beyond the host's own). */
    virtual size_t storedBytes() const = 0;
    /** How many products have run here so far (a congruence counts two): for reports and tests. */
    virtual long long productsRun() const = 0;
    /** Where the products run, for reports: "host" or "device". */
    virtual const char* name() const = 0;
    /* Chains of products on held matrices. Every product of a chain runs here, whatever its size (its operands are
     * here already). The defaults hold the matrices on the host and multiply them with its BLAS, as product() does. */
    /** A copy of A held here. */
    virtual Held hold(const Eigen::MatrixXd& A) const;
    /** Rows [row, row + rows) and columns [col, col + cols) of A (a view of A's storage where that is possible). */
    virtual Held block(const Held& A, int row, int col, int rows, int cols) const;
    /** op(A) op(B), with `added` plus it (minus it where subtract) where given: added +- op(A) op(B), rounded as the
     *  host's added + product(...) is. */
    virtual Held multiply(const Held& A, bool transposeA, const Held& B, bool transposeB, const Held& added = nullptr,
                          bool subtract = false) const;
    /** A on the host. */
    virtual Eigen::MatrixXd fetch(const Held& A) const;
};

/** Every call forwarded to another MatrixProducts: a base for wrappers that change a part of it (the tests' and
 *  benchmarks' routes). */
class ForwardedMatrixProducts : public MatrixProducts {
public:
    explicit ForwardedMatrixProducts(const MatrixProducts& there) : there(there) {}
    Eigen::MatrixXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB) const override {
        return there.product(A, transposeA, B, transposeB);
    }
    Eigen::MatrixXd congruence(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const override {
        return there.congruence(A, B);
    }
    double minimumFlops() const override {
        return there.minimumFlops();
    }
    size_t storedBytes() const override {
        return there.storedBytes();
    }
    long long productsRun() const override {
        return there.productsRun();
    }
    const char* name() const override {
        return there.name();
    }
    Held hold(const Eigen::MatrixXd& A) const override {
        return there.hold(A);
    }
    Held block(const Held& A, int row, int col, int rows, int cols) const override {
        return there.block(A, row, col, rows, cols);
    }
    Held multiply(const Held& A, bool transposeA, const Held& B, bool transposeB, const Held& added = nullptr,
                  bool subtract = false) const override {
        return there.multiply(A, transposeA, B, transposeB, added, subtract);
    }
    Eigen::MatrixXd fetch(const Held& A) const override {
        return there.fetch(A);
    }
protected:
    const MatrixProducts& there;
};

/** The host's products (BLAS) as a MatrixProducts, for chains that are too small to be worth a device. */
const MatrixProducts& hostMatrixProducts();

/** Where a chain of products runs: where `products` runs them if it is given and the chain's largest product
 *  (largestFlops, 2 m n k) is worth it there, else on the host. */
inline const MatrixProducts& chainProducts(const MatrixProducts* products, double largestFlops) {
    return products != nullptr && largestFlops >= products->minimumFlops() ? *products : hostMatrixProducts();
}

/** op(A) op(B) where `products` runs them if it is given and the product is large enough for it, else on the host (BLAS). */
inline Eigen::MatrixXd productOn(const MatrixProducts* products, const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B,
                                 bool transposeB) {
    const double flops = 2.0 * (double) A.size() * (double) (transposeB ? B.rows() : B.cols());
    return products != nullptr && flops >= products->minimumFlops() ? products->product(A, transposeA, B, transposeB)
                                                                    : product(A, transposeA, B, transposeB);
}

/** B^T A B where `products` runs it if it is given and large enough for it, else on the host. */
inline Eigen::MatrixXd congruenceOn(const MatrixProducts* products, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
    const double flops = 2.0 * (double) A.size() * (double) B.cols() + 2.0 * (double) B.size() * (double) B.cols();
    return products != nullptr && flops >= products->minimumFlops() ? products->congruence(A, B) : congruence(A, B);
}

} // namespace QM
} // namespace OpenMMDFT
