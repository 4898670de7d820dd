#ifndef OPENMMDFT_COMMONPOINTCHARGES_H_
#define OPENMMDFT_COMMONPOINTCHARGES_H_

#include "openmmdft/qm/XCBackend.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeProgram.h"
#include "DeviceArrayPool.h"
#include "ThreeCentreProgram.h"
#include <functional>

namespace OpenMMDFT {

/**
 * The point-charge potential matrices (nuclei and MM charges) and their gradient on the GPU platforms, by
 * McMurchie-Davidson's nuclear attraction (kernels/qmThreeCentre.cc). The matrix: work items over (group of charges,
 * shell pair), each group's blocks summed in group order by a second kernel, so that every run gives the same bits.
 * The gradient: the point-charge limit of the density-fitting gradient kernel, work items over (shell pair, block of
 * charges), every charge's own gradient and the basis functions' in 64-bit fixed point. integralProgram(basisL, 0,
 * true) gives the kernels compiled for orbital shells up to basisL and point charges.
 */
class CommonPointCharges : public QM::PointChargeEvaluator {
public:
    /** pool: where the per-call arrays (shell tables, pair lists, charges) come from, kept from one call to the next.
     *  matrixQueue: the queue the matrices' kernels run on (beside the default queue's work; empty or null: the default). */
    CommonPointCharges(OpenMM::ComputeContext& cc, ThreeCentreProgramSource integralProgram,
                       std::shared_ptr<DeviceArrayPool> pool, std::function<OpenMM::ComputeQueue()> matrixQueue = nullptr);
    bool matrix(const QM::ThreeCentreTask& task, const std::vector<double>& weights, Eigen::MatrixXd& cartesianMatrix) const override;
    std::unique_ptr<QM::PointChargeMatrixInFlight> startMatrix(const QM::ThreeCentreTask& task,
                                                               const std::vector<double>& weights) const override;
    std::unique_ptr<QM::PointChargeGradientInFlight> startGradient(const QM::ThreeCentreTask& task, const std::vector<double>& weights,
                                                                   const Eigen::MatrixXd& cartesianDensity, int numAtoms) const override;
private:
    OpenMM::ComputeContext& cc;
    ThreeCentreProgramSource integralProgram;
    std::shared_ptr<DeviceArrayPool> pool;
    std::function<OpenMM::ComputeQueue()> matrixQueue;
};

} // namespace OpenMMDFT

#endif
