/* QMMMForce XML: hostile documents are refused with a message naming the attribute or element and
 * the text, never read as 0 or dropped. Needs no platform: only the proxy and XmlSerializer. */
#include "openmmdft/QMMMForce.h"
#include "openmm/OpenMMException.h"
#include "openmm/System.h"
#include "openmm/serialization/XmlSerializer.h"
#include <gtest/gtest.h>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace OpenMM;
using namespace OpenMMDFT;
using std::string;
using std::unique_ptr;

namespace {

const string REMOVE = "\x01remove"; // a value no test sets

/** Water with a QM region and every QM setting away from its default. */
unique_ptr<QMMMForce> qmForce() {
    unique_ptr<QMMMForce> force(new QMMMForce());
    for (double q : {-0.834, 0.417, 0.417})
        force->addParticle(q);
    force->addBond(0, 1);
    force->addBond(0, 2);
    force->setNonbondedMethod(QMMMForce::CutoffPeriodic);
    force->setCutoffDistance(0.9);
    force->addQMAtom(0, 8);
    force->addQMAtom(1, 1);
    force->setQMCharge(-1);
    force->setBasisSet("6-31G*");
    force->setCoulombMethod(QMMMForce::Exact);
    force->setGrid(40, 194);
    force->setSCFConvergence(1e-8);
    force->setQMEnergyOnly(true);
    force->setESPChargeMethod(QMMMForce::MerzKollman);
    return force;
}

string toXml(const QMMMForce& force) {
    std::stringstream buffer;
    XmlSerializer::serialize<QMMMForce>(&force, "Force", buffer);
    return buffer.str();
}

unique_ptr<QMMMForce> fromXml(const string& xml) {
    std::stringstream buffer(xml);
    return unique_ptr<QMMMForce>(XmlSerializer::deserialize<QMMMForce>(buffer));
}

/** Where the elements begin: after the XML declaration, whose own version="1.0" is not the force's. */
size_t bodyStart(const string& xml) {
    const size_t end = xml.find("?>");
    return end == string::npos ? 0 : end + 2;
}

/** The document with the first attribute `name` set to `value` (it must exist, so that no test edits nothing). */
string withAttribute(const string& xml, const string& name, const string& value) {
    const string body = xml.substr(bodyStart(xml));
    std::smatch m;
    if (!std::regex_search(body, m, std::regex(" " + name + "=\"[^\"]*\"")))
        throw std::runtime_error("test document has no attribute " + name);
    return xml.substr(0, bodyStart(xml)) + m.prefix().str() + (value == REMOVE ? "" : " " + name + "=\"" + value + "\"") +
           m.suffix().str();
}

string withoutAttribute(const string& xml, const string& name) {
    return withAttribute(xml, name, REMOVE);
}

/** The document with `text` inserted right after the first occurrence of `after`. */
string inserted(const string& xml, const string& after, const string& text) {
    const size_t at = xml.find(after);
    if (at == string::npos)
        throw std::runtime_error("test document has no " + after);
    return xml.substr(0, at + after.size()) + text + xml.substr(at + after.size());
}

string withoutQMRegion(const string& xml) {
    const string edited = std::regex_replace(xml, std::regex("<QMRegion[\\s\\S]*</QMRegion>"), "");
    if (edited == xml)
        throw std::runtime_error("test document has no QMRegion");
    return edited;
}

void expectRefused(const string& xml, const std::vector<string>& fragments) {
    try {
        fromXml(xml);
        ADD_FAILURE() << "accepted:\n" << xml;
    }
    catch (const OpenMMException& e) {
        const string what = e.what();
        EXPECT_EQ(what.rfind("QMMMForce XML", 0), 0u) << what;
        for (const string& f : fragments)
            EXPECT_NE(what.find(f), string::npos) << "'" << f << "' missing from: " << what;
    }
}

} // namespace

TEST(Serialization, RoundTripKeepsEverySetting) {
    const unique_ptr<QMMMForce> force = qmForce();
    const unique_ptr<QMMMForce> copy = fromXml(toXml(*force));
    EXPECT_EQ(copy->getNumParticles(), 3);
    EXPECT_EQ(copy->getNumBonds(), 2);
    EXPECT_EQ(copy->getCutoffDistance(), 0.9);
    EXPECT_EQ(copy->getNumQMAtoms(), 2);
    EXPECT_EQ(copy->getQMCharge(), -1);
    EXPECT_EQ(copy->getCoulombMethod(), QMMMForce::Exact);
    EXPECT_EQ(copy->getSCFConvergence(), 1e-8);
    EXPECT_TRUE(copy->getQMEnergyOnly());
    EXPECT_EQ(copy->getESPChargeMethod(), QMMMForce::MerzKollman);
    double q;
    copy->getParticleParameters(0, q);
    EXPECT_EQ(q, -0.834);
    // Inside a System the force's node also carries OpenMM's 'type' attribute.
    System system;
    for (int i = 0; i < 3; i++)
        system.addParticle(1.0);
    system.addForce(qmForce().release());
    std::stringstream buffer;
    XmlSerializer::serialize<System>(&system, "System", buffer);
    unique_ptr<System> systemCopy(XmlSerializer::deserialize<System>(buffer));
    EXPECT_EQ(dynamic_cast<QMMMForce&>(systemCopy->getForce(0)).getNumQMAtoms(), 2);
}

