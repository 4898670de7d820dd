#include "CommonQMMMKernels.h"
#include "CommonQMMMKernelSources.h"
#include "CommonXCBackend.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/BondedUtilities.h"
#include "openmm/common/ComputeForceInfo.h"
#include "openmm/common/ComputeProgram.h"
#include "openmm/common/ContextSelector.h"
#include "openmm/common/NonbondedUtilities.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/CustomNonbondedForce.h"
#include "openmm/NonbondedForce.h"
#include "openmmdft/internal/QMEmbedding.h"
#include "openmm/reference/SimTKOpenMMRealType.h"
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

/* ------------------------------------------------------------------------------------------
 * The bond graph on the device
 * ------------------------------------------------------------------------------------------ */

namespace {

/** Largest row length of an ELLPACK product (downloaded per-row lengths). */
int maxRowLength(const ComputeArray& rowLength) {
    vector<int> lengths;
    rowLength.download(lengths);
    int width = 0;
    for (int length : lengths)
        width = max(width, length);
    return width;
}

/** The (i, j), i < j pairs of a downloaded column-major ELLPACK matrix, sorted. */
vector<pair<int, int> > upperPairs(const vector<int>& matrix, int numRows, int width) {
    vector<pair<int, int> > pairs;
    for (int k = 0; k < width; k++)
        for (int i = 0; i < numRows; i++) {
            int j = matrix[(size_t) k * numRows + i];
            if (j > i)
                pairs.push_back(make_pair(i, j));
        }
    sort(pairs.begin(), pairs.end());
    return pairs;
}

} // namespace

BondPathClasses OpenMMDFT::classifyBondPathsOnDevice(ComputeContext& cc, const EllpackAdjacency& adjacency) {
    BondPathClasses classes;
    const int numRows = adjacency.getNumRows();
    const int width = adjacency.getWidth();
    if (numRows == 0 || width == 0)
        return classes; // no bonds: nothing is excluded or scaled
    ContextSelector selector(cc);

    // Upload A, transposed to column-major so that a warp reading entry k of its rows reads contiguous memory.
    const vector<int>& rowMajor = adjacency.getColumns();
    vector<int> columnMajor((size_t) numRows * width);
    for (int i = 0; i < numRows; i++)
        for (int k = 0; k < width; k++)
            columnMajor[(size_t) k * numRows + i] = rowMajor[(size_t) i * width + k];
    ComputeArray a, a2, a3, rowLength, excluded, scaled;
    a.initialize<int>(cc, columnMajor.size(), "qmmmAdjacency");
    a.upload(columnMajor);
    rowLength.initialize<int>(cc, numRows, "qmmmRowLength");

    ComputeProgram program = cc.compileProgram(CommonQMMMKernelSources::qmmmBondGraph);
    ComputeKernel product = program->createKernel("sparseBooleanProduct");
    auto multiply = [&](ComputeArray& x, int xWidth, ComputeArray& result, const char* name) {
        // The product's rows can be no wider than xWidth*K; the used width comes back from the device.
        int bound = xWidth * width;
        result.initialize<int>(cc, (size_t) numRows * bound, name);
        product->setArg(0, numRows);
        product->setArg(1, x);
        product->setArg(2, xWidth);
        product->setArg(3, a);
        product->setArg(4, width);
        product->setArg(5, result);
        product->setArg(6, bound);
        product->setArg(7, rowLength);
        product->execute(numRows);
        return maxRowLength(rowLength);
    };
    for (int i = 0; i < 8; i++)
        product->addArg();
    int width2 = multiply(a, width, a2, "qmmmAdjacency2");    // walks of two bonds
    int width3 = multiply(a2, width2, a3, "qmmmAdjacency3");  // walks of three bonds

    int excludedWidth = width + width2, scaledWidth = max(width3, 1);
    excluded.initialize<int>(cc, (size_t) numRows * excludedWidth, "qmmmExcluded");
    scaled.initialize<int>(cc, (size_t) numRows * scaledWidth, "qmmmScaled14");
    ComputeKernel classify = program->createKernel("classifyBondPaths");
    classify->addArg(numRows);
    classify->addArg(a);
    classify->addArg(width);
    classify->addArg(a2);
    classify->addArg(width2);
    classify->addArg(a3);
    classify->addArg(width3);
    classify->addArg(excluded);
    classify->addArg(excludedWidth);
    classify->addArg(scaled);
    classify->addArg(scaledWidth);
    classify->execute(numRows);

    vector<int> excludedHost, scaledHost;
    excluded.download(excludedHost);
    scaled.download(scaledHost);
    classes.excluded = upperPairs(excludedHost, numRows, excludedWidth);
    classes.scaled14 = upperPairs(scaledHost, numRows, scaledWidth);
    return classes;
}

