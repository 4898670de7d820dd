#ifndef OPENMMDFT_QMMMKERNELS_H_
#define OPENMMDFT_QMMMKERNELS_H_

#include "openmmdft/QMMMForce.h"
#include "openmm/KernelImpl.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/System.h"
#include <string>

namespace OpenMMDFT {

/**
 * The platform kernel that evaluates QMMMForce. Each platform (Reference, CPU,
 * OpenCL, CUDA) provides one; QMMMForceImpl drives it.
 */
class CalcQMMMForceKernel : public OpenMM::KernelImpl {
public:
    static std::string Name() {
        return "CalcQMMMForce";
    }
    CalcQMMMForceKernel(std::string name, const OpenMM::Platform& platform) : OpenMM::KernelImpl(name, platform) {
    }
    /** Called once, when the Context is created: build exclusions from the bond graph, upload parameters. */
    virtual void initialize(const OpenMM::System& system, const QMMMForce& force) = 0;
    /**
     * Add forces (kJ/mol/nm) to the Context and return the energy (kJ/mol): the MM electrostatics when
     * includeMM, the QM region when includeQM (their force groups, QMMMForce::setQMForceGroup). Inside energy
     * minimization (insideEnergyMinimization()), a geometry where the SCF cannot converge returns +infinity
     * with NaN forces on the QM atoms: a rejected trial step (see lastEvaluationRejected()); every other
     * failure throws. On the GPU platforms the MM pair and 1-4 terms run in OpenMM's own nonbonded and
     * bonded kernels, which follow the Force's group themselves.
     */
    virtual double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy, bool includeMM, bool includeQM) = 0;
    /** Copy charges and the 1-4 scale from the Force (the bond graph is unchanged). */
    virtual void copyParametersToContext(OpenMM::ContextImpl& context, const QMMMForce& force) = 0;
    /** Whether the last execute() returned +infinity because the SCF did not converge at a trial geometry. */
    virtual bool lastEvaluationRejected() const {
        return false;
    }
    /** Whether this platform's kernel computes a QM region (QMMMForceImpl refuses QM atoms otherwise). */
    virtual bool supportsQMRegion() const {
        return false;
    }
    /** The last QM computation's results. */
    virtual QMResults getQMResults() const {
        throw OpenMM::OpenMMException("QMMMForce: this platform does not compute a QM region");
    }
};

} // namespace OpenMMDFT

#endif
