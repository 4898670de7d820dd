#include "ReferenceQMMMKernels.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/reference/ReferencePlatform.h"
#include <cmath>
#include <sstream>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

static ReferencePlatform::PlatformData& platformData(ContextImpl& context) {
    return *reinterpret_cast<ReferencePlatform::PlatformData*>(context.getPlatformData());
}

static vector<double> chargesOf(const QMMMForce& force) {
    vector<double> charges(force.getNumParticles());
    for (int i = 0; i < force.getNumParticles(); i++)
        force.getParticleParameters(i, charges[i]);
    return charges;
}

void ReferenceCalcQMMMForceKernel::initialize(const System& system, const QMMMForce& force) {
    vector<pair<int, int> > bonds(force.getNumBonds());
    for (int i = 0; i < force.getNumBonds(); i++)
        force.getBondParameters(i, bonds[i].first, bonds[i].second);
    EllpackAdjacency adjacency(force.getNumParticles(), bonds);
    coulomb.reset(new ReferenceBondScaledCoulomb(force.getNumParticles(), classifyBondPaths(adjacency)));
    coulomb->setCharges(chargesOf(force));
    coulomb->setScale14(force.getCoulomb14Scale());
    coulomb->setMethod(force.getNonbondedMethod(), force.getCutoffDistance(), force.getReactionFieldDielectric());
}

double ReferenceCalcQMMMForceKernel::execute(ContextImpl& context, bool includeForces, bool includeEnergy) {
    ReferencePlatform::PlatformData& data = platformData(context);
    const vector<Vec3>& positions = *data.positions;
    for (int i = 0; i < (int) positions.size(); i++)
        if (!isfinite(positions[i][0]) || !isfinite(positions[i][1]) || !isfinite(positions[i][2])) {
            stringstream msg;
            msg << "QMMMForce: the position of particle " << i << " is NaN or infinite";
            throw OpenMMException(msg.str());
        }
    return coulomb->compute(positions, data.periodicBoxVectors, *data.forces, data.threads);
}

void ReferenceCalcQMMMForceKernel::copyParametersToContext(ContextImpl& context, const QMMMForce& force) {
    coulomb->setCharges(chargesOf(force));
    coulomb->setScale14(force.getCoulomb14Scale());
}