/* ------------------------------------------------------------------------------------------
 * What OpenMM needs to reorder atoms safely
 * ------------------------------------------------------------------------------------------ */

/**
 * OpenMM's GPU platforms reorder atoms for locality by swapping whole molecules that are
 * identical for every Force.  Per-atom arrays (the charges) and per-pair lists (the 1-4 pairs
 * and the tile exclusions) keep their original indices, which stays correct only if swapped
 * molecules have equal charges and the same bonds and 1-4 pairs.  So: particles are
 * identical when their charges are; the groups are the bonds (which fix the exclusions) and
 * the 1-4 pairs.  A QM atom is identical to no other particle: the QM region's previous density
 * and its per-atom results follow the QM atoms' order, which a swap would scramble.
 */
class CommonCalcQMMMForceKernel::ForceInfo : public ComputeForceInfo {
public:
    ForceInfo(const vector<pair<int, int> >& bonds, const vector<pair<int, int> >& pairs14) : bonds(bonds), pairs14(pairs14) {
    }
    bool areParticlesIdentical(int particle1, int particle2) {
        if (isQM[particle1] || isQM[particle2])
            return particle1 == particle2;
        return charges[particle1] == charges[particle2];
    }
    int getNumParticleGroups() {
        return bonds.size() + pairs14.size();
    }
    void getParticlesInGroup(int index, vector<int>& particles) {
        const pair<int, int>& p = (index < (int) bonds.size() ? bonds[index] : pairs14[index - bonds.size()]);
        particles.resize(2);
        particles[0] = p.first;
        particles[1] = p.second;
    }
    bool areGroupsIdentical(int group1, int group2) {
        // All bonds are alike and all 1-4 pairs are alike (one scale; the charges are compared per particle).
        return (group1 < (int) bonds.size()) == (group2 < (int) bonds.size());
    }
    vector<double> charges;
    vector<bool> isQM;
private:
    vector<pair<int, int> > bonds, pairs14;
};

/* ------------------------------------------------------------------------------------------
 * The kernel
 * ------------------------------------------------------------------------------------------ */

