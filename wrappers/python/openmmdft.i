/* SWIG interface of openmm-dft's Python module (openmmdft.core, re-exported by openmmdft).
 * It imports OpenMM's own SWIG declarations (shipped in the openmm wheel as
 * include/swig/OpenMMSwigHeaders.i) so QMMMForce is a subclass of openmm.Force, and
 * OpenMM's typemaps so arguments accept openmm.unit Quantities. */
%module(package="openmmdft") core

%import(module="openmm") "swig/OpenMMSwigHeaders.i"
%include "swig/typemaps.i"
%include "std_string.i"
%include "std_vector.i"

%{
#include "OpenMM.h"
#include "OpenMMAmoeba.h"
#include "OpenMMDrude.h"
#include "openmm/RPMDIntegrator.h"
#include "openmm/RPMDMonteCarloBarostat.h"
#include "openmmdft/QMMMForce.h"
%}

%pythoncode %{
import openmm as mm
import openmm.unit as unit
%}

/* C++ exceptions become openmm.OpenMMException, as in OpenMM's own wrappers. */
%exception {
    try {
        $action
    } catch (std::exception& e) {
        PyObject* openmmModule = PyImport_ImportModule("openmm");
        PyObject* exceptionType = openmmModule ? PyObject_GetAttrString(openmmModule, "OpenMMException") : NULL;
        PyErr_SetString(exceptionType ? exceptionType : PyExc_Exception, e.what());
        Py_XDECREF(exceptionType);
        Py_XDECREF(openmmModule);
        SWIG_fail;
    }
}

namespace OpenMMDFT {

class QMMMForce : public OpenMM::Force {
public:
    enum NonbondedMethod {
        NoCutoff = 0,
        CutoffNonPeriodic = 1,
        CutoffPeriodic = 2
    };
    QMMMForce();
    int getNumParticles() const;
    int addParticle(double charge);
    %apply double& OUTPUT {double& charge};
    void getParticleParameters(int index, double& charge) const;
    %clear double& charge;
    void setParticleParameters(int index, double charge);

    int addBond(int particle1, int particle2);
    int getNumBonds() const;
    %apply int& OUTPUT {int& particle1};
    %apply int& OUTPUT {int& particle2};
    void getBondParameters(int index, int& particle1, int& particle2) const;
    %clear int& particle1;
    %clear int& particle2;

    double getCoulomb14Scale() const;
    void setCoulomb14Scale(double scale);
    NonbondedMethod getNonbondedMethod() const;
    void setNonbondedMethod(NonbondedMethod method);
    double getCutoffDistance() const;
    void setCutoffDistance(double distance);
    double getReactionFieldDielectric() const;
    void setReactionFieldDielectric(double dielectric);
    void updateParametersInContext(OpenMM::Context& context);
    bool usesPeriodicBoundaryConditions() const;

    %extend {
        /** Return a QMMMForce view of a Force known to be one (e.g. from System.getForce). */
        static OpenMMDFT::QMMMForce& cast(OpenMM::Force& force) {
            OpenMMDFT::QMMMForce* result = dynamic_cast<OpenMMDFT::QMMMForce*>(&force);
            if (result == NULL)
                throw OpenMM::OpenMMException("QMMMForce.cast: the Force is not a QMMMForce");
            return *result;
        }
        /** Whether a Force is a QMMMForce. */
        static bool isinstance(OpenMM::Force& force) {
            return (dynamic_cast<OpenMMDFT::QMMMForce*>(&force) != NULL);
        }
    }
};

}

/* Units on the values returned, as OpenMM's wrappers give them. */
%pythoncode %{
def _withUnit(method, unitOf):
    def wrapped(self, *args):
        return unitOf(method(self, *args))
    wrapped.__doc__ = method.__doc__
    wrapped.__name__ = method.__name__
    return wrapped

QMMMForce.getParticleParameters = _withUnit(QMMMForce.getParticleParameters, lambda q: q * unit.elementary_charge)
QMMMForce.getCutoffDistance = _withUnit(QMMMForce.getCutoffDistance, lambda d: d * unit.nanometer)
del _withUnit
%}
