#ifndef OPENMMDFT_COMMONPOINTCHARGES_H_
#define OPENMMDFT_COMMONPOINTCHARGES_H_

#include "openmmdft/qm/XCBackend.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeProgram.h"
#include <functional>

namespace OpenMMDFT {

/**
 * The gradient of the point-charge potential (nuclei and MM charges) on the GPU platforms: the point-charge limit of
 * the density-fitting gradient kernel (kernels/qmThreeCentre.cc, McMurchie-Davidson's nuclear attraction), work items
 * over (shell pair, block of charges), every charge's own gradient and the basis functions' in 64-bit fixed point.
 * integralProgram(basisL, auxL) gives the kernels compiled for orbital shells up to basisL.
 */
class CommonPointChargeGradients : public QM::PointChargeGradientEvaluator {
public:
    CommonPointChargeGradients(OpenMM::ComputeContext& cc, std::function<OpenMM::ComputeProgram(int, int)> integralProgram);
    bool addGradient(const QM::ThreeCentreTask& task, const std::vector<double>& weights, const Eigen::MatrixXd& cartesianDensity,
                     Eigen::MatrixXd& atomGradient, Eigen::MatrixXd& chargeGradient) const override;
private:
    OpenMM::ComputeContext& cc;
    std::function<OpenMM::ComputeProgram(int, int)> integralProgram;
};

} // namespace OpenMMDFT

#endif
