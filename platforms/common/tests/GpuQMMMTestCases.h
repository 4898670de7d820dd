#ifndef OPENMMDFT_GPUQMMMTESTCASES_H_
#define OPENMMDFT_GPUQMMMTESTCASES_H_

/* Test cases for the GPU platforms only (OpenCL, CUDA), on top of the cases every platform
 * runs (tests/QMMMForceTestCases.h; include that first):
 *  - the device classification of the bond graph (ELLPACK upload, A^2 and A^3 on the device,
 *    classes downloaded) against classifyBondPaths(), and for small graphs against a
 *    breadth-first search of shortest paths;
 *  - atom reordering: OpenMM's GPU platforms swap identical molecules for locality;
 *  - sharing the tile exclusions with a NonbondedForce in the same Context;
 *  - QMMMForce against NonbondedForce on the same platform and precision;
 *  - the QM region (a QM water among MM waters) against the Reference platform. */

#include "openmmdft/internal/BondGraph.h"
#include "openmmdft/QMMMForce.h"
#include "openmm/Context.h"
#include "openmm/Platform.h"
#include "openmm/State.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include <cmath>
#include <gtest/gtest.h>
#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace QMMMDeviceTest {

using OpenMMDFT::BondPathClasses;
using OpenMMDFT::EllpackAdjacency;
typedef std::vector<std::pair<int, int> > Bonds;
typedef std::function<void(OpenMM::Context&, const EllpackAdjacency&, BondPathClasses&)> DeviceClassifier;

struct Graph {
    std::string name;
    int numAtoms;
    Bonds bonds;
};

inline void addChain(Graph& g, int n) {
    int base = g.numAtoms;
    for (int i = 0; i + 1 < n; i++)
        g.bonds.push_back({base + i, base + i + 1});
    g.numAtoms += n;
}

inline void addRing(Graph& g, int n) {
    int base = g.numAtoms;
    addChain(g, n);
    g.bonds.push_back({base + n - 1, base});
}

inline Graph randomGraph(int numAtoms, int numBonds, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> atom(0, numAtoms - 1);
    Graph g{"random " + std::to_string(numAtoms) + "/" + std::to_string(numBonds) + " seed " + std::to_string(seed), numAtoms, {}};
    while ((int) g.bonds.size() < numBonds) {
        int i = atom(rng), j = atom(rng);
        if (i != j)
            g.bonds.push_back({i, j});  // duplicates (either order) included on purpose
    }
    return g;
}

/** Random molecule-like graphs: a random spanning tree plus a few ring-closing bonds, degrees capped. */
inline Graph randomMolecules(int numMolecules, int atomsPerMolecule, int maxDegree, unsigned seed) {
    std::mt19937 rng(seed);
    Graph g{"random molecules seed " + std::to_string(seed), 0, {}};
    for (int m = 0; m < numMolecules; m++) {
        int base = g.numAtoms;
        std::vector<int> degree(atomsPerMolecule, 0);
        for (int i = 1; i < atomsPerMolecule; i++) {
            int j;
            do {
                j = std::uniform_int_distribution<int>(0, i - 1)(rng);
            } while (degree[j] >= maxDegree);
            g.bonds.push_back({base + i, base + j});
            degree[i]++;
            degree[j]++;
        }
        for (int extra = 0; extra < atomsPerMolecule / 6; extra++) {
            int i = std::uniform_int_distribution<int>(0, atomsPerMolecule - 1)(rng);
            int j = std::uniform_int_distribution<int>(0, atomsPerMolecule - 1)(rng);
            if (i != j && degree[i] < maxDegree && degree[j] < maxDegree) {
                g.bonds.push_back({base + i, base + j});
                degree[i]++;
                degree[j]++;
            }
        }
        g.numAtoms += atomsPerMolecule;
    }
    return g;
}

