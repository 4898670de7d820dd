#include "openmmdft/QMMMForceProxy.h"
#include "openmmdft/QMMMForce.h"
#include "openmm/OpenMMException.h"
#include "openmm/serialization/SerializationNode.h"
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

// Version 1: MM electrostatics. Version 2 adds the QM region and its settings. Later fields of the
// QM region (energyOnly, espChargeMethod, basisStorageLimit) are optional with defaults, so older version-2 files still read.
static const int CURRENT_VERSION = 2;

QMMMForceProxy::QMMMForceProxy() : SerializationProxy("QMMMForce") {
}

void QMMMForceProxy::serialize(const void* object, SerializationNode& node) const {
    node.setIntProperty("version", CURRENT_VERSION);
    const QMMMForce& force = *reinterpret_cast<const QMMMForce*>(object);
    node.setIntProperty("forceGroup", force.getForceGroup());
    node.setIntProperty("qmForceGroup", force.getQMForceGroup());
    node.setStringProperty("name", force.getName());
    node.setIntProperty("method", (int) force.getNonbondedMethod());
    node.setDoubleProperty("cutoff", force.getCutoffDistance());
    node.setDoubleProperty("rfDielectric", force.getReactionFieldDielectric());
    node.setDoubleProperty("ewaldErrorTolerance", force.getEwaldErrorTolerance());
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
    qm.setIntProperty("gridPruning", (int) force.getGridPruning());
    double cubeEdge, sphereFraction;
    force.getGridGrouping(cubeEdge, sphereFraction);
    qm.setDoubleProperty("cubeEdge", cubeEdge).setDoubleProperty("sphereShellFraction", sphereFraction);
    qm.setDoubleProperty("significanceThreshold", force.getSignificanceThreshold());
    qm.setIntProperty("basisFunctionStorage", (int) force.getBasisFunctionStorage());
    qm.setDoubleProperty("basisStorageLimit", force.getBasisStorageLimit());
    qm.setDoubleProperty("scfConvergence", force.getSCFConvergence());
    qm.setIntProperty("maxSCFIterations", force.getMaxSCFIterations());
    qm.setIntProperty("diisSubspaceSize", force.getDIISSubspaceSize());
    qm.setIntProperty("recycledSubspaceSize", force.getRecycledSubspaceSize());
    qm.setIntProperty("coulombResponseSteps", force.getCoulombResponseSteps());
    qm.setIntProperty("embeddingSwitching", force.getUseEmbeddingSwitchingFunction() ? 1 : 0);
    qm.setDoubleProperty("embeddingSwitchingDistance", force.getEmbeddingSwitchingDistance());
    qm.setIntProperty("densityExtrapolation", (int) force.getDensityExtrapolation());
    qm.setIntProperty("densityExtrapolationOrder", force.getDensityExtrapolationOrder());
    qm.setIntProperty("energyOnly", force.getQMEnergyOnly() ? 1 : 0);
    qm.setIntProperty("espChargeMethod", (int) force.getESPChargeMethod());
    qm.setIntProperty("boundaryChargeScheme", (int) force.getBoundaryChargeScheme());
    SerializationNode& lengths = qm.createChildNode("LinkBondLengths");
    for (const auto& length : force.getLinkAtomBondLengthsSet())
        lengths.createChildNode("Length").setIntProperty("Z", length.first).setDoubleProperty("length", length.second);
    SerializationNode& atoms = qm.createChildNode("Atoms");
    for (int i = 0; i < force.getNumQMAtoms(); i++) {
        int particle, z;
        force.getQMAtomParameters(i, particle, z);
        atoms.createChildNode("Atom").setIntProperty("particle", particle).setIntProperty("Z", z);
    }
}

