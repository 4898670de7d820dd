#include "openmmdft/qm/XCBackend.h"
#include "WallClock.h"

namespace OpenMMDFT {
namespace QM {

namespace {

/** The gradient computed where it is taken: the host's cores have no other work to overlap it with. */
class DeferredXCGradient : public XCGradientInFlight {
public:
    DeferredXCGradient(XCBackend& backend, const Eigen::MatrixXd& density, bool gridResponse)
        : backend_(backend), density_(density), gridResponse_(gridResponse) {
    }
    Eigen::MatrixXd finish() override {
        return backend_.gradient(density_, gridResponse_);
    }
private:
    XCBackend& backend_;
    Eigen::MatrixXd density_;
    bool gridResponse_;
};

/** The XC matrix computed where it is taken, from copies of the density and its factor. */
class DeferredXCCompute : public XCComputeInFlight {
public:
    DeferredXCCompute(XCBackend& backend, const Eigen::MatrixXd& density, const Eigen::MatrixXd* factor)
        : backend_(backend), density_(density), haveFactor_(factor != nullptr) {
        if (factor != nullptr)
            factor_ = *factor;
    }
    XCContribution finish() override {
        return backend_.compute(density_, haveFactor_ ? &factor_ : nullptr);
    }
private:
    XCBackend& backend_;
    Eigen::MatrixXd density_, factor_;
    bool haveFactor_;
};

/** A point-charge matrix computed when it was started, handed on. */
class ComputedPointChargeMatrix : public PointChargeMatrixInFlight {
public:
    explicit ComputedPointChargeMatrix(Eigen::MatrixXd matrix) : matrix_(std::move(matrix)) {
    }
    void finish(Eigen::MatrixXd& cartesianMatrix) override {
        cartesianMatrix = std::move(matrix_);
    }
private:
    Eigen::MatrixXd matrix_;
};

} // namespace

std::unique_ptr<PointChargeMatrixInFlight> PointChargeEvaluator::startMatrix(const ThreeCentreTask& task,
                                                                             const std::vector<double>& weights) const {
    Eigen::MatrixXd cartesian;
    if (!matrix(task, weights, cartesian))
        return nullptr;
    return std::unique_ptr<PointChargeMatrixInFlight>(new ComputedPointChargeMatrix(std::move(cartesian)));
}

std::unique_ptr<XCComputeInFlight> XCBackend::startCompute(const Eigen::MatrixXd& density, const Eigen::MatrixXd* factor) {
    return std::unique_ptr<XCComputeInFlight>(new DeferredXCCompute(*this, density, factor));
}

std::unique_ptr<XCGradientInFlight> XCBackend::startGradient(const Eigen::MatrixXd& density, bool gridResponse) {
    return std::unique_ptr<XCGradientInFlight>(new DeferredXCGradient(*this, density, gridResponse));
}

namespace {

class HostXCBackend : public XCBackend {
public:
    explicit HostXCBackend(const XCGeometry& g)
        : geometry_(g),
          integrator_(g.basis, g.grid, g.settings.functional, g.settings.storage, g.settings.grid.blockSize, g.settings.threads,
                      g.settings.grid.maxStoredBasisMiB) {
    }
    XCContribution compute(const Eigen::MatrixXd& density, const Eigen::MatrixXd* factor) override {
        return integrator_.compute(density, factor);
    }
    Eigen::MatrixXd gradient(const Eigen::MatrixXd& density, bool gridResponse) override {
        const QMSettings& s = geometry_.settings;
        timings_.clear();
        if (gridResponse)
            return xcGradient(geometry_.basis, geometry_.grid, geometry_.atoms, s.grid, s.functional, density, s.threads, &timings_);
        const double start = seconds();
        Eigen::MatrixXd G = xcGradientFixedGrid(geometry_.basis, geometry_.grid, s.functional, density, (int) geometry_.atoms.size(),
                                                s.threads);
        timings_["basisAndPoints"] = seconds() - start;
        return G;
    }
    std::map<std::string, double> gradientTimings() const override {
        return timings_;
    }
    size_t storedBytes() const override {
        return integrator_.storedBytes();
    }
    const char* name() const override {
        return "host";
    }
    std::string notice() const override {
        const QMSettings& s = geometry_.settings;
        if (s.storage != BasisFunctionStorage::Precompute || integrator_.numStoredBlocks() == integrator_.numBlocks())
            return "";
        return "Precompute keeps the basis values of " + std::to_string(integrator_.numStoredBlocks()) + " of " +
               std::to_string(integrator_.numBlocks()) + " blocks within the limit of " + std::to_string(s.grid.maxStoredBasisMiB) +
               " MiB (setBasisStorageLimit); the others are recomputed every SCF iteration";
    }
private:
    XCGeometry geometry_;
    XCIntegrator integrator_;
    std::map<std::string, double> timings_;
};

} // namespace

std::unique_ptr<XCBackend> HostXCBackendFactory::create(const XCGeometry& geometry) const {
    return std::unique_ptr<XCBackend>(new HostXCBackend(geometry));
}

} // namespace QM
} // namespace OpenMMDFT