inline std::vector<Graph> deviceTestGraphs() {
    std::vector<Graph> graphs;
    Graph g;
    g = Graph{"no bonds", 7, {}};
    graphs.push_back(g);
    g = Graph{"one bond", 2, {{0, 1}}};
    graphs.push_back(g);
    g = Graph{"chain of 12", 0, {}};
    addChain(g, 12);
    graphs.push_back(g);
    for (int n = 3; n <= 8; n++) {
        g = Graph{"ring of " + std::to_string(n) + " with a tail", 0, {}};
        addRing(g, n);
        g.bonds.push_back({0, n});
        g.bonds.push_back({n, n + 1});
        g.bonds.push_back({n + 1, n + 2});
        g.numAtoms += 3;
        graphs.push_back(g);
    }
    // Fused rings: naphthalene, a 3-ring fused to a 4-ring, cubane, and a spiro compound.
    graphs.push_back(Graph{"naphthalene", 10, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {4, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 3}}});
    graphs.push_back(Graph{"bicyclo[2.1.0]", 5, {{0, 1}, {1, 2}, {2, 0}, {1, 3}, {3, 4}, {4, 2}}});
    graphs.push_back(Graph{"cubane", 8, {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6}, {6, 7}, {7, 4}, {0, 4}, {1, 5}, {2, 6}, {3, 7}}});
    graphs.push_back(Graph{"spiro[4.4]", 9, {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 0}, {6, 8}}});
    // An atom with 6 bonds, each ligand bonded onward, and an atom with 8 bonds.
    g = Graph{"SF6-like with tails", 13, {}};
    for (int k = 1; k <= 6; k++)
        g.bonds.push_back({0, k});
    for (int k = 1; k <= 6; k++)
        g.bonds.push_back({k, k + 6});
    graphs.push_back(g);
    g = Graph{"8-coordinate star of chains", 25, {}};
    for (int k = 0; k < 8; k++) {
        g.bonds.push_back({0, 1 + 3 * k});
        g.bonds.push_back({1 + 3 * k, 2 + 3 * k});
        g.bonds.push_back({2 + 3 * k, 3 + 3 * k});
    }
    graphs.push_back(g);
    graphs.push_back(Graph{"complete K5", 5, {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}}});
    graphs.push_back(Graph{"duplicate and reversed bonds", 4, {{0, 1}, {1, 0}, {1, 2}, {2, 3}, {0, 1}, {3, 2}}});
    for (unsigned seed = 1; seed <= 4; seed++)
        graphs.push_back(randomGraph(60, 90, seed));
    graphs.push_back(randomGraph(400, 300, 11));
    for (unsigned seed = 1; seed <= 3; seed++)
        graphs.push_back(randomMolecules(40, 25, 4, 100 + seed));
    graphs.push_back(randomMolecules(400, 30, 4, 7));  // 12000 atoms: many thread blocks
    return graphs;
}

/** Shortest-path classes by breadth-first search: an oracle independent of the matrix products. */
inline BondPathClasses classifyByBreadthFirstSearch(const Graph& g) {
    std::vector<std::set<int> > neighbors(g.numAtoms);
    for (auto& b : g.bonds) {
        neighbors[b.first].insert(b.second);
        neighbors[b.second].insert(b.first);
    }
    BondPathClasses classes;
    for (int i = 0; i < g.numAtoms; i++) {
        std::vector<int> distance(g.numAtoms, -1);
        std::queue<int> queue;
        distance[i] = 0;
        queue.push(i);
        while (!queue.empty()) {
            int a = queue.front();
            queue.pop();
            if (distance[a] == 3)
                continue;
            for (int b : neighbors[a])
                if (distance[b] < 0) {
                    distance[b] = distance[a] + 1;
                    queue.push(b);
                }
        }
        for (int j = i + 1; j < g.numAtoms; j++) {
            if (distance[j] == 1 || distance[j] == 2)
                classes.excluded.push_back({i, j});
            else if (distance[j] == 3)
                classes.scaled14.push_back({i, j});
        }
    }
    return classes;
}

/** Run every test graph through the device classification of `context`'s platform. */
inline void testDeviceClassification(OpenMM::Context& context, const DeviceClassifier& classify) {
    for (const Graph& g : deviceTestGraphs()) {
        EllpackAdjacency adjacency(g.numAtoms, g.bonds);
        BondPathClasses expected = OpenMMDFT::classifyBondPaths(adjacency);
        BondPathClasses actual;
        classify(context, adjacency, actual);
        EXPECT_EQ(actual.excluded, expected.excluded) << g.name << " (width " << adjacency.getWidth() << "): excluded pairs";
        EXPECT_EQ(actual.scaled14, expected.scaled14) << g.name << " (width " << adjacency.getWidth() << "): 1-4 pairs";
        if (g.numAtoms <= 1000) {
            BondPathClasses bfs = classifyByBreadthFirstSearch(g);
            EXPECT_EQ(actual.excluded, bfs.excluded) << g.name << ": excluded pairs vs breadth-first search";
            EXPECT_EQ(actual.scaled14, bfs.scaled14) << g.name << ": 1-4 pairs vs breadth-first search";
        }
    }
}

