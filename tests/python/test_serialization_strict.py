"""QMMMForce XML read strictly from Python: damaged documents raise OpenMMException naming the
attribute or element and the text, instead of reading 0, a default, or dropping the QM region."""

import re

import openmm as mm
import pytest

import openmmdft


def qmForceXml():
    force = openmmdft.QMMMForce()
    for q in (-0.834, 0.417, 0.417):
        force.addParticle(q)
    force.addBond(0, 1)
    force.addBond(0, 2)
    force.addQMAtom(0, 8)
    force.addQMAtom(1, 1)
    force.setQMCharge(-1)
    force.setESPChargeMethod(openmmdft.QMMMForce.CHELPG)
    return mm.XmlSerializer.serialize(force)


def withAttribute(xml, name, value):
    """The first attribute `name` of the document's elements set to `value` (it must be there)."""
    head, body = xml.split("?>", 1) if "?>" in xml else ("", xml)
    edited, count = re.subn(r' %s="[^"]*"' % name, ' %s="%s"' % (name, value), body, count=1)
    assert count == 1, name
    return (head + "?>" if head else "") + edited


def inserted(xml, after, text):
    assert after in xml, after
    return xml.replace(after, after + text, 1)


def refused(xml, *fragments):
    with pytest.raises(mm.OpenMMException) as error:
        mm.XmlSerializer.deserialize(xml)
    message = str(error.value)
    assert "QMMMForce XML" in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_round_trip_still_reads():
    copy = mm.XmlSerializer.deserialize(qmForceXml())
    assert isinstance(copy, openmmdft.QMMMForce)
    assert copy.getNumQMAtoms() == 2 and copy.getQMCharge() == -1
    assert copy.getESPChargeMethod() == openmmdft.QMMMForce.CHELPG


@pytest.mark.parametrize("name,text", [("cutoff", "abc"), ("cutoff", "0.9nm"), ("q", "x"), ("p1", "1.5"),
                                       ("charge", "-1.0"), ("radialPoints", "many"), ("Z", "O")])
def test_non_numeric_text_is_an_error_not_zero(name, text):
    refused(withAttribute(qmForceXml(), name, text), "'%s'" % name, "'%s'" % text)


@pytest.mark.parametrize("name,text", [("scfConvergence", "nan"), ("coulomb14Scale", "inf"),
                                       ("rfDielectric", "1e400"), ("charge", "99999999999")])
def test_non_finite_or_out_of_range_numbers_are_errors(name, text):
    refused(withAttribute(qmForceXml(), name, text), "'%s'" % name, "'%s'" % text)


@pytest.mark.parametrize("name", ["method", "angularFunctions", "coulombMethod", "radialScheme", "atomicPartition",
                                  "gridPruning", "basisFunctionStorage", "espChargeMethod", "energyOnly"])
def test_enumerations_out_of_range_are_errors(name):
    refused(withAttribute(qmForceXml(), name, "7"), "'%s'" % name, "out of range")


def test_version_one_with_a_qm_region_is_refused():
    xml = qmForceXml()
    refused(withAttribute(xml, "version", "1"), "version 1", "<QMRegion>")
    refused(withAttribute(xml, "version", "3"), "unsupported version 3")
    refused(withAttribute(xml, "version", "2x"), "'2x'")
    # Without its QM region, a version-1 document is a plain MM force.
    plain = re.sub(r"<QMRegion[\s\S]*</QMRegion>", "", withAttribute(xml, "version", "1"))
    copy = mm.XmlSerializer.deserialize(plain)
    assert copy.getNumParticles() == 3 and copy.getNumQMAtoms() == 0


def test_misspelt_or_unknown_attributes_and_elements_are_refused():
    xml = qmForceXml()
    refused(inserted(xml, "<QMRegion", ' espChargeMethd="1"'), "'espChargeMethd'")
    refused(inserted(xml, "</QMRegion>", "<Extra/>"), "<Extra>")


def test_bond_beyond_the_documents_particles_is_refused():
    refused(withAttribute(qmForceXml(), "p2", "3"), "particle 3", "3 particles")
