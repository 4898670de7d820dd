#ifndef OPENMMDFT_COMMONXCBACKEND_H_
#define OPENMMDFT_COMMONXCBACKEND_H_

#include "openmmdft/qm/XCBackend.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeProgram.h"
#include "ThreeCentreProgram.h"
#include "CommonMatrixProducts.h"
#include "DeviceArrayPool.h"
#include "XCProgram.h"
#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <utility>

namespace OpenMMDFT {

/** The inverse of a symmetric positive definite matrix on one Context's device; false (inverse untouched) where it
 *  cannot make it, and the caller inverts on the host. It may keep device memory until it is destroyed. */
typedef std::function<bool(const Eigen::MatrixXd& A, Eigen::MatrixXd& inverse)> SymmetricInverse;

/** A platform's maker of such inverses for a Context (CUDA: cuSOLVER). */
typedef SymmetricInverse (*DeviceSymmetricInverse)(OpenMM::ComputeContext& cc);

/**
 * The QM engine's XC back end on the GPU platforms (OpenCL, CUDA), written once against OpenMM's
 * Compute API (kernels/qmXC.cc). Per geometry the grid's batches (points, weights, significant shells)
 * and the basis are uploaded; per SCF iteration the density matrix goes up, basis values (kept on the
 * device with Precompute, evaluated again with Recompute), densities, the functional and the per-batch
 * XC matrices are computed on the device and reduced there into the AO matrix, and the XC matrix and
 * one energy and electron count per batch come back. No host synchronization between the kernels of
 * an iteration. Double precision throughout (the QM accumulations are always double).
 *
 * Precompute keeps every batch's basis values while they fit in settings.grid.maxStoredBasisMiB;
 * otherwise (and with Recompute) batches are evaluated in chunks within that budget every iteration.
 * The XC gradient: basis values and gradients, X = Phi D, rho and the functional per point, and the
 * basis-function and point-motion terms on the device (chunks within a fifth of the budget); the
 * per-function and per-point sums come back once per gradient; the partition-weight derivatives run on the
 * device too (up to 128 atoms; beyond, on the host from f = rho eps_xc per point).
 *
 * The factory also computes the raw grid's partition weights on the device for MolecularGrid
 * (PartitionWeightEvaluator): only the atoms, radial and (per shell, as pruned) angular grids go up and the weights
 * come down; and it
 * keeps the density-fitting tensor in device memory for the Coulomb contractions of the SCF iterations, and runs the
 * SCF's products of basis-sized matrices (CommonMatrixProducts).
 */
class CommonXCBackendFactory : public QM::XCBackendFactory, public QM::PartitionWeightEvaluator {
public:
    /** deviceInverse: the platform's maker of inverses for the density fitting's metric (null: the host inverts);
     * partition: how the partition-weight derivatives' kernel takes its cells (the defaults but in tests). */
    explicit CommonXCBackendFactory(OpenMM::ComputeContext& cc, DeviceSymmetricInverse deviceInverse = nullptr,
                                    const XCPartitionSizes& partition = XCPartitionSizes());
    ~CommonXCBackendFactory() override;
    std::unique_ptr<QM::XCBackend> create(const QM::XCGeometry& geometry) const override;
    const QM::PartitionWeightEvaluator* partitionWeights() const override {
        return this;
    }
    void weights(const std::vector<QM::QMAtom>& atoms, const QM::GridSettings& settings, const std::vector<QM::RadialGrid>& radial,
                 const std::vector<std::vector<int>>& angularSizes, std::vector<double>& partition) const override;
    /** The weights on the XC queue, beside what the caller queues next on the default one. */
    std::unique_ptr<QM::PartitionWeightsInFlight> startWeights(const std::vector<QM::QMAtom>& atoms, const QM::GridSettings& settings,
                                                               const std::vector<QM::RadialGrid>& radial,
                                                               const std::vector<std::vector<int>>& angularSizes) const override;
    /** The point-charge gradients (nuclei, MM charges) on the device. */
    const QM::PointChargeEvaluator* pointCharges() const override {
        return charges.get();
    }
    /** B d and B^T c of the density fitting with B in device memory (up to 4 GiB per geometry). */
    std::unique_ptr<QM::DensityFittingContractions> densityFittingContractions() const override;
    /** The SCF's products of basis-sized matrices on the device (CommonMatrixProducts). */
    const QM::MatrixProducts* matrixProducts() const override {
        return products.get();
    }
    bool invertsSymmetricPositiveDefinite() const override {
        return (bool) deviceInverse;
    }
    bool invertSymmetricPositiveDefinite(const Eigen::MatrixXd& A, Eigen::MatrixXd& inverse) const override {
        return deviceInverse && deviceInverse(A, inverse);
    }
    /** Whether the device can run it (double precision); otherwise use the host back end. */
    static bool supported(OpenMM::ComputeContext& cc);
    /** The pool's arrays (every array of the back ends, the density fitting, the point charges and the grid's
     * weights) and the SCF products' (not the metric inverse's solver workspace, made by the platform). */
    size_t deviceBytes() const override {
        return arrayPool->bytesAllocated() + products->storedBytes();
    }
    /** Where the back ends, the density fitting and the point charges take their device arrays from. */
    const DeviceArrayPool& devicePool() const {
        return *arrayPool;
    }
private:
    /** The XC queue (made on first use), or null where everything runs on the default queue (the A/B switch). */
    OpenMM::ComputeQueue ownQueue() const;
    /** The kernels of kernels/qmXC.cc for one functional (0: SVWN5, 1: SVWN_RPA), compiled on first use. */
    OpenMM::ComputeProgram programFor(int index) const;
    /** The kernels of kernels/qmThreeCentre.cc for bases up to these l, compiled once (each MD step's geometry reuses them). */
    OpenMM::ComputeProgram threeCentreProgram(int basisL, int auxL, bool pointCharges) const;
    /** threeCentreProgram as the density fitting and the point charges take it. */
    ThreeCentreProgramSource threeCentreSource() const {
        return [this](int basisL, int auxL, bool pointCharges) { return threeCentreProgram(basisL, auxL, pointCharges); };
    }
    OpenMM::ComputeContext& cc;
    XCPartitionSizes partitionSizes;
    mutable OpenMM::ComputeProgram program[2];
    mutable std::map<std::tuple<int, int, bool>, OpenMM::ComputeProgram> threeCentrePrograms;
    /// The XC back ends' queue of their own (made on first use), so that the device runs the SCF's XC matrices beside
    /// the Coulomb builds and the XC gradients beside the density fitting's and the point charges' gradients, whose
    /// kernels leave much of it idle.
    mutable OpenMM::ComputeQueue xcQueue;
    std::unique_ptr<QM::PointChargeEvaluator> charges;
    std::unique_ptr<CommonMatrixProducts> products;
    SymmetricInverse deviceInverse;  ///< empty unless in use
    /// Device arrays kept from one geometry (or call) to the next: every array of the XC back ends, the density
    /// fitting, the point charges and the grid's weights (tools/device-allocations/count.sh: none made per MD step).
    std::shared_ptr<DeviceArrayPool> arrayPool = std::make_shared<DeviceArrayPool>();
};

} // namespace OpenMMDFT

#endif
