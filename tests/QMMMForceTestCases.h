#ifndef OPENMMDFT_QMMMFORCETESTCASES_H_
#define OPENMMDFT_QMMMFORCETESTCASES_H_

/* Test cases of QMMMForce's MM electrostatics, written once and run on every
 * platform (each platform's test file instantiates them with its tolerance).
 * The independent reference is OpenMM's own NonbondedForce with LJ switched off
 * and exceptions from createExceptionsFromBonds() with the same 1-4 scale. */

#include "openmmdft/QMMMForce.h"
#include "openmm/Context.h"
#include "openmm/NonbondedForce.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/State.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include "openmm/serialization/XmlSerializer.h"
#include <gtest/gtest.h>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace QMMMTest {

using namespace OpenMM;
using namespace OpenMMDFT;
using std::pair;
using std::string;
using std::vector;

/** A set of particles with charges, bonds and positions (nm). */
struct Molecules {
    vector<double> charges;
    vector<pair<int, int> > bonds;
    vector<Vec3> positions;
    bool periodic = false;
    Vec3 box[3] = {Vec3(4, 0, 0), Vec3(0, 4, 0), Vec3(0, 0, 4)};
};

/** What a platform is tested with: its name, properties and tolerances. */
struct PlatformSetup {
    string name;
    std::map<string, string> properties;
    double energyTolerance;  // relative
    double forceTolerance;   // relative to the largest force component
};

/** Lets GoogleTest print a platform parameter by name. */
inline void PrintTo(const PlatformSetup& setup, std::ostream* os) {
    *os << setup.name;
    for (auto& p : setup.properties)
        *os << " " << p.first << "=" << p.second;
}

inline Vec3 randomVector(std::mt19937& rng, double scale) {
    std::uniform_real_distribution<double> u(-scale, scale);
    return Vec3(u(rng), u(rng), u(rng));
}

/**
 * Add a molecule given by its bonds (local indices) with atoms laid out on a
 * distorted polygon/zig-zag around a center, charges alternating and random.
 */
inline void addMolecule(Molecules& m, int numAtoms, const vector<pair<int, int> >& localBonds, Vec3 center, std::mt19937& rng) {
    int offset = m.charges.size();
    std::uniform_real_distribution<double> q(-0.8, 0.8);
    for (int i = 0; i < numAtoms; i++) {
        double angle = 2 * M_PI * i / numAtoms;
        double radius = 0.1 + 0.03 * numAtoms;
        m.positions.push_back(center + Vec3(radius * cos(angle), radius * sin(angle), 0.05 * (i % 2)) + randomVector(rng, 0.02));
        m.charges.push_back(q(rng));
    }
    for (auto& b : localBonds)
        m.bonds.push_back(std::make_pair(b.first + offset, b.second + offset));
}

inline vector<pair<int, int> > chainBonds(int n) {
    vector<pair<int, int> > b;
    for (int i = 0; i + 1 < n; i++)
        b.push_back({i, i + 1});
    return b;
}

inline vector<pair<int, int> > ringBonds(int n) {
    vector<pair<int, int> > b = chainBonds(n);
    b.push_back({n - 1, 0});
    return b;
}

/** Every topology the issue names, as separate molecules in one system. */
inline Molecules allTopologies(unsigned seed = 1) {
    std::mt19937 rng(seed);
    Molecules m;
    int slot = 0;
    auto center = [&]() { Vec3 c(0.9 * (slot % 3), 0.9 * ((slot / 3) % 3), 0.9 * (slot / 9)); slot++; return c; };
    addMolecule(m, 8, chainBonds(8), center(), rng);                                             // chain
    addMolecule(m, 9, {{0, 1}, {1, 2}, {2, 3}, {1, 4}, {4, 5}, {4, 6}, {6, 7}, {2, 8}}, center(), rng);  // branched
    for (int n = 3; n <= 6; n++) {                                                              // 3-6 rings with a tail
        vector<pair<int, int> > b = ringBonds(n);
        b.push_back({0, n});
        b.push_back({n, n + 1});
        addMolecule(m, n + 2, b, center(), rng);
    }
    // Fused rings (naphthalene skeleton with two substituents).
    addMolecule(m, 12, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {4, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 3}, {0, 10}, {8, 11}}, center(), rng);
    // An atom with six bonds (SF6-like) bonded onward.
    addMolecule(m, 9, {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {6, 7}, {7, 8}}, center(), rng);
    // Unbonded ions.
    addMolecule(m, 1, {}, center(), rng);
    addMolecule(m, 1, {}, center(), rng);
    return m;
}