namespace {

/**
 * The pairs the tiled kernel skips (besides each particle itself): those the bond graph excludes (fewer than 3 bonds
 * apart) and its 1-4 pairs (computed apart). A pair with an uncharged particle (zero charge, or a QM atom, whose MM
 * charge takes no part) adds nothing to the pair term, so whether the tiles skip it is free; such pairs follow the
 * exclusions of the System's other Forces that use tiles (NonbondedForce, CustomNonbondedForce), since a Context has
 * one set of tile exclusions that every such Force must equal. That is what lets a QM TIP4P water's M site, which has
 * no bond here (a bond to a QM atom would be a cut bond), share the tiles with a NonbondedForce that excludes it from
 * its water. `decidedByOthers` gets the pairs decided against the bond graph: they must stay uncharged.
 */
vector<vector<int> > tileExclusions(const System& system, const vector<double>& charges, const BondPathClasses& classes,
                                    vector<pair<int, int> >& decidedByOthers) {
    const int n = (int) charges.size();
    set<pair<int, int> > graph;
    for (auto* list : {&classes.excluded, &classes.scaled14})
        for (const auto& p : *list)
            graph.insert(minmax(p.first, p.second));
    set<pair<int, int> > others;
    bool haveOthers = false;
    for (int f = 0; f < system.getNumForces(); f++) {
        if (const NonbondedForce* nb = dynamic_cast<const NonbondedForce*>(&system.getForce(f))) {
            haveOthers = true;
            for (int e = 0; e < nb->getNumExceptions(); e++) {
                int p1, p2;
                double chargeProd, sigma, epsilon;
                nb->getExceptionParameters(e, p1, p2, chargeProd, sigma, epsilon);
                others.insert(minmax(p1, p2));
            }
        }
        else if (const CustomNonbondedForce* custom = dynamic_cast<const CustomNonbondedForce*>(&system.getForce(f))) {
            haveOthers = true;
            for (int e = 0; e < custom->getNumExclusions(); e++) {
                int p1, p2;
                custom->getExclusionParticles(e, p1, p2);
                others.insert(minmax(p1, p2));
            }
        }
    }
    auto uncharged = [&](const pair<int, int>& p) {
        return p.first < n && p.second < n && (charges[p.first] == 0 || charges[p.second] == 0);
    };
    set<pair<int, int> > chosen;
    decidedByOthers.clear();
    for (const auto& p : graph) {
        if (haveOthers && uncharged(p) && !others.count(p))
            decidedByOthers.push_back(p);
        else
            chosen.insert(p);
    }
    for (const auto& p : others)
        if (uncharged(p) && !graph.count(p) && p.first != p.second) {
            chosen.insert(p);
            decidedByOthers.push_back(p);
        }
    vector<vector<int> > exclusionList(n);
    for (int i = 0; i < n; i++)
        exclusionList[i].push_back(i);
    for (const auto& p : chosen) {
        exclusionList[p.first].push_back(p.second);
        exclusionList[p.second].push_back(p.first);
    }
    return exclusionList;
}

} // namespace

CommonCalcQMMMForceKernel::CommonCalcQMMMForceKernel(string name, const Platform& platform, ComputeContext& cc, const System& system,
                                                     DeviceSymmetricInverse deviceInverse) :
        CalcQMMMForceKernel(name, platform), cc(cc), deviceInverse(deviceInverse), info(NULL), numParticles(0) {
}

CommonCalcQMMMForceKernel::~CommonCalcQMMMForceKernel() {
    // info is owned by the ComputeContext (addForce).
}