/**
 * Many copies of identical molecules with 1-2, 1-3 and 1-4 pairs in a periodic box with a
 * cutoff, so that OpenMM reorders atoms (when positions are set, and every 250 steps).
 * Forces must stay those of NonbondedForce on the Reference platform: before and after MD
 * steps, and after updateParametersInContext() makes one copy different from the others
 * (which invalidates the list of identical molecules).
 */
inline void testReorderingIdenticalMolecules(const QMMMTest::PlatformSetup& setup) {
    using namespace QMMMTest;
    std::mt19937 rng(21);
    Molecules m;
    m.periodic = true;
    double boxSize = 3.0;
    for (int k = 0; k < 3; k++)
        m.box[k] = OpenMM::Vec3(k == 0 ? boxSize : 0, k == 1 ? boxSize : 0, k == 2 ? boxSize : 0);
    std::uniform_real_distribution<double> u(0, boxSize);
    const std::vector<double> chainCharges = {-0.3, 0.25, -0.1, 0.2, 0.15, -0.2};
    const std::vector<double> ringCharges = {0.4, -0.2, -0.2, 0.1, -0.1};
    for (int copy = 0; copy < 60; copy++) {
        // A chain of 6 (pairs 1-4 apart exist) and a 4-ring with a substituent.
        int base = m.charges.size();
        OpenMM::Vec3 c(u(rng), u(rng), u(rng));
        for (int i = 0; i < 6; i++) {
            m.positions.push_back(c + OpenMM::Vec3(0.13 * i, 0.05 * (i % 2), 0) + randomVector(rng, 0.01));
            m.charges.push_back(chainCharges[i]);
        }
        for (int i = 0; i + 1 < 6; i++)
            m.bonds.push_back({base + i, base + i + 1});
        base = m.charges.size();
        c = OpenMM::Vec3(u(rng), u(rng), u(rng));
        for (int i = 0; i < 5; i++) {
            double angle = 2 * M_PI * i / 4;
            OpenMM::Vec3 p = (i < 4 ? OpenMM::Vec3(0.1 * cos(angle), 0.1 * sin(angle), 0) : OpenMM::Vec3(0.22, 0, 0.05));
            m.positions.push_back(c + p + randomVector(rng, 0.01));
            m.charges.push_back(ringCharges[i]);
        }
        for (auto b : std::vector<std::pair<int, int> >{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 4}})
            m.bonds.push_back({base + b.first, base + b.second});
    }
    OpenMM::System system;
    configure(system, m);
    OpenMMDFT::QMMMForce* force = makeQMMMForce(m, OpenMMDFT::QMMMForce::CutoffPeriodic, 1.0, 0.5);
    system.addForce(force);
    OpenMM::VerletIntegrator integrator(0.0005);
    OpenMM::Context context(system, integrator, OpenMM::Platform::getPlatformByName(setup.name), setup.properties);
    context.setPositions(m.positions);
    auto compareWithReference = [&](const Molecules& current, const std::string& label) {
        OpenMM::State state = context.getState(OpenMM::State::Positions | OpenMM::State::Energy | OpenMM::State::Forces);
        Molecules at = current;
        at.positions = state.getPositions();
        OpenMM::System reference;
        configure(reference, at);
        reference.addForce(makeNonbondedForce(at, OpenMMDFT::QMMMForce::CutoffPeriodic, 1.0, 0.5));
        expectStatesMatch(evaluate(&reference, at, PlatformSetup{"Reference", {}, 0, 0}), state, setup, label);
    };
    compareWithReference(m, "identical molecules, after setPositions");
    integrator.step(260);  // past the 250 steps after which OpenMM reorders again
    compareWithReference(m, "identical molecules, after 260 steps");
    // Make copy 7 of the chain different: it can no longer be swapped with the others.
    Molecules changed = m;
    for (int i = 0; i < 6; i++) {
        int atom = 7 * 11 + i;
        changed.charges[atom] = -1.5 * m.charges[atom];
        force->setParticleParameters(atom, changed.charges[atom]);
    }
    force->updateParametersInContext(context);
    compareWithReference(changed, "after making one copy different");
    integrator.step(260);
    compareWithReference(changed, "one copy different, after 260 more steps");
}

