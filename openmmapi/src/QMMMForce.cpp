#include "openmmdft/QMMMForce.h"
#include "openmmdft/internal/QMMMForceImpl.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/AssertionUtilities.h"
#include <algorithm>
#include <cmath>
#include <sstream>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

QMMMForce::QMMMForce() : coulomb14Scale(0.5), cutoffDistance(1.0), reactionFieldDielectric(78.3), nonbondedMethod(NoCutoff) {
}

static void checkParticleIndex(int index, int numParticles, const char* what) {
    if (index < 0 || index >= numParticles) {
        stringstream msg;
        msg << "QMMMForce: " << what << " index " << index << " is out of range [0, " << numParticles << ")";
        throw OpenMMException(msg.str());
    }
}

static void checkFinite(double value, const char* what) {
    if (!std::isfinite(value))
        throw OpenMMException(string("QMMMForce: ") + what + " must be a finite number");
}

int QMMMForce::addParticle(double charge) {
    checkFinite(charge, "a particle charge");
    charges.push_back(charge);
    return charges.size() - 1;
}

void QMMMForce::getParticleParameters(int index, double& charge) const {
    checkParticleIndex(index, charges.size(), "particle");
    charge = charges[index];
}

void QMMMForce::setParticleParameters(int index, double charge) {
    checkParticleIndex(index, charges.size(), "particle");
    checkFinite(charge, "a particle charge");
    charges[index] = charge;
}

int QMMMForce::addBond(int particle1, int particle2) {
    // Particles may be added after bonds, so the upper bound is checked when a Context is created.
    if (particle1 < 0 || particle2 < 0) {
        stringstream msg;
        msg << "QMMMForce: bond " << particle1 << "-" << particle2 << " refers to a negative particle index";
        throw OpenMMException(msg.str());
    }
    if (particle1 == particle2) {
        stringstream msg;
        msg << "QMMMForce: a particle cannot be bonded to itself (particle " << particle1 << ")";
        throw OpenMMException(msg.str());
    }
    pair<int, int> bond(min(particle1, particle2), max(particle1, particle2));
    if (bondSet.count(bond) != 0) {
        // A duplicate: report the index of the bond already present.
        for (int i = 0; i < (int) bonds.size(); i++)
            if (min(bonds[i].first, bonds[i].second) == bond.first && max(bonds[i].first, bonds[i].second) == bond.second)
                return i;
    }
    bondSet.insert(bond);
    bonds.push_back(make_pair(particle1, particle2));
    return bonds.size() - 1;
}

void QMMMForce::getBondParameters(int index, int& particle1, int& particle2) const {
    checkParticleIndex(index, bonds.size(), "bond");
    particle1 = bonds[index].first;
    particle2 = bonds[index].second;
}

void QMMMForce::setCoulomb14Scale(double scale) {
    checkFinite(scale, "the 1-4 scale");
    coulomb14Scale = scale;
}

void QMMMForce::setNonbondedMethod(NonbondedMethod method) {
    if (method != NoCutoff && method != CutoffNonPeriodic && method != CutoffPeriodic)
        throw OpenMMException("QMMMForce: unknown nonbonded method");
    nonbondedMethod = method;
}

void QMMMForce::setCutoffDistance(double distance) {
    if (!(distance > 0) || !std::isfinite(distance))
        throw OpenMMException("QMMMForce: the cutoff distance must be a positive number of nm");
    cutoffDistance = distance;
}

void QMMMForce::setReactionFieldDielectric(double dielectric) {
    if (!(dielectric > 0) || !std::isfinite(dielectric))
        throw OpenMMException("QMMMForce: the reaction-field dielectric must be positive");
    reactionFieldDielectric = dielectric;
}

ForceImpl* QMMMForce::createImpl() const {
    return new QMMMForceImpl(*this);
}

void QMMMForce::updateParametersInContext(Context& context) {
    dynamic_cast<QMMMForceImpl&>(getImplInContext(context)).updateParametersInContext(getContextImpl(context));
}
