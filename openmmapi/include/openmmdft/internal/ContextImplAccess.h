#ifndef OPENMMDFT_CONTEXTIMPLACCESS_H_
#define OPENMMDFT_CONTEXTIMPLACCESS_H_

#include "openmm/Context.h"
#include "openmm/Force.h"
#include "openmm/OpenMMException.h"

namespace OpenMMDFT {

/**
 * Reaches a Context's ContextImpl. Force::getContextImpl() is the API OpenMM gives Force
 * subclasses for that; this Force is never added to a System, it only lends that accessor
 * (to the least-squares solver, which runs its kernel in a Context, and to tests).
 */
class ContextImplAccess : public OpenMM::Force {
public:
    OpenMM::ContextImpl& of(OpenMM::Context& context) const {
        return getContextImpl(context);
    }
    bool usesPeriodicBoundaryConditions() const override {
        return false;
    }
protected:
    OpenMM::ForceImpl* createImpl() const override {
        throw OpenMM::OpenMMException("openmm-dft: internal helper force cannot be added to a System");
    }
};

} // namespace OpenMMDFT

#endif