/** Many water-like molecules in a periodic box, wrapped so that molecules cross its faces. */
inline Molecules waterBox(int numMolecules, double boxSize, unsigned seed = 2) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, boxSize);
    Molecules m;
    m.periodic = true;
    m.box[0] = Vec3(boxSize, 0, 0);
    m.box[1] = Vec3(0, boxSize, 0);
    m.box[2] = Vec3(0, 0, boxSize);
    for (int i = 0; i < numMolecules; i++) {
        Vec3 o(u(rng), u(rng), u(rng));
        Vec3 h1 = o + Vec3(0.09572, 0, 0) + randomVector(rng, 0.01);
        Vec3 h2 = o + Vec3(-0.024, 0.0927, 0) + randomVector(rng, 0.01);
        // Wrap each atom separately: molecules at the faces end up split across them.
        for (Vec3 p : {o, h1, h2}) {
            for (int k = 0; k < 3; k++)
                p[k] -= boxSize * std::floor(p[k] / boxSize);
            m.positions.push_back(p);
        }
        int base = 3 * i;
        m.charges.insert(m.charges.end(), {-0.834, 0.417, 0.417});
        m.bonds.push_back({base, base + 1});
        m.bonds.push_back({base, base + 2});
    }
    return m;
}

inline void configure(System& system, const Molecules& m) {
    for (size_t i = 0; i < m.charges.size(); i++)
        system.addParticle(1.0);
    system.setDefaultPeriodicBoxVectors(m.box[0], m.box[1], m.box[2]);
}

inline QMMMForce* makeQMMMForce(const Molecules& m, QMMMForce::NonbondedMethod method, double cutoff, double scale14) {
    QMMMForce* force = new QMMMForce();
    for (double q : m.charges)
        force->addParticle(q);
    for (auto& b : m.bonds)
        force->addBond(b.first, b.second);
    force->setNonbondedMethod(method);
    force->setCutoffDistance(cutoff);
    force->setCoulomb14Scale(scale14);
    return force;
}

inline NonbondedForce* makeNonbondedForce(const Molecules& m, QMMMForce::NonbondedMethod method, double cutoff, double scale14) {
    NonbondedForce* force = new NonbondedForce();
    for (double q : m.charges)
        force->addParticle(q, 1.0, 0.0);
    force->createExceptionsFromBonds(m.bonds, scale14, 0.0);
    force->setNonbondedMethod(method == QMMMForce::NoCutoff ? NonbondedForce::NoCutoff
                              : method == QMMMForce::CutoffNonPeriodic ? NonbondedForce::CutoffNonPeriodic
                                                                      : NonbondedForce::CutoffPeriodic);
    force->setCutoffDistance(cutoff);
    force->setUseDispersionCorrection(false);
    return force;
}

inline State evaluate(System* system, const Molecules& m, const PlatformSetup& setup) {
    VerletIntegrator integrator(0.001);
    Context context(*system, integrator, Platform::getPlatformByName(setup.name), setup.properties);
    context.setPositions(m.positions);
    return context.getState(State::Energy | State::Forces);
}

inline void expectStatesMatch(const State& expected, const State& actual, const PlatformSetup& setup, const string& label) {
    double e0 = expected.getPotentialEnergy(), e1 = actual.getPotentialEnergy();
    EXPECT_NEAR(e1, e0, setup.energyTolerance * std::max(1.0, std::fabs(e0))) << label << ": energy";
    const vector<Vec3>& f0 = expected.getForces();
    const vector<Vec3>& f1 = actual.getForces();
    double maxForce = 1.0;
    for (auto& f : f0)
        for (int k = 0; k < 3; k++)
            maxForce = std::max(maxForce, std::fabs(f[k]));
    for (size_t i = 0; i < f0.size(); i++)
        for (int k = 0; k < 3; k++)
            ASSERT_NEAR(f1[i][k], f0[i][k], setup.forceTolerance * maxForce) << label << ": force on particle " << i << " component " << k;
}

/** QMMMForce against NonbondedForce (Coulomb only) for one set of molecules and settings. */
inline void compareWithNonbonded(const Molecules& m, QMMMForce::NonbondedMethod method, double cutoff, double scale14,
                                 const PlatformSetup& setup, const string& label) {
    System reference, tested;
    configure(reference, m);
    configure(tested, m);
    reference.addForce(makeNonbondedForce(m, method, cutoff, scale14));
    tested.addForce(makeQMMMForce(m, method, cutoff, scale14));
    // The reference always runs on the Reference platform, in double precision.
    PlatformSetup referenceSetup{"Reference", {}, 0, 0};
    expectStatesMatch(evaluate(&reference, m, referenceSetup), evaluate(&tested, m, setup), setup, label);
}