void CommonCalcQMMMForceKernel::initialize(const System& system, const QMMMForce& force) {
    if (cc.getNumContexts() > 1)
        throw OpenMMException("QMMMForce does not support running one Context on several devices yet: select a single device "
                              "(the DeviceIndex platform property)");
    ContextSelector selector(cc);
    numParticles = force.getNumParticles();
    vector<pair<int, int> > bonds(force.getNumBonds());
    for (int i = 0; i < force.getNumBonds(); i++)
        force.getBondParameters(i, bonds[i].first, bonds[i].second);

    // Exclusions from the bond graph, computed on the device.
    EllpackAdjacency adjacency(numParticles, bonds);
    BondPathClasses classes = classifyBondPathsOnDevice(cc, adjacency);
    // With Ewald the MM pairs stay in the System's NonbondedForce: no pair term here.
    const bool mmPairs = force.getNonbondedMethod() != QMMMForce::Ewald;
    if (mmPairs)
        pairs14 = classes.scaled14;

    // The tile exclusions: the particle itself, the excluded pairs and the 1-4 pairs (computed separately below), as
    // NonbondedForce builds them from createExceptionsFromBonds() with the same bonds; pairs with an uncharged
    // particle follow the other Forces' exclusions.
    const vector<double> pairCharges = chargesOfMMPairs(force);
    const vector<vector<int> > exclusionList = tileExclusions(system, pairCharges, classes, pairsDecidedByOthers);

    int forceIndex;
    for (forceIndex = 0; forceIndex < system.getNumForces() && &system.getForce(forceIndex) != &force; ++forceIndex)
        ;
    string prefix = "qmmm" + cc.intToString(forceIndex) + "_";
    int elementSize = (cc.getUseDoublePrecision() ? sizeof(double) : sizeof(float));
    charges.initialize(cc, cc.getPaddedNumAtoms(), elementSize, "qmmmCharges");
    if (!pairs14.empty())
        pairPrefactors.initialize(cc, pairs14.size(), elementSize, "qmmmPair14Prefactors");
    info = new ForceInfo(bonds, pairs14);
    info->isQM.assign(numParticles, false);
    for (int i = 0; i < force.getNumQMAtoms(); i++) {
        int particle, z;
        force.getQMAtomParameters(i, particle, z);
        info->isQM[particle] = true;
    }
    cc.addForce(info);  // the ComputeContext owns it from here on
    uploadParameters(force, pairCharges);

    // The pair term, in OpenMM's tiled nonbonded kernel with exclusion masks.
    QMMMForce::NonbondedMethod method = force.getNonbondedMethod();
    bool useCutoff = (method != QMMMForce::NoCutoff);
    bool usePeriodic = (method == QMMMForce::CutoffPeriodic);
    map<string, string> replacements;
    replacements["ONE_4PI_EPS0"] = cc.doubleToString(ONE_4PI_EPS0);
    replacements["QMMM_CHARGE1"] = prefix + "charge1";
    replacements["QMMM_CHARGE2"] = prefix + "charge2";
    if (useCutoff) {
        // Reaction field, defined as NonbondedForce defines it.
        double cutoff = force.getCutoffDistance(), dielectric = force.getReactionFieldDielectric();
        double krf = pow(cutoff, -3.0) * (dielectric - 1.0) / (2.0 * dielectric + 1.0);
        double crf = (1.0 / cutoff) * (3.0 * dielectric) / (2.0 * dielectric + 1.0);
        replacements["QMMM_KRF"] = cc.doubleToString(krf);
        replacements["QMMM_CRF"] = cc.doubleToString(crf);
    }
    NonbondedUtilities& nonbonded = cc.getNonbondedUtilities();
    if (mmPairs) {
        nonbonded.addParameter(ComputeParameterInfo(charges, prefix + "charge", "real", 1));
        try {
            // NonbondedUtilities keeps ONE set of tile exclusions per Context, shared by every Force
            // that uses exclusions (NonbondedForce, CustomNonbondedForce, QMMMForce...): they must all
            // exclude exactly the same pairs, and agree on cutoff and periodicity.  A NonbondedForce
            // whose exceptions come from createExceptionsFromBonds() with the same bonds is compatible.
            nonbonded.addInteraction(useCutoff, usePeriodic, true, force.getCutoffDistance(), exclusionList,
                                     cc.replaceStrings(CommonQMMMKernelSources::qmmmCoulomb, replacements), force.getForceGroup(),
                                     numParticles > 3000, true);
        }
        catch (const OpenMMException& e) {
            stringstream msg;
            msg << "QMMMForce cannot share the GPU nonbonded kernel with another Force in this Context: " << e.what() << ". "
                << "On the OpenCL and CUDA platforms all Forces that use exclusions (NonbondedForce, CustomNonbondedForce, QMMMForce) "
                << "must exclude exactly the same particle pairs and use the same cutoff and periodicity. QMMMForce excludes every pair "
                << "1, 2 or 3 bonds apart in its bond graph; a NonbondedForce built with createExceptionsFromBonds() on the same bonds "
                << "is compatible.";
            throw OpenMMException(msg.str());
        }
    }

    // The scaled 1-4 pairs: a sparse list, evaluated like NonbondedForce exceptions.
    if (!pairs14.empty()) {
        vector<vector<int> > atoms(pairs14.size(), vector<int>(2));
        for (size_t i = 0; i < pairs14.size(); i++) {
            atoms[i][0] = pairs14[i].first;
            atoms[i][1] = pairs14[i].second;
        }
        map<string, string> pairReplacements;
        pairReplacements["PARAMS"] = cc.getBondedUtilities().addArgument(pairPrefactors, "real");
        cc.getBondedUtilities().addInteraction(atoms, cc.replaceStrings(CommonQMMMKernelSources::qmmmPair14, pairReplacements),
                                               force.getForceGroup());
    }

    // A check for non-finite positions, run when the energy is requested.
    map<string, string> defines;
    if (cc.getUseDoublePrecision()) {
        defines["POSQ_BITS_TYPE"] = "mm_ulong";
        defines["EXPONENT_MASK"] = "(((mm_ulong) 0x7ff00000) << 32)";
    }
    else {
        defines["POSQ_BITS_TYPE"] = "unsigned int";
        defines["EXPONENT_MASK"] = "0x7f800000u";
    }
    ComputeProgram program = cc.compileProgram(CommonQMMMKernelSources::qmmmPositionCheck, defines);
    checkPositionsKernel = program->createKernel("findNonfinitePositions");
    nonfiniteFlag.initialize<int>(cc, 1, "qmmmNonfiniteFlag");
    checkPositionsKernel->addArg(cc.getNumAtoms());
    checkPositionsKernel->addArg(cc.getPosq());
    checkPositionsKernel->addArg(nonfiniteFlag);

    if (force.getNumQMAtoms() > 0) {
        // The ESP fit takes this Context's least-squares kernel only in double precision; the density-fitting
        // metric's inverse is made by the CPU platform's (LAPACK) while the device computes the three-centre integrals,
        // or by the platform's own inverse on the device where it has one (CUDA: cuSOLVER, where it can be loaded).
        // The XC work runs on the device (double precision arithmetic, whatever the Context's precision).
        shared_ptr<const QM::XCBackendFactory> xc;
        if (CommonXCBackendFactory::supported(cc))
            xc = make_shared<CommonXCBackendFactory>(cc, deviceInverse);
        qmRegion.reset(new QMRegionDriver(force, 0, cc.getUseDoublePrecision(), false, xc));
        bool doubleForces = cc.getSupportsDoublePrecision();
        map<string, string> forceDefines;
        forceDefines["HOST_FORCE_TYPE"] = doubleForces ? "double" : "float";
        ComputeProgram forceProgram = cc.compileProgram(CommonQMMMKernelSources::qmmmAddForces, forceDefines);
        addHostForcesKernel = forceProgram->createKernel("addHostForces");
        hostForces.initialize(cc, 3 * (size_t) cc.getPaddedNumAtoms(), doubleForces ? sizeof(double) : sizeof(float), "qmmmHostForces");
        addHostForcesKernel->addArg(cc.getLongForceBuffer());
        addHostForcesKernel->addArg(hostForces);
        addHostForcesKernel->addArg(cc.getNumAtoms());
        addHostForcesKernel->addArg(cc.getPaddedNumAtoms());
    }
}

