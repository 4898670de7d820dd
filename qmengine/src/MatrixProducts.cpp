// The host's side of MatrixProducts: held matrices kept as Eigen matrices, multiplied by the host's BLAS, and the
// host's products as a MatrixProducts of their own (MatrixProducts.h).
#include "openmmdft/qm/MatrixProducts.h"
#include <openmm/OpenMMException.h>
#include <limits>
#include <string>

namespace OpenMMDFT {
namespace QM {

namespace {

/** A held matrix that is a host matrix. */
class HostHeld : public HeldMatrix {
public:
    explicit HostHeld(Eigen::MatrixXd value) : HeldMatrix((int) value.rows(), (int) value.cols()), value(std::move(value)) {}
    const Eigen::MatrixXd value;
};

/** The host matrix of a held matrix that the host made: those of another MatrixProducts are not readable here. */
const Eigen::MatrixXd& hostValue(const Held& A) {
    const HostHeld* host = dynamic_cast<const HostHeld*>(A.get());
    if (host == nullptr)
        throw OpenMM::OpenMMException("QM: a matrix held by one MatrixProducts given to another (internal error)");
    return host->value;
}

class HostMatrixProducts : public MatrixProducts {
public:
    Eigen::MatrixXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB) const override {
        return QM::product(A, transposeA, B, transposeB);
    }
    Eigen::MatrixXd congruence(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const override {
        return QM::congruence(A, B);
    }
    double minimumFlops() const override {
        return std::numeric_limits<double>::infinity();  // productOn never sends a product here: it stays on the host anyway
    }
    size_t storedBytes() const override {
        return 0;
    }
    long long productsRun() const override {
        return 0;
    }
    const char* name() const override {
        return "host";
    }
};

} // namespace

Held MatrixProducts::hold(const Eigen::MatrixXd& A) const {
    return std::make_shared<HostHeld>(A);
}

Held MatrixProducts::block(const Held& A, int row, int col, int rows, int cols) const {
    if (row < 0 || col < 0 || rows < 0 || cols < 0 || row + rows > A->rows() || col + cols > A->cols())
        throw OpenMM::OpenMMException("QM: a block outside its held matrix (internal error)");
    return std::make_shared<HostHeld>(hostValue(A).block(row, col, rows, cols));
}

Held MatrixProducts::multiply(const Held& A, bool transposeA, const Held& B, bool transposeB, const Held& added,
                              bool subtract) const {
    Eigen::MatrixXd C = QM::product(hostValue(A), transposeA, hostValue(B), transposeB);
    if (added) {
        const Eigen::MatrixXd& a = hostValue(added);
        if (a.rows() != C.rows() || a.cols() != C.cols())
            throw OpenMM::OpenMMException("QM: a held product and its added matrix differ in shape (internal error)");
        C = subtract ? Eigen::MatrixXd(a - C) : Eigen::MatrixXd(a + C);
    }
    return std::make_shared<HostHeld>(std::move(C));
}

Eigen::MatrixXd MatrixProducts::fetch(const Held& A) const {
    return hostValue(A);
}

const MatrixProducts& hostMatrixProducts() {
    static const HostMatrixProducts host;
    return host;
}

} // namespace QM
} // namespace OpenMMDFT
