#include "openmmdft/qm/XCBackend.h"
#include "WallClock.h"

namespace OpenMMDFT {
namespace QM {

std::unique_ptr<PointChargeMatrixInFlight> PointChargeEvaluator::startMatrix(const ThreeCentreTask& task,
                                                                             const std::vector<double>& weights) const {
    Eigen::MatrixXd cartesian;
    if (!matrix(task, weights, cartesian))
        return nullptr;
    return deferredWork<Eigen::MatrixXd>([cartesian] { return cartesian; });  // computed already, handed on
}

std::unique_ptr<XCComputeInFlight> XCBackend::startCompute(const Eigen::MatrixXd& density, const Eigen::MatrixXd* factor) {
    if (factor == nullptr)
        return deferredWork<XCContribution>([this, density] { return compute(density, nullptr); });
    return deferredWork<XCContribution>([this, density, orbitals = *factor] { return compute(density, &orbitals); });
}

std::unique_ptr<XCGradientInFlight> XCBackend::startGradient(const Eigen::MatrixXd& density, bool gridResponse) {
    return deferredWork<Eigen::MatrixXd>([this, density, gridResponse] { return gradient(density, gridResponse); });
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