void CommonCalcQMMMForceKernel::uploadParameters(const QMMMForce& force, vector<double> q) {
    q.resize(cc.getPaddedNumAtoms(), 0.0);
    charges.upload(q, true);
    if (!pairs14.empty()) {
        double scale = force.getCoulomb14Scale();
        vector<double> prefactors(pairs14.size());
        for (size_t i = 0; i < pairs14.size(); i++)
            prefactors[i] = ONE_4PI_EPS0 * scale * q[pairs14[i].first] * q[pairs14[i].second];
        pairPrefactors.upload(prefactors, true);
    }
    info->charges.assign(q.begin(), q.begin() + numParticles);
}

double CommonCalcQMMMForceKernel::execute(ContextImpl& context, bool includeForces, bool includeEnergy, bool includeMM,
                                          bool includeQM) {
    if (qmRegion && includeQM) {
        try {
            return computeQMRegion(context, includeForces, includeEnergy);
        }
        catch (const exception& e) {
            // Whatever failed, the QM results of an earlier geometry must not pass for this one's.
            qmRegion->markFailed(e.what());
            throw;
        }
    }
    // The pair term and the 1-4 pairs are evaluated by the platform's nonbonded and bonded
    // kernels.  Non-finite positions would only show up as a NaN total energy, so when the
    // energy is requested, look for them and name the particle (one small kernel and a 4-byte
    // download; skipped in force-only steps so that MD steps do not synchronize).
    if (includeEnergy)
        checkPositionsOnDevice(context);
    return 0.0;
}

