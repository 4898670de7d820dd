#include "openmmdft/QMMMForceProxy.h"
#include "openmmdft/QMMMForce.h"
#include "openmm/OpenMMException.h"
#include "openmm/serialization/SerializationNode.h"
#include <memory>
#include <sstream>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

static const int CURRENT_VERSION = 1;

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
    }
    catch (const OpenMMException& e) {
        throw OpenMMException(string("QMMMForce XML is malformed: ") + e.what());
    }
    return force.release();
}
