#include "openmmdft/QMMMForce.h"
#include "openmmdft/internal/DensityExtrapolationOrder.h"
#include "openmmdft/internal/QMMMForceImpl.h"
#include "openmmdft/internal/LinkAtoms.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/AssertionUtilities.h"
#include <algorithm>
#include <cmath>
#include <sstream>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

QMMMForce::QMMMForce() : coulomb14Scale(0.5), cutoffDistance(1.0), reactionFieldDielectric(78.3), nonbondedMethod(NoCutoff),
        qmCharge(0), basisSet("def2-SVP"), auxiliaryBasisSet("def2-universal-jfit"), functional("SVWN5"),
        angularFunctions(BasisSetDefault), coulombMethod(DensityFitting), radialPoints(75), angularPoints(302),
        radialScheme(TreutlerAhlrichs), atomicPartition(Becke), gridPruning(NoPruning), cubeEdge(0.15875), sphereShellFraction(0.6),
        significanceThreshold(20.0), basisFunctionStorage(Precompute), basisStorageLimit(2048.0), scfConvergence(1e-7), maxSCFIterations(100),
        diisSubspaceSize(8), recycledSubspaceSize(96), coulombResponseSteps(2), densityExtrapolation(ASPC), densityExtrapolationOrder(3), qmForceGroup(-1), useEmbeddingSwitching(false), embeddingSwitchingDistance(0.8), qmEnergyOnly(false), espChargeMethod(NoESPCharges),
        ewaldErrorTolerance(5e-4), boundaryChargeScheme(RedistributedChargeAndDipole) {
    // Grid-grouping defaults are those measured for the engine (qmengine/README.md): cubes of 3 bohr
    // (0.15875 nm), spheres over the inner 60% of the radial shells, screening exponent 25.
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
    if (method != NoCutoff && method != CutoffNonPeriodic && method != CutoffPeriodic && method != Ewald)
        throw OpenMMException("QMMMForce: unknown nonbonded method");
    nonbondedMethod = method;
}