void CommonCalcQMMMForceKernel::checkPositionsOnDevice(ContextImpl& context) {
    ContextSelector selector(cc);
    cc.clearBuffer(nonfiniteFlag);
    checkPositionsKernel->execute(cc.getNumAtoms());
    int flag;
    nonfiniteFlag.download(&flag);
    if (flag != 0) {
        // Name every such particle from the positions in their original order (the kernel marks one of them).
        vector<Vec3> positions;
        context.getPositions(positions);
        checkPositionsAreFinite(positions);
        stringstream msg;  // the device's copy alone (a position the Context's download does not show)
        msg << "QMMMForce: the position of particle " << cc.getAtomIndex()[flag - 1] << " is NaN or infinite";
        throw OpenMMException(msg.str());
    }
}

double CommonCalcQMMMForceKernel::computeQMRegion(ContextImpl& context, bool includeForces, bool includeEnergy) {
    // Positions in the original particle order (the Context's own download, mixed precision included).
    vector<Vec3> positions;
    context.getPositions(positions);
    qmRegion->checkPositionsAreFinite(positions);
    Vec3 box[3];
    context.getPeriodicBoxVectors(box[0], box[1], box[2]);
    vector<Vec3> forces(numParticles, Vec3());
    double energy = qmRegion->execute(context, positions, box, forces, includeForces, includeEnergy);
    if (includeForces)
        addHostForces(forces);
    return energy;
}

void CommonCalcQMMMForceKernel::addHostForces(const vector<Vec3>& forces) {
    ContextSelector selector(cc);
    // The force buffer is in the Context's current atom order: slot i holds particle atomIndex[i].
    // Fixed point has no NaN: a non-finite force (energy-only mode, a rejected trial step) goes up as it is, and the
    // kernel adds its mark for "no force" instead (-2^30 kJ/mol/nm, qmmmAddForces.cc).
    const vector<int>& atomIndex = cc.getAtomIndex();
    const int numAtoms = cc.getNumAtoms();
    vector<double> sorted(3 * (size_t) cc.getPaddedNumAtoms(), 0.0);
    for (int i = 0; i < numAtoms; i++)
        for (int d = 0; d < 3; d++)
            sorted[3 * (size_t) i + d] = forces[atomIndex[i]][d];
    hostForces.upload(sorted, true);  // converted to float where the device has no double
    addHostForcesKernel->execute(numAtoms);
}

bool CommonCalcQMMMForceKernel::lastEvaluationRejected() const {
    return qmRegion && qmRegion->lastEvaluationRejected();
}

QMResults CommonCalcQMMMForceKernel::getQMResults() const {
    if (!qmRegion)
        throw OpenMMException("QMMMForce.getQMResults: the Force has no QM atoms");
    return qmRegion->getResults();
}

void CommonCalcQMMMForceKernel::copyParametersToContext(ContextImpl& context, const QMMMForce& force) {
    if (force.getNumParticles() != numParticles)
        throw OpenMMException("QMMMForce.updateParametersInContext: the number of particles has changed");
    const vector<double> q = chargesOfMMPairs(force);
    for (const auto& p : pairsDecidedByOthers)
        if (q[p.first] != 0 && q[p.second] != 0) {
            stringstream msg;
            msg << "QMMMForce.updateParametersInContext: particles " << p.first << " and " << p.second << " both carry charge now, "
                << "but this Context's tile exclusions took their pair as uncharged (it follows the other Forces' exclusions, "
                << "not the bond graph); create a new Context for these charges";
            throw OpenMMException(msg.str());
        }
    ContextSelector selector(cc);
    // The QM region first: it is the part that can fail (basis sets), and it changes nothing when it does.
    if (qmRegion)
        qmRegion->setParameters(force);
    uploadParameters(force, q);
    // Molecules that were identical (and may have been swapped) may no longer be.
    cc.invalidateMolecules(info);
}