/**
 * Tolerances where OpenMM's own NonbondedForce on the GPU platform is part of what is compared.
 * In double precision NonbondedForce keeps exception parameters (the 1-4 chargeProd and the
 * Lennard-Jones sigma/epsilon) in float, so it is only good to ~1e-8 relative.  In single
 * precision both Forces sum energies in float in an order that varies from run to run (PoCL:
 * up to ~4e-5 relative for a 900-atom reaction-field box; NonbondedForce against itself).
 */
inline QMMMTest::PlatformSetup withNonbondedForceOnDevice(QMMMTest::PlatformSetup setup) {
    const std::string& precision = setup.properties.at("Precision");
    if (precision == "double") {
        setup.energyTolerance = std::max(setup.energyTolerance, 1e-7);
        setup.forceTolerance = std::max(setup.forceTolerance, 1e-7);
    }
    else if (precision == "single")
        setup.energyTolerance = std::max(setup.energyTolerance, 1e-4);
    return setup;
}

/**
 * A NonbondedForce (with Lennard-Jones) whose exceptions come from createExceptionsFromBonds()
 * on the same bonds shares the tile exclusions with QMMMForce: both work in one Context.  One
 * with other exceptions is refused with a message that explains the constraint.
 */
inline void testSharedExclusionsWithNonbondedForce(const QMMMTest::PlatformSetup& setup) {
    using namespace QMMMTest;
    Molecules m = allTopologies(13);
    auto ljForce = [&](bool fromBonds) {
        OpenMM::NonbondedForce* lj = new OpenMM::NonbondedForce();
        for (size_t i = 0; i < m.charges.size(); i++)
            lj->addParticle(0.0, 0.15 + 0.01 * (i % 4), 0.3);
        if (fromBonds)
            lj->createExceptionsFromBonds(m.bonds, 0.5, 0.5);
        else
            lj->addException(0, 1, 0.0, 1.0, 0.0);
        lj->setNonbondedMethod(OpenMM::NonbondedForce::CutoffPeriodic);
        lj->setCutoffDistance(1.2);
        lj->setUseDispersionCorrection(false);
        return lj;
    };
    OpenMM::System tested, reference;
    configure(tested, m);
    configure(reference, m);
    tested.addForce(ljForce(true));
    tested.addForce(makeQMMMForce(m, OpenMMDFT::QMMMForce::CutoffPeriodic, 1.2, 0.5));
    reference.addForce(ljForce(true));
    reference.addForce(makeNonbondedForce(m, OpenMMDFT::QMMMForce::CutoffPeriodic, 1.2, 0.5));
    expectStatesMatch(evaluate(&reference, m, PlatformSetup{"Reference", {}, 0, 0}), evaluate(&tested, m, setup),
                      withNonbondedForceOnDevice(setup), "QMMMForce next to a NonbondedForce with exceptions from the same bonds");
    OpenMM::System incompatible;
    configure(incompatible, m);
    incompatible.addForce(ljForce(false));
    incompatible.addForce(makeQMMMForce(m, OpenMMDFT::QMMMForce::CutoffPeriodic, 1.2, 0.5));
    QMMMTest::expectThrowsWith([&]() { evaluate(&incompatible, m, setup); }, "createExceptionsFromBonds");
}

/**
 * QMMMForce against OpenMM's own NonbondedForce on the same platform and precision: both run
 * OpenMM's tiled nonbonded kernel with the same pair arithmetic (in mixed precision they agree
 * bit for bit).
 */
inline void testWaterBoxAgainstSamePlatform(const QMMMTest::PlatformSetup& setup) {
    using namespace QMMMTest;
    Molecules m = waterBox(300, 2.2);
    for (auto method : {OpenMMDFT::QMMMForce::CutoffPeriodic, OpenMMDFT::QMMMForce::CutoffNonPeriodic}) {
        OpenMM::System reference, tested;
        configure(reference, m);
        configure(tested, m);
        reference.addForce(makeNonbondedForce(m, method, 0.9, 0.5));
        tested.addForce(makeQMMMForce(m, method, 0.9, 0.5));
        expectStatesMatch(evaluate(&reference, m, setup), evaluate(&tested, m, setup), withNonbondedForceOnDevice(setup),
                          "water box, NonbondedForce on the same platform, method " + std::to_string(method));
    }
}

extern "C" void registerQMMMReferenceKernelFactories();

/**
 * A QM water (6-31G*, density fitting) among two MM waters, on this platform and on Reference: the
 * energies within energyTolerance (hartree) and every force component within forceTolerance
 * (hartree/bohr). The QM atoms carry MM charges that must take part in nothing, and feel forces.
 */