void QMMMForce::setEwaldErrorTolerance(double tolerance) {
    // The splitting parameter is sqrt(-ln(2 tolerance)) / cutoff (as NonbondedForce's), real only below 1/2.
    if (!(tolerance > 0 && tolerance < 0.5))
        throw OpenMMException("QMMMForce: the Ewald error tolerance must be between 0 and 0.5 (the splitting parameter is "
                              "sqrt(-ln(2 tolerance)) / cutoff)");
    ewaldErrorTolerance = tolerance;
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

int QMMMForce::addQMAtom(int particleIndex, int atomicNumber) {
    if (particleIndex < 0) {
        stringstream msg;
        msg << "QMMMForce: QM atom particle index " << particleIndex << " is negative";
        throw OpenMMException(msg.str());
    }
    if (atomicNumber < 1 || atomicNumber > 118) {
        stringstream msg;
        msg << "QMMMForce: unknown element with atomic number " << atomicNumber << " for particle " << particleIndex;
        throw OpenMMException(msg.str());
    }
    for (auto& atom : qmAtoms)
        if (atom.first == particleIndex) {
            stringstream msg;
            msg << "QMMMForce: particle " << particleIndex << " is already a QM atom";
            throw OpenMMException(msg.str());
        }
    qmAtoms.push_back(make_pair(particleIndex, atomicNumber));
    return qmAtoms.size() - 1;
}

void QMMMForce::getQMAtomParameters(int index, int& particleIndex, int& atomicNumber) const {
    checkParticleIndex(index, qmAtoms.size(), "QM atom");
    particleIndex = qmAtoms[index].first;
    atomicNumber = qmAtoms[index].second;
}

void QMMMForce::setQMCharge(int charge) {
    qmCharge = charge;
}

void QMMMForce::setBasisSet(const string& nameOrPath) {
    if (nameOrPath.empty())
        throw OpenMMException("QMMMForce: the basis set name is empty");
    basisSet = nameOrPath;
}

void QMMMForce::setAngularFunctions(AngularFunctions functions) {
    if (functions != BasisSetDefault && functions != Cartesian && functions != Spherical)
        throw OpenMMException("QMMMForce: unknown angular-function convention");
    angularFunctions = functions;
}

void QMMMForce::setCoulombMethod(CoulombMethod method) {
    if (method != DensityFitting && method != Exact)
        throw OpenMMException("QMMMForce: unknown Coulomb method");
    coulombMethod = method;
}

void QMMMForce::setAuxiliaryBasisSet(const string& nameOrPath) {
    if (nameOrPath.empty())
        throw OpenMMException("QMMMForce: the auxiliary basis set name is empty");
    auxiliaryBasisSet = nameOrPath;
}

void QMMMForce::setFunctional(const string& name) {
    string upper;
    for (char c : name)
        upper += (c == '-' ? '_' : toupper(c));
    if (upper == "SVWN" || upper == "SVWN5" || upper == "LDA")
        functional = "SVWN5";
    else if (upper == "SVWN_RPA" || upper == "SVWN3")
        functional = "SVWN_RPA";
    else
        throw OpenMMException("QMMMForce: unknown functional '" + name + "' (supported: SVWN5, SVWN_RPA)");
}

void QMMMForce::setGrid(int radialPoints, int angularPoints) {
    if (radialPoints < 10 || radialPoints > 500) {
        stringstream msg;
        msg << "QMMMForce: " << radialPoints << " radial points is outside the supported range 10 to 500";
        throw OpenMMException(msg.str());
    }
    if (angularPoints < 6) {
        stringstream msg;
        msg << "QMMMForce: " << angularPoints << " angular points is not a Lebedev grid size";
        throw OpenMMException(msg.str());
    }
    this->radialPoints = radialPoints;
    this->angularPoints = angularPoints;
}

void QMMMForce::getGrid(int& radialPoints, int& angularPoints) const {
    radialPoints = this->radialPoints;
    angularPoints = this->angularPoints;
}

void QMMMForce::setRadialScheme(RadialScheme scheme) {
    if (scheme != TreutlerAhlrichs && scheme != BeckeChebyshev)
        throw OpenMMException("QMMMForce: unknown radial scheme");
    radialScheme = scheme;
}

void QMMMForce::setAtomicPartition(AtomicPartition partition) {
    if (partition != Becke && partition != StratmannScuseriaFrisch)
        throw OpenMMException("QMMMForce: unknown atomic partition");
    atomicPartition = partition;
}

void QMMMForce::setGridPruning(GridPruning pruning) {
    if (pruning != NoPruning && pruning != NWChemPruning && pruning != TreutlerAhlrichsPruning)
        throw OpenMMException("QMMMForce: unknown grid pruning");
    gridPruning = pruning;
}

void QMMMForce::setGridGrouping(double cubeEdge, double sphereShellFraction) {
    if (!(cubeEdge > 0) || !std::isfinite(cubeEdge))
        throw OpenMMException("QMMMForce: the grid cube edge must be a positive length (nm)");
    if (!(sphereShellFraction >= 0 && sphereShellFraction <= 1))
        throw OpenMMException("QMMMForce: the sphere shell fraction must lie in [0, 1]");
    this->cubeEdge = cubeEdge;
    this->sphereShellFraction = sphereShellFraction;
}

void QMMMForce::getGridGrouping(double& cubeEdge, double& sphereShellFraction) const {
    cubeEdge = this->cubeEdge;
    sphereShellFraction = this->sphereShellFraction;
}

void QMMMForce::setSignificanceThreshold(double threshold) {
    if (!(threshold > 0) || !std::isfinite(threshold))
        throw OpenMMException("QMMMForce: the significance threshold must be positive");
    significanceThreshold = threshold;
}

void QMMMForce::setBasisFunctionStorage(BasisFunctionStorage storage) {
    if (storage != Precompute && storage != Recompute)
        throw OpenMMException("QMMMForce: unknown basis-function storage");
    basisFunctionStorage = storage;
}

void OpenMMDFT::checkDensityExtrapolationOrder(QMMMForce::DensityExtrapolation method, int order) {
    if (method == QMMMForce::XLBOMD ? (order < 3 || order > 7) : method != QMMMForce::PreviousDensity && (order < 1 || order > 6))
        throw OpenMMException("QMMMForce: the density extrapolation order must be between " +
                              std::string(method == QMMMForce::XLBOMD ? "3 and 7 for XLBOMD"
                                          : method == QMMMForce::ASPC ? "1 and 6 for ASPC"
                                                                      : "1 and 6 for PolynomialExtrapolation") +
                              ", not " + std::to_string(order));
}

void QMMMForce::setDensityExtrapolation(DensityExtrapolation method, int order) {
    if (method != PreviousDensity && method != ASPC && method != XLBOMD && method != PolynomialExtrapolation)
        throw OpenMMException("QMMMForce: unknown density extrapolation method");
    checkDensityExtrapolationOrder(method, order);  // PreviousDensity accepts and keeps any order
    densityExtrapolation = method;
    densityExtrapolationOrder = order;
}

void QMMMForce::setEmbeddingSwitchingDistance(double distance) {
    if (!(distance >= 0) || !std::isfinite(distance))
        throw OpenMMException("QMMMForce: the embedding switching distance must be a non-negative number of nm");
    embeddingSwitchingDistance = distance;
}

void QMMMForce::setQMForceGroup(int group) {
    if (group < -1 || group > 31)
        throw OpenMMException("QMMMForce: the QM force group must be between -1 (the Force's own group) and 31, not " +
                              std::to_string(group));
    qmForceGroup = group;
}

void QMMMForce::setBasisStorageLimit(double mebibytes) {
    if (!(mebibytes > 0) || !std::isfinite(mebibytes))
        throw OpenMMException("QMMMForce: the basis storage limit must be a positive number of MiB");
    basisStorageLimit = mebibytes;
}

void QMMMForce::setSCFConvergence(double threshold) {
    if (!(threshold > 0) || !std::isfinite(threshold))
        throw OpenMMException("QMMMForce: the SCF convergence threshold must be positive");
    scfConvergence = threshold;
}

void QMMMForce::setMaxSCFIterations(int iterations) {
    // Convergence is judged from the change of the energy between iterations, so one iteration can never converge.
    if (iterations < 2)
        throw OpenMMException("QMMMForce: the maximum number of SCF iterations must be at least 2 (convergence is judged "
                              "from the change between iterations)");
    maxSCFIterations = iterations;
}

void QMMMForce::setDIISSubspaceSize(int size) {
    if (size < 1)
        throw OpenMMException("QMMMForce: the DIIS subspace size must be at least 1");
    diisSubspaceSize = size;
}

void QMMMForce::setRecycledSubspaceSize(int pairs) {
    if (pairs < 0)
        throw OpenMMException("QMMMForce: the recycled DIIS subspace size must not be negative (0 turns recycling off)");
    recycledSubspaceSize = pairs;
}

void QMMMForce::setCoulombResponseSteps(int steps) {
    if (steps < 0)
        throw OpenMMException("QMMMForce: the Coulomb-response steps must not be negative (0 turns the correction off)");
    coulombResponseSteps = steps;
}

int QMMMForce::getNumLinkAtoms() const {
    return linkAtomBondsOf(*this).size();
}

void QMMMForce::getLinkAtomParameters(int index, int& qmParticle, int& mmParticle, double& bondLength) const {
    const vector<LinkAtomBond> links = linkAtomBondsOf(*this);
    checkParticleIndex(index, links.size(), "link atom");
    qmParticle = links[index].qmParticle;
    mmParticle = links[index].mmParticle;
    bondLength = links[index].bondLength;
}

/// The longest link bond length setLinkAtomBondLength takes (nm).
static const double MAX_LINK_BOND_LENGTH = 0.5;

void QMMMForce::setLinkAtomBondLength(int atomicNumber, double length) {
    if (atomicNumber < 1 || atomicNumber > 118)
        throw OpenMMException("QMMMForce: setLinkAtomBondLength: atomic number " + to_string(atomicNumber) + " is not an element");
    // A link hydrogen caps a bond (X-H bonds are 0.1-0.15 nm); one placed further off is no longer bonded to Q1.
    if (!(length > 0 && length <= MAX_LINK_BOND_LENGTH)) {
        std::stringstream msg;
        msg << "QMMMForce: the link atom bond length must be a positive number of nm, at most " << MAX_LINK_BOND_LENGTH
            << " (X-H bonds are 0.1-0.15 nm), not " << length;
        throw OpenMMException(msg.str());
    }
    linkBondLengths[atomicNumber] = length;
}

double QMMMForce::getLinkAtomBondLength(int atomicNumber) const {
    auto set = linkBondLengths.find(atomicNumber);
    const double length = set != linkBondLengths.end() ? set->second : defaultLinkBondLength(atomicNumber);
    if (length == 0)
        throw OpenMMException("QMMMForce: no link atom bond length for element " + to_string(atomicNumber) +
                              " (defaults exist for C, N, O, Si, P, S): call setLinkAtomBondLength");
    return length;
}

void QMMMForce::setBoundaryChargeScheme(BoundaryChargeScheme scheme) {
    if (scheme != RedistributedChargeAndDipole && scheme != ChargeShift)
        throw OpenMMException("QMMMForce: unknown boundary charge scheme " + to_string((int) scheme));
    boundaryChargeScheme = scheme;
}

void QMMMForce::setESPChargeMethod(ESPChargeMethod method) {
    if (method != NoESPCharges && method != CHELPG && method != MerzKollman)
        throw OpenMMException("QMMMForce: unknown ESP charge method");
    espChargeMethod = method;
}

QMResults QMMMForce::getQMResults(const Context& context) const {
    return dynamic_cast<const QMMMForceImpl&>(getImplInContext(context)).getQMResults();
}

ForceImpl* QMMMForce::createImpl() const {
    return new QMMMForceImpl(*this);
}

void QMMMForce::updateParametersInContext(Context& context) {
    dynamic_cast<QMMMForceImpl&>(getImplInContext(context)).updateParametersInContext(getContextImpl(context));
}
