#ifndef OPENMMDFT_QMMMFORCEIMPL_H_
#define OPENMMDFT_QMMMFORCEIMPL_H_

#include "openmmdft/QMMMForce.h"
#include "openmm/Kernel.h"
#include "openmm/internal/ForceImpl.h"
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace OpenMMDFT {

/** The ForceImpl of QMMMForce: validates the Force against the System and drives its kernel. */
class OPENMM_EXPORT_DFT QMMMForceImpl : public OpenMM::ForceImpl {
public:
    QMMMForceImpl(const QMMMForce& owner);
    ~QMMMForceImpl();
    void initialize(OpenMM::ContextImpl& context);
    const QMMMForce& getOwner() const {
        return owner;
    }
    void updateContextState(OpenMM::ContextImpl& context, bool& forcesInvalid) {
    }
    double calcForcesAndEnergy(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy, int groups);
    std::map<std::string, double> getDefaultParameters() {
        return std::map<std::string, double>();
    }
    std::vector<std::string> getKernelNames();
    std::vector<std::pair<int, int> > getBondedParticles() const;
    void updateParametersInContext(OpenMM::ContextImpl& context);
    QMResults getQMResults() const;
    /**
     * Check a Force against a System and the Context's periodic box; throws
     * OpenMMException naming the problem. Shared by initialization and tests.
     */
    static void validate(const QMMMForce& force, const OpenMM::System& system);
private:
    const QMMMForce& owner;
    OpenMM::Kernel kernel;
    std::vector<std::pair<int, int> > initialBonds;
    std::vector<std::pair<int, int> > initialQMAtoms;
    QMMMForce::NonbondedMethod initialMethod;
    double initialCutoff, initialDielectric;
};

} // namespace OpenMMDFT

#endif
