#ifndef OPENMMDFT_REFERENCEQMMMKERNELS_H_
#define OPENMMDFT_REFERENCEQMMMKERNELS_H_

#include "openmmdft/QMMMKernels.h"
#include "ReferenceBondScaledCoulomb.h"
#include "QMRegionDriver.h"
#include <memory>
#include <string>

namespace OpenMMDFT {

/**
 * QMMMForce on the Reference platform and every platform derived from it (CPU):
 * double precision, pair loop on the platform's thread pool.
 */
class ReferenceCalcQMMMForceKernel : public CalcQMMMForceKernel {
public:
    /** threads: the Context's thread count (the CPU platform's Threads property), for the QM engine too. */
    ReferenceCalcQMMMForceKernel(std::string name, const OpenMM::Platform& platform, int threads)
        : CalcQMMMForceKernel(name, platform), threads(threads) {
    }
    void initialize(const OpenMM::System& system, const QMMMForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy, bool includeMM, bool includeQM);
    void copyParametersToContext(OpenMM::ContextImpl& context, const QMMMForce& force);
    bool supportsQMRegion() const {
        return true;
    }
    bool lastEvaluationRejected() const {
        return qmRegion && qmRegion->lastEvaluationRejected();
    }
    QMResults getQMResults() const;
private:
    double computeEnergyAndForces(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy, bool includeMM, bool includeQM);
    int threads;
    std::unique_ptr<ReferenceBondScaledCoulomb> coulomb;
    std::unique_ptr<QMRegionDriver> qmRegion;  // absent when the Force has no QM atoms
};

} // namespace OpenMMDFT

#endif
