#ifndef OPENMMDFT_REFERENCEQMMMKERNELS_H_
#define OPENMMDFT_REFERENCEQMMMKERNELS_H_

#include "openmmdft/QMMMKernels.h"
#include "ReferenceBondScaledCoulomb.h"
#include "ReferenceQMRegion.h"
#include <memory>

namespace OpenMMDFT {

/**
 * QMMMForce on the Reference platform and every platform derived from it (CPU):
 * double precision, pair loop on the platform's thread pool.
 */
class ReferenceCalcQMMMForceKernel : public CalcQMMMForceKernel {
public:
    ReferenceCalcQMMMForceKernel(std::string name, const OpenMM::Platform& platform) : CalcQMMMForceKernel(name, platform) {
    }
    void initialize(const OpenMM::System& system, const QMMMForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy);
    void copyParametersToContext(OpenMM::ContextImpl& context, const QMMMForce& force);
    bool supportsQMRegion() const {
        return true;
    }
    QMResults getQMResults() const;
private:
    std::unique_ptr<ReferenceBondScaledCoulomb> coulomb;
    std::unique_ptr<ReferenceQMRegion> qmRegion;  // absent when the Force has no QM atoms
    bool qmEnergyOnly = false;
};

} // namespace OpenMMDFT

#endif