inline void testQMRegionAgainstReference(const QMMMTest::PlatformSetup& setup, double energyTolerance, double forceTolerance) {
    static bool registered = false;
    if (!registered) {
        registerQMMMReferenceKernelFactories();
        registered = true;
    }
    const double kjPerHartree = 2625.4996394798254, bohrPerNm = 1.0 / 0.0529177210903;
    const double water[3][3] = {{0.0, 0.0, 0.01173}, {0.0, 0.07572, -0.04692}, {0.0, -0.07572, -0.04692}};
    const double centers[3][3] = {{0.0, 0.0, 0.0}, {0.3, 0.0, 0.0}, {-0.05, 0.31, 0.1}};
    const double tip3p[3] = {-0.834, 0.417, 0.417};
    OpenMM::System system;
    OpenMMDFT::QMMMForce* force = new OpenMMDFT::QMMMForce();
    std::vector<OpenMM::Vec3> positions;
    for (int w = 0; w < 3; w++) {
        for (int a = 0; a < 3; a++) {
            system.addParticle(a == 0 ? 16.0 : 1.0);
            force->addParticle(tip3p[a]);
            // Rotate each MM water a little so that the molecules are not copies of one another.
            double angle = 0.7 * w, x = water[a][0], y = water[a][1];
            positions.push_back(OpenMM::Vec3(centers[w][0] + x * std::cos(angle) - y * std::sin(angle),
                                             centers[w][1] + x * std::sin(angle) + y * std::cos(angle), centers[w][2] + water[a][2]));
            if (w == 0)
                force->addQMAtom(a, a == 0 ? 8 : 1);
        }
        force->addBond(3 * w, 3 * w + 1);
        force->addBond(3 * w, 3 * w + 2);
    }
    force->setBasisSet("6-31G*");
    force->setGrid(40, 110);
    force->setSCFConvergence(1e-10);
    system.addForce(force);
    auto evaluate = [&](const std::string& platform, const std::map<std::string, std::string>& properties) {
        OpenMM::VerletIntegrator integrator(0.0005);
        OpenMM::Context context(system, integrator, OpenMM::Platform::getPlatformByName(platform), properties);
        context.setPositions(positions);
        return context.getState(OpenMM::State::Energy | OpenMM::State::Forces);
    };
    OpenMM::State reference = evaluate("Reference", {}), tested = evaluate(setup.name, setup.properties);
    EXPECT_NEAR(tested.getPotentialEnergy(), reference.getPotentialEnergy(), energyTolerance * kjPerHartree);
    double worst = 0, largest = 0;
    for (int i = 0; i < system.getNumParticles(); i++)
        for (int d = 0; d < 3; d++) {
            worst = std::max(worst, std::abs(tested.getForces()[i][d] - reference.getForces()[i][d]));
            largest = std::max(largest, std::abs(reference.getForces()[i][d]));
        }
    EXPECT_LT(worst, forceTolerance * kjPerHartree * bohrPerNm);
    EXPECT_GT(largest, 10.0);  // the QM atoms feel forces
}

/** Empty when a Context of the named platform can be made with these properties, otherwise why not (once per
 * platform and properties). */
inline std::string platformUnavailable(const std::string& platform, const std::map<std::string, std::string>& properties) {
    static std::map<std::pair<std::string, std::map<std::string, std::string> >, std::string> cache;
    const auto key = std::make_pair(platform, properties);
    auto found = cache.find(key);
    if (found != cache.end())
        return found->second;
    std::string reason;
    try {
        OpenMM::System system;
        system.addParticle(1.0);
        OpenMM::VerletIntegrator integrator(0.001);
        OpenMM::Context context(system, integrator, OpenMM::Platform::getPlatformByName(platform), properties);
    }
    catch (const std::exception& e) {
        reason = e.what();
    }
    cache[key] = reason;
    return reason;
}

/**
 * The GPU platforms' three precisions and their tolerances. Single and mixed evaluate pairs in float: 1e-5 relative
 * energy, 1e-4 of the largest force component. Double (PoCL and GPUs with fp64) evaluates pairs in double and
 * accumulates forces in 64-bit fixed point (resolution 2^-32 kJ/mol/nm): 1e-10 holds.
 */