inline void testTopologies(const PlatformSetup& setup) {
    Molecules m = allTopologies();
    for (double scale : {0.5, 0.8333})
        for (auto method : {QMMMForce::NoCutoff, QMMMForce::CutoffNonPeriodic, QMMMForce::CutoffPeriodic}) {
            std::stringstream label;
            label << "topologies, method " << method << ", scale " << scale;
            compareWithNonbonded(m, method, 1.2, scale, setup, label.str());
        }
}

inline void testNoBonds(const PlatformSetup& setup) {
    Molecules m = allTopologies(3);
    m.bonds.clear();
    compareWithNonbonded(m, QMMMForce::NoCutoff, 1.0, 0.5, setup, "no bonds");
    compareWithNonbonded(m, QMMMForce::CutoffPeriodic, 1.0, 0.5, setup, "no bonds, periodic");
}

inline void testPeriodicWaterBox(const PlatformSetup& setup) {
    Molecules m = waterBox(300, 2.2);
    compareWithNonbonded(m, QMMMForce::CutoffPeriodic, 0.9, 0.5, setup, "periodic water box");
    compareWithNonbonded(m, QMMMForce::CutoffNonPeriodic, 0.9, 0.5, setup, "non-periodic water box");
}

/** Forces are the exact derivative of the energy: a central finite difference along the force direction. */
inline void testFiniteDifference(const PlatformSetup& setup, double relativeTolerance) {
    for (auto method : {QMMMForce::NoCutoff, QMMMForce::CutoffPeriodic}) {
        Molecules m = allTopologies(5);
        System system;
        configure(system, m);
        system.addForce(makeQMMMForce(m, method, 1.2, 0.5));
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, Platform::getPlatformByName(setup.name), setup.properties);
        context.setPositions(m.positions);
        State state = context.getState(State::Forces | State::Energy);
        double norm = 0;
        for (auto& f : state.getForces())
            norm += f.dot(f);
        norm = std::sqrt(norm);
        const double step = 1e-4;  // nm, along the unit force vector
        vector<Vec3> plus(m.positions), minus(m.positions);
        for (size_t i = 0; i < plus.size(); i++) {
            plus[i] += state.getForces()[i] * (step / norm);
            minus[i] -= state.getForces()[i] * (step / norm);
        }
        context.setPositions(plus);
        double ePlus = context.getState(State::Energy).getPotentialEnergy();
        context.setPositions(minus);
        double eMinus = context.getState(State::Energy).getPotentialEnergy();
        // Along the force direction dE/ds = -|F|.
        EXPECT_NEAR((ePlus - eMinus) / (2 * step), -norm, relativeTolerance * norm) << "method " << method;
    }
}

inline void testUpdateParameters(const PlatformSetup& setup) {
    Molecules m = allTopologies(7);
    System system;
    configure(system, m);
    QMMMForce* force = makeQMMMForce(m, QMMMForce::NoCutoff, 1.0, 0.5);
    system.addForce(force);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, Platform::getPlatformByName(setup.name), setup.properties);
    context.setPositions(m.positions);
    double before = context.getState(State::Energy).getPotentialEnergy();
    Molecules changed = m;
    for (size_t i = 0; i < changed.charges.size(); i++) {
        changed.charges[i] *= -0.7 + 0.01 * (i % 5);
        force->setParticleParameters(i, changed.charges[i]);
    }
    force->setCoulomb14Scale(0.75);
    force->updateParametersInContext(context);
    State after = context.getState(State::Energy | State::Forces);
    EXPECT_GT(std::fabs(after.getPotentialEnergy() - before), 1.0);
    System reference;
    configure(reference, changed);
    reference.addForce(makeNonbondedForce(changed, QMMMForce::NoCutoff, 1.0, 0.75));
    expectStatesMatch(evaluate(&reference, changed, PlatformSetup{"Reference", {}, 0, 0}), after, setup, "after updateParametersInContext");
    // The bond graph of a live Context is fixed: changing it is refused with a clear message.
    force->addBond(0, 5);
    try {
        force->updateParametersInContext(context);
        FAIL() << "a changed bond graph was accepted";
    }
    catch (const OpenMMException& e) {
        EXPECT_NE(string(e.what()).find("bond graph"), string::npos) << e.what();
    }
    // reinitialize() rebuilds the exclusions from the new graph.
    context.reinitialize(true);
    Molecules rebonded = changed;
    rebonded.bonds.push_back({0, 5});
    System reference2;
    configure(reference2, rebonded);
    reference2.addForce(makeNonbondedForce(rebonded, QMMMForce::NoCutoff, 1.0, 0.75));
    expectStatesMatch(evaluate(&reference2, rebonded, PlatformSetup{"Reference", {}, 0, 0}),
                      context.getState(State::Energy | State::Forces), setup, "after reinitialize with a new bond");
}

