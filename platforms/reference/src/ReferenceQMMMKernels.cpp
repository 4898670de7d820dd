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

/** The charges the MM pair kernel uses: a QM atom's MM charge takes part in no interaction. */
static vector<double> mmChargesOf(const QMMMForce& force) {
    vector<double> charges(force.getNumParticles());
    for (int i = 0; i < force.getNumParticles(); i++)
        force.getParticleParameters(i, charges[i]);
    for (int i = 0; i < force.getNumQMAtoms(); i++) {
        int particle, z;
        force.getQMAtomParameters(i, particle, z);
        charges[particle] = 0.0;
    }
    return charges;
}

void ReferenceCalcQMMMForceKernel::initialize(const System& system, const QMMMForce& force) {
    vector<pair<int, int> > bonds(force.getNumBonds());
    for (int i = 0; i < force.getNumBonds(); i++)
        force.getBondParameters(i, bonds[i].first, bonds[i].second);
    EllpackAdjacency adjacency(force.getNumParticles(), bonds);
    coulomb.reset(new ReferenceBondScaledCoulomb(force.getNumParticles(), classifyBondPaths(adjacency)));
    coulomb->setCharges(mmChargesOf(force));
    coulomb->setScale14(force.getCoulomb14Scale());
    coulomb->setMethod(force.getNonbondedMethod(), force.getCutoffDistance(), force.getReactionFieldDielectric());
    if (force.getNumQMAtoms() > 0)
        qmRegion.reset(new ReferenceQMRegion(force));
    qmEnergyOnly = force.getQMEnergyOnly();
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
    double energy = coulomb->compute(positions, data.periodicBoxVectors, *data.forces, data.threads);
    if (qmRegion) {
        if (qmEnergyOnly) {
            // Energy-only mode (single points, scans): no QM forces, so nothing that moves atoms may use it.
            if (!includeEnergy)
                throw OpenMMException("QMMMForce: in energy-only mode (setQMEnergyOnly) the QM region has no forces, so it "
                                      "cannot be used for dynamics or minimization");
            energy += qmRegion->compute(context, positions, data.periodicBoxVectors, nullptr);
        }
        else
            energy += qmRegion->compute(context, positions, data.periodicBoxVectors, includeForces ? data.forces : nullptr);
    }
    return energy;
}

QMResults ReferenceCalcQMMMForceKernel::getQMResults() const {
    if (!qmRegion)
        throw OpenMMException("QMMMForce.getQMResults: the Force has no QM atoms");
    if (!qmRegion->hasResults())
        throw OpenMMException("QMMMForce.getQMResults: no QM computation has been done in this Context yet");
    return qmRegion->getResults();
}

void ReferenceCalcQMMMForceKernel::copyParametersToContext(ContextImpl& context, const QMMMForce& force) {
    coulomb->setCharges(mmChargesOf(force));
    coulomb->setScale14(force.getCoulomb14Scale());
    if (qmRegion)
        qmRegion->setParameters(force);
    qmEnergyOnly = force.getQMEnergyOnly();
}
