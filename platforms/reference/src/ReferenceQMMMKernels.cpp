#include "ReferenceQMMMKernels.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/reference/ReferencePlatform.h"
#include "openmmdft/internal/MinimizerDetection.h"
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
        qmRegion.reset(new ReferenceQMRegion(force, threads));
    qmEnergyOnly = force.getQMEnergyOnly();
}

double ReferenceCalcQMMMForceKernel::execute(ContextImpl& context, bool includeForces, bool includeEnergy) {
    try {
        return computeEnergyAndForces(context, includeForces, includeEnergy);
    }
    catch (const exception& e) {
        // Whatever failed, the QM results of an earlier geometry must not pass for this one's.
        if (qmRegion)
            qmRegion->markFailed(e.what());
        throw;
    }
}

double ReferenceCalcQMMMForceKernel::computeEnergyAndForces(ContextImpl& context, bool includeForces, bool includeEnergy) {
    ReferencePlatform::PlatformData& data = platformData(context);
    const vector<Vec3>& positions = *data.positions;
    for (int i = 0; i < (int) positions.size(); i++)
        if (!isfinite(positions[i][0]) || !isfinite(positions[i][1]) || !isfinite(positions[i][2])) {
            stringstream msg;
            msg << "QMMMForce: the position of particle " << i << " is NaN or infinite";
            if (!nanForcesBecause.empty())
                msg << " (the previous evaluation returned NaN forces on the QM atoms: " << nanForcesBecause << ")";
            throw OpenMMException(msg.str());
        }
    nanForcesBecause.clear();
    rejected = false;
    double energy = coulomb->compute(positions, data.periodicBoxVectors, *data.forces, data.threads);
    if (qmRegion)
        energy += computeQMRegion(context, positions, data.periodicBoxVectors, *data.forces, includeForces, includeEnergy);
    return energy;
}

double ReferenceCalcQMMMForceKernel::computeQMRegion(ContextImpl& context, const vector<Vec3>& positions, const Vec3* boxVectors,
                                                    vector<Vec3>& forces, bool includeForces, bool includeEnergy) {
    if (qmEnergyOnly && includeForces) {
        // Energy-only mode has no QM forces. Forces alone are an integrator step, and the minimizer is
        // recognized: both are refused. Otherwise OpenMM cannot tell us why forces are wanted:
        // getState(getEnergy=True) asks for them too whenever the integrator's kinetic energy needs forces
        // (Verlet), exactly as a CustomIntegrator computing energy and f does. The QM atoms then get NaN
        // forces: a single point keeps its potential energy, and anything that moves atoms with them
        // stops at its next evaluation with an error naming this mode.
        const char* why = "energy-only mode (setQMEnergyOnly) has no QM forces, so it cannot be used for dynamics or "
                          "minimization; call setQMEnergyOnly(False)";
        if (!includeEnergy || insideEnergyMinimization())
            throw OpenMMException(string("QMMMForce: ") + why);
        const double energy = qmRegion->compute(context, positions, boxVectors, nullptr);
        setNaNForces(forces, why);
        return energy;
    }
    try {
        return qmRegion->compute(context, positions, boxVectors, includeForces ? &forces : nullptr);
    }
    catch (const QM::SCFConvergenceError& e) {
        // Inside energy minimization an SCF failure is a trial step too far: L-BFGS treats +infinity as a
        // rejected step and shortens it (the NaN forces are never used). Anywhere else it raises: dynamics
        // and single points fail closed.
        if (!insideEnergyMinimization())
            throw;
        setNaNForces(forces, e.what());
        rejected = true;
        return INFINITY;
    }
}

void ReferenceCalcQMMMForceKernel::setNaNForces(vector<Vec3>& forces, const string& why) {
    for (int particle : qmRegion->getQMParticles())
        forces[particle] = Vec3(NAN, NAN, NAN);
    nanForcesBecause = why;
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
    coulomb->setCharges(mmChargesOf(force));
    coulomb->setScale14(force.getCoulomb14Scale());
    qmEnergyOnly = force.getQMEnergyOnly();
}
