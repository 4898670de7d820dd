#include "openmmdft/QMMMForceProxy.h"
#include "openmmdft/QMMMForce.h"
#include "openmm/OpenMMException.h"
#include "openmm/serialization/SerializationNode.h"
#include <memory>
#include <sstream>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

// Version 1: MM electrostatics. Version 2 adds the QM region and its settings. Later fields of the
// QM region (energyOnly, espChargeMethod) are optional with defaults, so older version-2 files still read.
static const int CURRENT_VERSION = 2;

QMMMForceProxy::QMMMForceProxy() : SerializationProxy("QMMMForce") {
}

void QMMMForceProxy::serialize(const void* object, SerializationNode& node) const {
    node.setIntProperty("version", CURRENT_VERSION);
    const QMMMForce& force = *reinterpret_cast<const QMMMForce*>(object);
    node.setIntProperty("forceGroup", force.getForceGroup());
    node.setStringProperty("name", force.getName());
    node.setIntProperty("method", (int) force.getNonbondedMethod());
    node.setDoubleProperty("cutoff", force.getCutoffDistance());
    node.setDoubleProperty("rfDielectric", force.getReactionFieldDielectric());
    node.setDoubleProperty("coulomb14Scale", force.getCoulomb14Scale());
    SerializationNode& particles = node.createChildNode("Particles");
    for (int i = 0; i < force.getNumParticles(); i++) {
        double charge;
        force.getParticleParameters(i, charge);
        particles.createChildNode("Particle").setDoubleProperty("q", charge);
    }
    SerializationNode& bonds = node.createChildNode("Bonds");
    for (int i = 0; i < force.getNumBonds(); i++) {
        int p1, p2;
        force.getBondParameters(i, p1, p2);
        bonds.createChildNode("Bond").setIntProperty("p1", p1).setIntProperty("p2", p2);
    }
    SerializationNode& qm = node.createChildNode("QMRegion");
    qm.setIntProperty("charge", force.getQMCharge());
    qm.setStringProperty("basis", force.getBasisSet());
    qm.setStringProperty("auxiliaryBasis", force.getAuxiliaryBasisSet());
    qm.setIntProperty("angularFunctions", (int) force.getAngularFunctions());
    qm.setIntProperty("coulombMethod", (int) force.getCoulombMethod());
    qm.setStringProperty("functional", force.getFunctional());
    int radial, angular;
    force.getGrid(radial, angular);
    qm.setIntProperty("radialPoints", radial).setIntProperty("angularPoints", angular);
    qm.setIntProperty("radialScheme", (int) force.getRadialScheme());
    qm.setIntProperty("atomicPartition", (int) force.getAtomicPartition());
    double cubeEdge, sphereFraction;
    force.getGridGrouping(cubeEdge, sphereFraction);
    qm.setDoubleProperty("cubeEdge", cubeEdge).setDoubleProperty("sphereShellFraction", sphereFraction);
    qm.setDoubleProperty("significanceThreshold", force.getSignificanceThreshold());
    qm.setIntProperty("basisFunctionStorage", (int) force.getBasisFunctionStorage());
    qm.setDoubleProperty("scfConvergence", force.getSCFConvergence());
    qm.setIntProperty("maxSCFIterations", force.getMaxSCFIterations());
    qm.setIntProperty("diisSubspaceSize", force.getDIISSubspaceSize());
    qm.setIntProperty("energyOnly", force.getQMEnergyOnly() ? 1 : 0);
    qm.setIntProperty("espChargeMethod", (int) force.getESPChargeMethod());
    SerializationNode& atoms = qm.createChildNode("Atoms");
    for (int i = 0; i < force.getNumQMAtoms(); i++) {
        int particle, z;
        force.getQMAtomParameters(i, particle, z);
        atoms.createChildNode("Atom").setIntProperty("particle", particle).setIntProperty("Z", z);
    }
}