/** Force groups: the Force contributes only to the groups it is in. */
inline void testForceGroups(const PlatformSetup& setup) {
    Molecules m = allTopologies(9);
    System system;
    configure(system, m);
    QMMMForce* force = makeQMMMForce(m, QMMMForce::NoCutoff, 1.0, 0.5);
    force->setForceGroup(3);
    system.addForce(force);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, Platform::getPlatformByName(setup.name), setup.properties);
    context.setPositions(m.positions);
    double all = context.getState(State::Energy).getPotentialEnergy();
    EXPECT_NE(all, 0.0);
    EXPECT_NEAR(context.getState(State::Energy, false, 1 << 3).getPotentialEnergy(), all, 1e-12 * std::fabs(all));
    EXPECT_EQ(context.getState(State::Energy, false, 1 << 2).getPotentialEnergy(), 0.0);
}

inline void expectThrowsWith(const std::function<void()>& action, const string& fragment) {
    try {
        action();
        ADD_FAILURE() << "expected an OpenMMException mentioning '" << fragment << "'";
    }
    catch (const OpenMMException& e) {
        EXPECT_NE(string(e.what()).find(fragment), string::npos) << "message was: " << e.what();
    }
}

inline void testBadInput(const PlatformSetup& setup) {
    Platform& platform = Platform::getPlatformByName(setup.name);
    auto contextFor = [&](QMMMForce* force, int numParticles, Vec3 box) {
        System system;
        for (int i = 0; i < numParticles; i++)
            system.addParticle(1.0);
        system.setDefaultPeriodicBoxVectors(Vec3(box[0], 0, 0), Vec3(0, box[1], 0), Vec3(0, 0, box[2]));
        system.addForce(force);
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, setup.properties);
    };
    auto forceWith = [](int numParticles) {
        QMMMForce* f = new QMMMForce();
        for (int i = 0; i < numParticles; i++)
            f->addParticle(0.1 * (i % 3 - 1));
        return f;
    };
    expectThrowsWith([&]() { QMMMForce f = QMMMForce(); f.addBond(2, 2); }, "itself");
    expectThrowsWith([&]() { QMMMForce f = QMMMForce(); f.addBond(-1, 2); }, "negative");
    expectThrowsWith([&]() { QMMMForce f = QMMMForce(); f.setCutoffDistance(0.0); }, "cutoff");
    expectThrowsWith([&]() { QMMMForce f = QMMMForce(); f.setCutoffDistance(-1.0); }, "cutoff");
    expectThrowsWith([&]() { QMMMForce f = QMMMForce(); f.setParticleParameters(0, 1.0); }, "out of range");
    expectThrowsWith([&]() { QMMMForce f = QMMMForce(); f.addParticle(NAN); }, "finite");
    expectThrowsWith([&]() {
        QMMMForce* f = forceWith(4);
        f->addBond(1, 7);
        contextFor(f, 4, Vec3(3, 3, 3));
    }, "does not exist");
    expectThrowsWith([&]() { contextFor(forceWith(3), 4, Vec3(3, 3, 3)); }, "particles but the System has");
    expectThrowsWith([&]() {
        QMMMForce* f = forceWith(4);
        f->setNonbondedMethod(QMMMForce::CutoffPeriodic);
        f->setCutoffDistance(1.6);
        contextFor(f, 4, Vec3(3, 3, 3));
    }, "half the periodic box");
    // NaN positions are reported, not propagated silently.
    expectThrowsWith([&]() {
        System system;
        for (int i = 0; i < 3; i++)
            system.addParticle(1.0);
        system.addForce(forceWith(3));
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, setup.properties);
        context.setPositions({Vec3(0, 0, 0), Vec3(NAN, 0, 0), Vec3(0, 0.3, 0)});
        context.getState(State::Energy);
    }, "NaN");
}

