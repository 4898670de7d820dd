#include "ReferenceQMMMKernels.h"
#include "openmmdft/internal/QMEmbedding.h"
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

void ReferenceCalcQMMMForceKernel::initialize(const System& system, const QMMMForce& force) {
    vector<pair<int, int> > bonds(force.getNumBonds());
    for (int i = 0; i < force.getNumBonds(); i++)
        force.getBondParameters(i, bonds[i].first, bonds[i].second);
    // With Ewald the MM pairs stay in the System's NonbondedForce: no pair term here.
    if (force.getNonbondedMethod() != QMMMForce::Ewald) {
        EllpackAdjacency adjacency(force.getNumParticles(), bonds);
        coulomb.reset(new ReferenceBondScaledCoulomb(force.getNumParticles(), classifyBondPaths(adjacency)));
        coulomb->setCharges(chargesOfMMPairs(force));
        coulomb->setScale14(force.getCoulomb14Scale());
        coulomb->setMethod(force.getNonbondedMethod(), force.getCutoffDistance(), force.getReactionFieldDielectric());
    }
    if (force.getNumQMAtoms() > 0)
        qmRegion.reset(new QMRegionDriver(force, threads, true, true));
}

double ReferenceCalcQMMMForceKernel::execute(ContextImpl& context, bool includeForces, bool includeEnergy, bool includeMM,
                                             bool includeQM) {
    try {
        return computeEnergyAndForces(context, includeForces, includeEnergy, includeMM, includeQM && qmRegion);
    }
    catch (const exception& e) {
        // Whatever failed, the QM results of an earlier geometry must not pass for this one's.
        if (qmRegion)
            qmRegion->markFailed(e.what());
        throw;
    }
}

double ReferenceCalcQMMMForceKernel::computeEnergyAndForces(ContextImpl& context, bool includeForces, bool includeEnergy,
                                                            bool includeMM, bool includeQM) {
    ReferencePlatform::PlatformData& data = platformData(context);
    const vector<Vec3>& positions = *data.positions;
    if (qmRegion)
        qmRegion->checkPositionsAreFinite(positions);
    else
        checkPositionsAreFinite(positions);
    double energy = 0;
    if (includeMM && coulomb)
        energy += coulomb->compute(positions, data.periodicBoxVectors, *data.forces, data.threads);
    if (includeQM)
        energy += qmRegion->execute(context, positions, data.periodicBoxVectors, *data.forces, includeForces, includeEnergy);
    return energy;
}

QMResults ReferenceCalcQMMMForceKernel::getQMResults() const {
    if (!qmRegion)
        throw OpenMMException("QMMMForce.getQMResults: the Force has no QM atoms");
    return qmRegion->getResults();
}

void ReferenceCalcQMMMForceKernel::copyParametersToContext(ContextImpl& context, const QMMMForce& force) {
    // The QM region first: it is the part that can fail (basis sets), and it changes nothing when it does.
    if (qmRegion)
        qmRegion->setParameters(force);
    if (coulomb) {
        coulomb->setCharges(chargesOfMMPairs(force));
        coulomb->setScale14(force.getCoulomb14Scale());
    }
}