/** Reads an enum stored as an int, refusing values outside [0, last]. */
static int enumProperty(const SerializationNode& node, const string& name, int last, int defaultValue = -1) {
    int value = (defaultValue < 0 ? node.getIntProperty(name) : node.getIntProperty(name, defaultValue));
    if (value < 0 || value > last) {
        stringstream msg;
        msg << "the value " << value << " of '" << name << "' is out of range";
        throw OpenMMException(msg.str());
    }
    return value;
}

void* QMMMForceProxy::deserialize(const SerializationNode& node) const {
    int version = node.getIntProperty("version");
    if (version < 1 || version > CURRENT_VERSION) {
        stringstream msg;
        msg << "QMMMForce XML: unsupported version " << version << " (this build reads versions 1 to " << CURRENT_VERSION << ")";
        throw OpenMMException(msg.str());
    }
    unique_ptr<QMMMForce> force(new QMMMForce());
    try {
        force->setForceGroup(node.getIntProperty("forceGroup", 0));
        force->setName(node.getStringProperty("name", force->getName()));
        int method = node.getIntProperty("method");
        if (method < 0 || method > 2) {
            stringstream msg;
            msg << "unknown nonbonded method " << method;
            throw OpenMMException(msg.str());
        }
        force->setNonbondedMethod((QMMMForce::NonbondedMethod) method);
        force->setCutoffDistance(node.getDoubleProperty("cutoff"));
        force->setReactionFieldDielectric(node.getDoubleProperty("rfDielectric"));
        force->setCoulomb14Scale(node.getDoubleProperty("coulomb14Scale"));
        for (const SerializationNode& particle : node.getChildNode("Particles").getChildren())
            force->addParticle(particle.getDoubleProperty("q"));
        for (const SerializationNode& bond : node.getChildNode("Bonds").getChildren())
            force->addBond(bond.getIntProperty("p1"), bond.getIntProperty("p2"));
        if (version >= 2) {
            const SerializationNode& qm = node.getChildNode("QMRegion");
            force->setQMCharge(qm.getIntProperty("charge"));
            force->setBasisSet(qm.getStringProperty("basis"));
            force->setAuxiliaryBasisSet(qm.getStringProperty("auxiliaryBasis"));
            force->setAngularFunctions((QMMMForce::AngularFunctions) enumProperty(qm, "angularFunctions", 2));
            force->setCoulombMethod((QMMMForce::CoulombMethod) enumProperty(qm, "coulombMethod", 1));
            force->setFunctional(qm.getStringProperty("functional"));
            force->setGrid(qm.getIntProperty("radialPoints"), qm.getIntProperty("angularPoints"));
            force->setRadialScheme((QMMMForce::RadialScheme) enumProperty(qm, "radialScheme", 1));
            force->setAtomicPartition((QMMMForce::AtomicPartition) enumProperty(qm, "atomicPartition", 1));
            force->setGridGrouping(qm.getDoubleProperty("cubeEdge"), qm.getDoubleProperty("sphereShellFraction"));
            force->setSignificanceThreshold(qm.getDoubleProperty("significanceThreshold"));
            force->setBasisFunctionStorage((QMMMForce::BasisFunctionStorage) enumProperty(qm, "basisFunctionStorage", 1));
            force->setSCFConvergence(qm.getDoubleProperty("scfConvergence"));
            force->setMaxSCFIterations(qm.getIntProperty("maxSCFIterations"));
            force->setDIISSubspaceSize(qm.getIntProperty("diisSubspaceSize"));
            force->setQMEnergyOnly(qm.getIntProperty("energyOnly", 0) != 0);
            force->setESPChargeMethod((QMMMForce::ESPChargeMethod) enumProperty(qm, "espChargeMethod", 2, 0));
            for (const SerializationNode& atom : qm.getChildNode("Atoms").getChildren())
                force->addQMAtom(atom.getIntProperty("particle"), atom.getIntProperty("Z"));
        }
    }
    catch (const OpenMMException& e) {
        throw OpenMMException(string("QMMMForce XML is malformed: ") + e.what());
    }
    return force.release();
}