inline std::vector<QMMMTest::PlatformSetup> devicePrecisions(const std::string& platform) {
    return {{platform, {{"Precision", "single"}}, 1e-5, 1e-4},
            {platform, {{"Precision", "mixed"}}, 1e-5, 1e-4},
            {platform, {{"Precision", "double"}}, 1e-10, 1e-10}};
}

inline bool isDoublePrecision(const QMMMTest::PlatformSetup& setup) {
    return setup.properties.at("Precision") == "double";
}

/** The finite-difference check takes a central difference of energies 2e-4 nm apart: in float the energy is good to
 * ~1e-7 relative, which limits it to ~1e-3; in double 1e-6 holds. */
inline double finiteDifferenceTolerance(const QMMMTest::PlatformSetup& setup) {
    return isDoublePrecision(setup) ? 1e-6 : 2e-3;
}

/** The PeriodicWaterBox case against Reference, except in single precision: there OpenMM's nonbonded kernel sums pair
 * energies in float, and for the non-periodic box (molecules split at the faces, no images: large cancelling terms)
 * OpenMM's own NonbondedForce misses the Reference energy by 1.9e-5 relative on PoCL, while QMMMForce, which runs the
 * same kernel, matches NonbondedForce bit for bit: WaterBoxSamePlatform covers single precision instead. */
inline void testPeriodicWaterBoxOnDevice(const QMMMTest::PlatformSetup& setup) {
    if (setup.properties.at("Precision") == "single")
        GTEST_SKIP() << "single precision: 1e-5 against Reference is beyond OpenMM's own NonbondedForce here; see WaterBoxSamePlatform";
    QMMMTest::testPeriodicWaterBox(setup);
}

/** The QM region against Reference with the bounds: double 1e-8 Eh and 1e-7 Eh/bohr; mixed and single (MM
 * pairs in float) 1e-6 and 1e-5. */
inline void testQMRegionAgainstReferenceOnDevice(const QMMMTest::PlatformSetup& setup) {
    const bool isDouble = isDoublePrecision(setup);
    testQMRegionAgainstReference(setup, isDouble ? 1e-8 : 1e-6, isDouble ? 1e-7 : 1e-5);
}

} // namespace QMMMDeviceTest

/**
 * Every QMMMForce case of a GPU platform, one test body for OpenCL and CUDA: the parameterized fixture Fixture (whose
 * SetUp skips where the platform cannot run) over devicePrecisions(platform), named by precision
 * (Precisions/Fixture.Case/precision).
 */
#define QMMM_DEVICE_FORCE_TESTS(Fixture, platform)                                                                         \
    TEST_P(Fixture, Topologies) { QMMMTest::testTopologies(GetParam()); }                                                  \
    TEST_P(Fixture, NoBonds) { QMMMTest::testNoBonds(GetParam()); }                                                        \
    TEST_P(Fixture, PeriodicWaterBox) { QMMMDeviceTest::testPeriodicWaterBoxOnDevice(GetParam()); }                        \
    TEST_P(Fixture, WaterBoxSamePlatform) { QMMMDeviceTest::testWaterBoxAgainstSamePlatform(GetParam()); }                 \
    TEST_P(Fixture, ReorderingIdenticalMolecules) { QMMMDeviceTest::testReorderingIdenticalMolecules(GetParam()); }       \
    TEST_P(Fixture, SharedExclusionsWithNonbondedForce) { QMMMDeviceTest::testSharedExclusionsWithNonbondedForce(GetParam()); } \
    TEST_P(Fixture, FiniteDifference) {                                                                                    \
        QMMMTest::testFiniteDifference(GetParam(), QMMMDeviceTest::finiteDifferenceTolerance(GetParam()));                 \
    }                                                                                                                      \
    TEST_P(Fixture, UpdateParameters) { QMMMTest::testUpdateParameters(GetParam()); }                                      \
    TEST_P(Fixture, ForceGroups) { QMMMTest::testForceGroups(GetParam()); }                                                \
    TEST_P(Fixture, BadInput) { QMMMTest::testBadInput(GetParam()); }                                                      \
    TEST_P(Fixture, QMRegionAgainstReference) { QMMMDeviceTest::testQMRegionAgainstReferenceOnDevice(GetParam()); }        \
    INSTANTIATE_TEST_SUITE_P(Precisions, Fixture, ::testing::ValuesIn(QMMMDeviceTest::devicePrecisions(platform)),         \
                             [](const ::testing::TestParamInfo<QMMMTest::PlatformSetup>& info) {                          \
                                 return info.param.properties.at("Precision");                                             \
                             })

#endif
