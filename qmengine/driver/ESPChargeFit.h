#ifndef OPENMMDFT_ESPCHARGEFIT_H_
#define OPENMMDFT_ESPCHARGEFIT_H_

#include "openmmdft/QMMMForce.h"
#include "openmmdft/LeastSquares.h"
#include "openmm/Vec3.h"
#include "openmmdft/qm/Basis.h"
#include <Eigen/Dense>
#include <memory>
#include <vector>

namespace OpenMM {
class ContextImpl;
}

namespace OpenMMDFT {

/**
 * ESP charges of the QM region, for every platform: the potential of the QM density and nuclei
 * (not of the MM charges) on a CHELPG or Merz-Kollman grid (ESPGrid.h),
 *     V(r) = sum_A Z_A/|r - R_A| - sum_uv D_uv (u|1/|r - C||v),
 * fitted by min ||A q - V|| with A_pk = 1/|r_p - R_k| and sum_k q_k = QM charge, through the
 * plugin's least-squares kernel (the solver passed in; QR with the constraint). Atomic units inside.
 */
class ESPChargeFit {
public:
    /** threads for the potential (0: all hardware threads, as the QM engine counts them). */
    ESPChargeFit(QMMMForce::ESPChargeMethod method, int threads);
    /** Charges (e) in QM-atom order; positions of the QM atoms in nm, density in the engine's AO basis. */
    std::vector<double> compute(LeastSquaresSolver& solver, const std::vector<OpenMM::Vec3>& qmPositions,
                                const std::vector<int>& atomicNumbers, int qmCharge, const QM::BasisSet& basis,
                                const Eigen::MatrixXd& density);
private:
    QMMMForce::ESPChargeMethod method;
    int threads;
};

} // namespace OpenMMDFT

#endif