TEST(Serialization, NonNumericTextIsAnErrorNotZero) {
    const string xml = toXml(*qmForce());
    expectRefused(withAttribute(xml, "cutoff", "abc"), {"'cutoff'", "'abc'"});
    expectRefused(withAttribute(xml, "cutoff", "0.9nm"), {"'cutoff'", "'0.9nm'"});
    expectRefused(withAttribute(xml, "cutoff", ""), {"'cutoff'", "''"});
    expectRefused(withAttribute(xml, "cutoff", " 0.9"), {"'cutoff'"});
    expectRefused(withAttribute(xml, "q", "x"), {"'q'", "'x'", "<Particle> 0"});
    expectRefused(withAttribute(xml, "p1", "1.5"), {"'p1'", "'1.5'"});
    expectRefused(withAttribute(xml, "forceGroup", "2x"), {"'forceGroup'", "'2x'"});
    expectRefused(withAttribute(xml, "radialPoints", "abc"), {"'radialPoints'", "'abc'"});
    expectRefused(withAttribute(xml, "charge", "-1.0"), {"'charge'", "'-1.0'"});
    expectRefused(withAttribute(xml, "Z", "O"), {"'Z'", "'O'", "<Atom> 0"});
    expectRefused(withAttribute(xml, "version", "2abc"), {"version", "'2abc'"});
}

TEST(Serialization, NonFiniteAndOutOfRangeNumbersAreErrors) {
    const string xml = toXml(*qmForce());
    expectRefused(withAttribute(xml, "scfConvergence", "nan"), {"'scfConvergence'", "'nan'", "finite"});
    expectRefused(withAttribute(xml, "coulomb14Scale", "inf"), {"'coulomb14Scale'", "'inf'", "finite"});
    expectRefused(withAttribute(xml, "rfDielectric", "1e400"), {"'rfDielectric'", "'1e400'"});
    expectRefused(withAttribute(xml, "q", "-inf"), {"'q'", "'-inf'"});
    expectRefused(withAttribute(xml, "charge", "99999999999"), {"'charge'", "'99999999999'", "range"});
    expectRefused(withAttribute(xml, "maxSCFIterations", "-2147483649"), {"'maxSCFIterations'", "range"});
}

TEST(Serialization, EnumeratedValuesOutOfRangeAreErrors) {
    const string xml = toXml(*qmForce());
    for (const char* name : {"method", "angularFunctions", "coulombMethod", "radialScheme", "atomicPartition",
                             "gridPruning", "basisFunctionStorage", "espChargeMethod", "energyOnly"}) {
        expectRefused(withAttribute(xml, name, "7"), {string("'") + name + "'", "7", "range"});
        expectRefused(withAttribute(xml, name, "-1"), {string("'") + name + "'", "-1", "range"});
    }
}

TEST(Serialization, VersionsTheReaderDoesNotKnowAreRefused) {
    const string xml = toXml(*qmForce());
    expectRefused(withAttribute(xml, "version", "3"), {"unsupported version 3"});
    expectRefused(withAttribute(xml, "version", "0"), {"unsupported version 0"});
    expectRefused(withoutAttribute(xml, "version"), {"'version'"});
    // Version 1 has no QM region: a version-1 document with one would silently lose it.
    expectRefused(withAttribute(xml, "version", "1"), {"version 1", "<QMRegion>"});
    const string v1 = withAttribute(withoutQMRegion(xml), "version", "1");
    const unique_ptr<QMMMForce> plain = fromXml(v1);
    EXPECT_EQ(plain->getNumParticles(), 3);
    EXPECT_EQ(plain->getNumQMAtoms(), 0);
    expectRefused(inserted(v1, "<Force", " basis=\"6-31G*\""), {"'basis'", "version 1"});
    // Version 2 needs its QM region.
    expectRefused(withoutQMRegion(xml), {"<QMRegion>"});
}

TEST(Serialization, UnknownOrRepeatedAttributesAndElementsAreErrors) {
    const string xml = toXml(*qmForce());
    // A misspelt optional setting would otherwise fall back to its default without a word.
    expectRefused(inserted(xml, "<QMRegion", " espChargeMethd=\"1\""), {"'espChargeMethd'", "<QMRegion>"});
    expectRefused(inserted(xml, "<Force", " cutof=\"1\""), {"'cutof'", "<Force>"});
    expectRefused(inserted(xml, "<Particle ", "x=\"1\" "), {"'x'", "<Particle>"});
    expectRefused(inserted(xml, "<Particles>", "<Bond p1=\"0\" p2=\"1\"/>"), {"<Bond>", "<Particles>"});
    expectRefused(inserted(xml, "<Bonds>", "<Bonds/>"), {"<Bonds>"});
    expectRefused(inserted(xml, "</QMRegion>", "<Extra/>"), {"<Extra>"});
    expectRefused(inserted(xml, "</Bonds>", "<Particles/>"), {"<Particles>", "more than once"});
}

TEST(Serialization, IndicesBeyondTheDocumentsParticlesAreErrors) {
    const string xml = toXml(*qmForce());
    expectRefused(withAttribute(xml, "p2", "3"), {"<Bond> 0", "particle 3", "3 particles"});
    expectRefused(withAttribute(xml, "particle", "7"), {"<Atom> 0", "particle 7", "3 particles"});
}