inline void testSerializationRoundTrip() {
    Molecules m = allTopologies(11);
    std::unique_ptr<QMMMForce> force(makeQMMMForce(m, QMMMForce::CutoffPeriodic, 0.95, 0.8333));
    force->setReactionFieldDielectric(55.0);
    force->setForceGroup(5);
    force->setName("qmmm electrostatics");
    force->addQMAtom(0, 8);
    force->addQMAtom(1, 1);
    force->setQMCharge(-1);
    force->setBasisSet("6-31G*");
    force->setSphericalBasis(true);
    force->setCoulombMethod(QMMMForce::Exact);
    force->setAuxiliaryBasisSet("DGauss-A1-DFT-Cfit");
    force->setFunctional("SVWN_RPA");
    force->setGrid(40, 194);
    force->setRadialScheme(QMMMForce::BeckeChebyshev);
    force->setAtomicPartition(QMMMForce::StratmannScuseriaFrisch);
    force->setGridPruning(QMMMForce::NWChemPruning);
    force->setGridGrouping(0.2, 0.5);
    force->setSignificanceThreshold(31.0);
    force->setBasisFunctionStorage(QMMMForce::Recompute);
    force->setSCFConvergence(1e-8);
    force->setMaxSCFIterations(55);
    force->setDIISSubspaceSize(5);
    force->setRecycledSubspaceSize(7);
    force->setCoulombResponseSteps(5);
    force->setQMEnergyOnly(true);
    std::stringstream buffer;
    XmlSerializer::serialize<QMMMForce>(force.get(), "Force", buffer);
    std::unique_ptr<QMMMForce> copy(XmlSerializer::deserialize<QMMMForce>(buffer));
    ASSERT_EQ(copy->getNumParticles(), force->getNumParticles());
    ASSERT_EQ(copy->getNumBonds(), force->getNumBonds());
    EXPECT_EQ(copy->getNonbondedMethod(), force->getNonbondedMethod());
    EXPECT_EQ(copy->getCutoffDistance(), force->getCutoffDistance());
    EXPECT_EQ(copy->getReactionFieldDielectric(), force->getReactionFieldDielectric());
    EXPECT_EQ(copy->getCoulomb14Scale(), force->getCoulomb14Scale());
    EXPECT_EQ(copy->getForceGroup(), 5);
    EXPECT_EQ(copy->getName(), "qmmm electrostatics");
    for (int i = 0; i < force->getNumParticles(); i++) {
        double q0, q1;
        force->getParticleParameters(i, q0);
        copy->getParticleParameters(i, q1);
        EXPECT_EQ(q0, q1);
    }
    ASSERT_EQ(copy->getNumQMAtoms(), 2);
    int particle, z;
    copy->getQMAtomParameters(1, particle, z);
    EXPECT_EQ(particle, 1);
    EXPECT_EQ(z, 1);
    EXPECT_EQ(copy->getQMCharge(), -1);
    EXPECT_EQ(copy->getBasisSet(), "6-31G*");
    EXPECT_EQ(copy->getAngularFunctions(), QMMMForce::Spherical);
    EXPECT_EQ(copy->getCoulombMethod(), QMMMForce::Exact);
    EXPECT_EQ(copy->getAuxiliaryBasisSet(), "DGauss-A1-DFT-Cfit");
    EXPECT_EQ(copy->getFunctional(), "SVWN_RPA");
    int radial, angular;
    copy->getGrid(radial, angular);
    EXPECT_EQ(radial, 40);
    EXPECT_EQ(angular, 194);
    EXPECT_EQ(copy->getRadialScheme(), QMMMForce::BeckeChebyshev);
    EXPECT_EQ(copy->getAtomicPartition(), QMMMForce::StratmannScuseriaFrisch);
    EXPECT_EQ(copy->getGridPruning(), QMMMForce::NWChemPruning);
    double edge, fraction;
    copy->getGridGrouping(edge, fraction);
    EXPECT_EQ(edge, 0.2);
    EXPECT_EQ(fraction, 0.5);
    EXPECT_EQ(copy->getSignificanceThreshold(), 31.0);
    EXPECT_EQ(copy->getBasisFunctionStorage(), QMMMForce::Recompute);
    EXPECT_EQ(copy->getSCFConvergence(), 1e-8);
    EXPECT_EQ(copy->getMaxSCFIterations(), 55);
    EXPECT_EQ(copy->getDIISSubspaceSize(), 5);
    EXPECT_EQ(copy->getRecycledSubspaceSize(), 7);
    EXPECT_EQ(copy->getCoulombResponseSteps(), 5);
    EXPECT_TRUE(copy->getQMEnergyOnly());
    for (int i = 0; i < force->getNumBonds(); i++) {
        int a0, b0, a1, b1;
        force->getBondParameters(i, a0, b0);
        copy->getBondParameters(i, a1, b1);
        EXPECT_EQ(a0, a1);
        EXPECT_EQ(b0, b1);
    }
}

} // namespace QMMMTest

#endif