namespace {

// OpenMM's SerializationNode reads numbers leniently ("abc" as 0, "3.7" as 3): every value is read
// here as text and parsed strictly, so that a damaged document is refused, not half read.

[[noreturn]] void malformed(const string& why) {
    throw OpenMMException("QMMMForce XML is malformed: " + why);
}

/** "<Force>", or "<Particle> 3" for the fourth element of a list. */
string describe(const SerializationNode& node, int index = -1) {
    // XmlSerializer hands the document's root over without its name; QMMMForce documents call it <Force>.
    string where = "<" + (node.getName().empty() ? string("Force") : node.getName()) + ">";
    return index < 0 ? where : where + " " + to_string(index);
}

string text(const SerializationNode& node, const string& name, const string& where) {
    if (!node.hasProperty(name))
        malformed(where + " lacks the attribute '" + name + "'");
    return node.getStringProperty(name);
}

long long parseInteger(const string& value, const string& name, const string& where) {
    long long result = 0;
    const char* end = value.data() + value.size();
    const from_chars_result r = from_chars(value.data(), end, result);
    if (r.ec == errc() && r.ptr == end && result >= numeric_limits<int>::min() && result <= numeric_limits<int>::max())
        return result;
    if ((r.ec == errc() || r.ec == errc::result_out_of_range) && r.ptr == end && !value.empty())
        malformed("'" + name + "' of " + where + " is out of the range of an int: '" + value + "'");
    malformed("'" + name + "' of " + where + " is not an integer: '" + value + "'");
}

int intProperty(const SerializationNode& node, const string& name, const string& where) {
    return (int) parseInteger(text(node, name, where), name, where);
}

int intProperty(const SerializationNode& node, const string& name, const string& where, int defaultValue) {
    return node.hasProperty(name) ? intProperty(node, name, where) : defaultValue;
}

/** Every double the writer stores is finite (QMMMForce's setters refuse the rest), so nan and inf are damage. */
double doubleProperty(const SerializationNode& node, const string& name, const string& where) {
    const string value = text(node, name, where);
    const char* end = value.data() + value.size();
    double result = 0;
    const from_chars_result r = from_chars(value.data(), end, result);
    if (r.ptr != end || value.empty() || (r.ec != errc() && r.ec != errc::result_out_of_range))
        malformed("'" + name + "' of " + where + " is not a number: '" + value + "'");
    if (r.ec != errc() || !isfinite(result))
        malformed("'" + name + "' of " + where + " is not a finite number: '" + value + "'");
    return result;
}

/** An enum stored as an int, refusing values outside [0, last]. */
int enumProperty(const SerializationNode& node, const string& name, const string& where, int last) {
    const int value = intProperty(node, name, where);
    if (value < 0 || value > last)
        malformed("'" + name + "' of " + where + " is out of range: " + to_string(value) + " (valid: 0 to " +
                  to_string(last) + ")");
    return value;
}

int enumProperty(const SerializationNode& node, const string& name, const string& where, int last, int defaultValue) {
    return node.hasProperty(name) ? enumProperty(node, name, where, last) : defaultValue;
}

/** Refuses attributes this version does not write: a misspelt optional one would silently take its default. */
void checkAttributes(const SerializationNode& node, const set<string>& known, const string& where, int version) {
    for (const auto& property : node.getProperties())
        if (known.count(property.first) == 0)
            malformed(where + " has the unknown attribute '" + property.first + "' (version " + to_string(version) + ")");
}

/** Refuses child elements other than the known ones, and any of them given twice (only the first would be read). */
void checkChildren(const SerializationNode& node, const set<string>& known, const string& where) {
    set<string> seen;
    for (const SerializationNode& child : node.getChildren()) {
        if (known.count(child.getName()) == 0)
            malformed(where + " contains an unexpected element <" + child.getName() + ">");
        if (!seen.insert(child.getName()).second)
            malformed(where + " contains <" + child.getName() + "> more than once");
    }
}

const SerializationNode& child(const SerializationNode& node, const string& name, const string& where) {
    for (const SerializationNode& c : node.getChildren())
        if (c.getName() == name)
            return c;
    malformed(where + " lacks the element <" + name + ">");
}

/** The elements of a list such as <Particles>, each of which must be an <item> with exactly these attributes. */
const vector<SerializationNode>& items(const SerializationNode& list, const string& item, const set<string>& attributes,
                                       int version) {
    const string where = describe(list);
    for (size_t i = 0; i < list.getChildren().size(); i++) {
        const SerializationNode& element = list.getChildren()[i];
        if (element.getName() != item)
            malformed(where + " contains an unexpected element <" + element.getName() + ">");
        checkAttributes(element, attributes, describe(element, (int) i), version);
        if (!element.getChildren().empty())
            malformed(describe(element, (int) i) + " has child elements");
    }
    return list.getChildren();
}

/** A particle index of a bond or QM atom: the document lists all the force's particles, so one beyond them is damage. */
int particleIndex(const SerializationNode& node, const string& name, const string& where, int numParticles) {
    const int index = intProperty(node, name, where);
    if (index >= numParticles)
        malformed(where + " refers to particle " + to_string(index) + ", but the document has " +
                  to_string(numParticles) + " particles");
    return index;
}

int readVersion(const SerializationNode& node) {
    if (!node.hasProperty("version"))
        throw OpenMMException("QMMMForce XML: the attribute 'version' is missing");
    const string value = node.getStringProperty("version");
    int version = 0;
    const char* end = value.data() + value.size();
    const from_chars_result r = from_chars(value.data(), end, version);
    if (r.ec != errc() || r.ptr != end || value.empty())
        throw OpenMMException("QMMMForce XML: the version '" + value + "' is not an integer");
    if (version < 1 || version > CURRENT_VERSION)
        throw OpenMMException("QMMMForce XML: unsupported version " + to_string(version) +
                              " (this build reads versions 1 to " + to_string(CURRENT_VERSION) + ")");
    return version;
}

void readQMRegion(const SerializationNode& qm, QMMMForce& force, int version) {
    const string where = describe(qm);
    checkAttributes(qm, {"charge", "basis", "auxiliaryBasis", "angularFunctions", "coulombMethod", "functional",
                         "radialPoints", "angularPoints", "radialScheme", "atomicPartition", "gridPruning", "cubeEdge",
                         "sphereShellFraction", "significanceThreshold", "basisFunctionStorage", "basisStorageLimit", "scfConvergence",
                         "maxSCFIterations", "diisSubspaceSize", "recycledSubspaceSize", "coulombResponseSteps", "densityExtrapolation", "densityExtrapolationOrder", "energyOnly",
                         "espChargeMethod", "embeddingSwitching", "embeddingSwitchingDistance", "boundaryChargeScheme"},
                    where, version);
    checkChildren(qm, {"Atoms", "LinkBondLengths"}, where);
    force.setQMCharge(intProperty(qm, "charge", where));
    force.setBasisSet(text(qm, "basis", where));
    force.setAuxiliaryBasisSet(text(qm, "auxiliaryBasis", where));
    force.setAngularFunctions((QMMMForce::AngularFunctions) enumProperty(qm, "angularFunctions", where, 2));
    force.setCoulombMethod((QMMMForce::CoulombMethod) enumProperty(qm, "coulombMethod", where, 1));
    force.setFunctional(text(qm, "functional", where));
    force.setGrid(intProperty(qm, "radialPoints", where), intProperty(qm, "angularPoints", where));
    force.setRadialScheme((QMMMForce::RadialScheme) enumProperty(qm, "radialScheme", where, 1));
    force.setAtomicPartition((QMMMForce::AtomicPartition) enumProperty(qm, "atomicPartition", where, 1));
    // Absent in earlier files, whose grids were never pruned.
    force.setGridPruning((QMMMForce::GridPruning) enumProperty(qm, "gridPruning", where, 2, 0));
    force.setGridGrouping(doubleProperty(qm, "cubeEdge", where), doubleProperty(qm, "sphereShellFraction", where));
    force.setSignificanceThreshold(doubleProperty(qm, "significanceThreshold", where));
    force.setBasisFunctionStorage((QMMMForce::BasisFunctionStorage) enumProperty(qm, "basisFunctionStorage", where, 1));
    force.setSCFConvergence(doubleProperty(qm, "scfConvergence", where));
    force.setMaxSCFIterations(intProperty(qm, "maxSCFIterations", where));
    force.setDIISSubspaceSize(intProperty(qm, "diisSubspaceSize", where));
    // Added within version 2: absent in its first files, so optional with the defaults of that time.
    force.setQMEnergyOnly(enumProperty(qm, "energyOnly", where, 1, 0) != 0);
    force.setESPChargeMethod((QMMMForce::ESPChargeMethod) enumProperty(qm, "espChargeMethod", where, 2, 0));
    if (qm.hasProperty("basisStorageLimit"))
        force.setBasisStorageLimit(doubleProperty(qm, "basisStorageLimit", where));
    // Absent in earlier files: no switching (what those files meant).
    force.setUseEmbeddingSwitchingFunction(enumProperty(qm, "embeddingSwitching", where, 1, 0) != 0);
    if (qm.hasProperty("embeddingSwitchingDistance"))
        force.setEmbeddingSwitchingDistance(doubleProperty(qm, "embeddingSwitchingDistance", where));
    // Absent in earlier files: the current default (the converged results do not depend on it).
    if (qm.hasProperty("densityExtrapolation") || qm.hasProperty("densityExtrapolationOrder"))
        force.setDensityExtrapolation((QMMMForce::DensityExtrapolation) enumProperty(qm, "densityExtrapolation", where, 3),
                                      intProperty(qm, "densityExtrapolationOrder", where));
    // Absent in earlier files: the current default (the converged results do not depend on it).
    if (qm.hasProperty("recycledSubspaceSize"))
        force.setRecycledSubspaceSize(intProperty(qm, "recycledSubspaceSize", where));
    if (qm.hasProperty("coulombResponseSteps"))
        force.setCoulombResponseSteps(intProperty(qm, "coulombResponseSteps", where));
    // Absent in earlier files (which had no link atoms): the defaults.
    force.setBoundaryChargeScheme((QMMMForce::BoundaryChargeScheme) enumProperty(qm, "boundaryChargeScheme", where, 1, 0));
    for (const SerializationNode& list : qm.getChildren())
        if (list.getName() == "LinkBondLengths")
            for (const SerializationNode& length : items(list, "Length", {"Z", "length"}, version)) {
                const string item = describe(length);
                force.setLinkAtomBondLength(intProperty(length, "Z", item), doubleProperty(length, "length", item));
            }
    const vector<SerializationNode>& atoms = items(child(qm, "Atoms", where), "Atom", {"particle", "Z"}, version);
    for (size_t i = 0; i < atoms.size(); i++) {
        const string atom = describe(atoms[i], (int) i);
        force.addQMAtom(particleIndex(atoms[i], "particle", atom, force.getNumParticles()), intProperty(atoms[i], "Z", atom));
    }
}

void readForce(const SerializationNode& node, QMMMForce& force, int version) {
    const string where = describe(node);
    // 'type' is OpenMM's own attribute, set by XmlSerializer and by System's proxy.
    checkAttributes(node, {"type", "version", "forceGroup", "qmForceGroup", "name", "method", "cutoff", "rfDielectric", "ewaldErrorTolerance",
                           "coulomb14Scale"}, where, version);
    // Version 1 has no QM region: reading one as version 1 would drop it without a word.
    for (const SerializationNode& c : node.getChildren())
        if (c.getName() == "QMRegion" && version < 2)
            malformed("a version 1 document has no <QMRegion>, but this one has (the QM region needs version 2)");
    if (version >= 2)
        checkChildren(node, {"Particles", "Bonds", "QMRegion"}, where);
    else
        checkChildren(node, {"Particles", "Bonds"}, where);
    force.setForceGroup(intProperty(node, "forceGroup", where, 0));
    if (node.hasProperty("qmForceGroup"))  // absent in earlier files: the Force's own group
        force.setQMForceGroup(intProperty(node, "qmForceGroup", where));
    force.setName(node.getStringProperty("name", force.getName()));
    force.setNonbondedMethod((QMMMForce::NonbondedMethod) enumProperty(node, "method", where, 3));
    if (node.hasProperty("ewaldErrorTolerance"))  // absent in files from before the Ewald method
        force.setEwaldErrorTolerance(doubleProperty(node, "ewaldErrorTolerance", where));
    force.setCutoffDistance(doubleProperty(node, "cutoff", where));
    force.setReactionFieldDielectric(doubleProperty(node, "rfDielectric", where));
    force.setCoulomb14Scale(doubleProperty(node, "coulomb14Scale", where));
    const vector<SerializationNode>& particles = items(child(node, "Particles", where), "Particle", {"q"}, version);
    for (size_t i = 0; i < particles.size(); i++)
        force.addParticle(doubleProperty(particles[i], "q", describe(particles[i], (int) i)));
    const vector<SerializationNode>& bonds = items(child(node, "Bonds", where), "Bond", {"p1", "p2"}, version);
    for (size_t i = 0; i < bonds.size(); i++) {
        const string bond = describe(bonds[i], (int) i);
        const int n = force.getNumParticles();
        force.addBond(particleIndex(bonds[i], "p1", bond, n), particleIndex(bonds[i], "p2", bond, n));
    }
    if (version >= 2)
        readQMRegion(child(node, "QMRegion", where), force, version);
}

} // namespace

void* QMMMForceProxy::deserialize(const SerializationNode& node) const {
    const int version = readVersion(node);
    unique_ptr<QMMMForce> force(new QMMMForce());
    try {
        readForce(node, *force, version);
    }
    catch (const OpenMMException& e) {
        // Our own messages already say where; QMMMForce's setters (e.g. a negative cutoff) get the prefix.
        const string what = e.what();
        if (what.rfind("QMMMForce XML", 0) == 0)
            throw;
        throw OpenMMException("QMMMForce XML is malformed: " + what);
    }
    return force.release();
}
