/* SWIG interface of openmm-dft's Python module (openmmdft.core, re-exported by openmmdft).
 * It imports OpenMM's own SWIG declarations (shipped in the openmm wheel as
 * include/swig/OpenMMSwigHeaders.i) so QMMMForce is a subclass of openmm.Force, and
 * OpenMM's typemaps so arguments accept openmm.unit Quantities. */
%module(package="openmmdft") core

%import(module="openmm") "swig/OpenMMSwigHeaders.i"
%include "swig/typemaps.i"
%include "std_string.i"
%include "std_vector.i"
%include "std_map.i"

%{
#include "OpenMM.h"
#include "OpenMMAmoeba.h"
#include "OpenMMDrude.h"
#include "openmm/RPMDIntegrator.h"
#include "openmm/RPMDMonteCarloBarostat.h"
#include "openmmdft/QMMMForce.h"
#include "openmmdft/LeastSquares.h"
#include "openmmdft/internal/ESPGrid.h"
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

namespace std {
%template(vectord) vector<double>;
%template(vectori) vector<int>;
%template(mapsd) map<string, double>;
}

namespace OpenMMDFT {

struct QMResults {
    double totalEnergy;
    double oneElectronEnergy;
    double coulombEnergy;
    double exchangeCorrelationEnergy;
    double nuclearRepulsionEnergy;
    double qmmmEnergy;
    double longRangeEnergy;
    std::vector<double> mullikenCharges;
    int scfIterations;
    int scfRestarts;
    int extrapolatedDensities;
    int recycledDIISPairs;
    std::string xcBackend;
    double basisValueBytes;
    std::string basisStorageNotice;
    std::string coulombContractions;
    double densityFittingBytes;
    std::string scfProducts;
    double scfProductBytes;
    double deviceMemoryBytes;
    int numMMCharges;
    std::vector<double> orbitalEnergies;
    double homoLumoGap;
    std::vector<double> espCharges;
    std::map<std::string, double> timings;
};

class QMMMForce : public OpenMM::Force {
public:
    enum NonbondedMethod {
        NoCutoff = 0,
        CutoffNonPeriodic = 1,
        CutoffPeriodic = 2,
        Ewald = 3
    };
    enum CoulombMethod {
        DensityFitting = 0,
        Exact = 1
    };
    enum RadialScheme {
        TreutlerAhlrichs = 0,
        BeckeChebyshev = 1
    };
    enum AtomicPartition {
        Becke = 0,
        StratmannScuseriaFrisch = 1
    };
    enum GridPruning {
        NoPruning = 0,
        NWChemPruning = 1,
        TreutlerAhlrichsPruning = 2
    };
    enum BasisFunctionStorage {
        Precompute = 0,
        Recompute = 1
    };
    enum AngularFunctions {
        BasisSetDefault = 0,
        Cartesian = 1,
        Spherical = 2
    };
    enum DensityExtrapolation {
        PreviousDensity = 0,
        ASPC = 1,
        XLBOMD = 2,
        PolynomialExtrapolation = 3
    };
    enum ESPChargeMethod {
        NoESPCharges = 0,
        CHELPG = 1,
        MerzKollman = 2
    };
    enum BoundaryChargeScheme {
        RedistributedChargeAndDipole = 0,
        ChargeShift = 1
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
    void setEwaldErrorTolerance(double tolerance);
    double getEwaldErrorTolerance() const;
    int addQMAtom(int particleIndex, int atomicNumber);
    int getNumQMAtoms() const;
    %apply int& OUTPUT {int& particleIndex};
    %apply int& OUTPUT {int& atomicNumber};
    void getQMAtomParameters(int index, int& particleIndex, int& atomicNumber) const;
    %clear int& particleIndex;
    %clear int& atomicNumber;
    void setQMCharge(int charge);
    int getQMCharge() const;
    void setBasisSet(const std::string& nameOrPath);
    const std::string& getBasisSet() const;
    void setSphericalBasis(bool spherical);
    void setAngularFunctions(AngularFunctions functions);
    AngularFunctions getAngularFunctions() const;
    void setCoulombMethod(CoulombMethod method);
    CoulombMethod getCoulombMethod() const;
    void setAuxiliaryBasisSet(const std::string& nameOrPath);
    const std::string& getAuxiliaryBasisSet() const;
    void setFunctional(const std::string& name);
    const std::string& getFunctional() const;
    void setGrid(int radialPoints, int angularPoints);
    %apply int& OUTPUT {int& radialPoints};
    %apply int& OUTPUT {int& angularPoints};
    void getGrid(int& radialPoints, int& angularPoints) const;
    %clear int& radialPoints;
    %clear int& angularPoints;
    void setRadialScheme(RadialScheme scheme);
    RadialScheme getRadialScheme() const;
    void setAtomicPartition(AtomicPartition partition);
    AtomicPartition getAtomicPartition() const;
    void setGridPruning(GridPruning pruning);
    GridPruning getGridPruning() const;
    void setGridGrouping(double cubeEdge, double sphereShellFraction);
    %apply double& OUTPUT {double& cubeEdge};
    %apply double& OUTPUT {double& sphereShellFraction};
    void getGridGrouping(double& cubeEdge, double& sphereShellFraction) const;
    %clear double& cubeEdge;
    %clear double& sphereShellFraction;
    void setSignificanceThreshold(double threshold);
    double getSignificanceThreshold() const;
    void setBasisFunctionStorage(BasisFunctionStorage storage);
    BasisFunctionStorage getBasisFunctionStorage() const;
    void setBasisStorageLimit(double mebibytes);
    double getBasisStorageLimit() const;
    void setSCFConvergence(double threshold);
    double getSCFConvergence() const;
    void setMaxSCFIterations(int iterations);
    int getMaxSCFIterations() const;
    void setDensityExtrapolation(DensityExtrapolation method, int order = 3);
    DensityExtrapolation getDensityExtrapolation() const;
    int getDensityExtrapolationOrder() const;
    void setUseEmbeddingSwitchingFunction(bool use);
    bool getUseEmbeddingSwitchingFunction() const;
    void setEmbeddingSwitchingDistance(double distance);
    double getEmbeddingSwitchingDistance() const;
    void setQMForceGroup(int group);
    int getQMForceGroup() const;
    void setDIISSubspaceSize(int size);
    int getDIISSubspaceSize() const;
    void setRecycledSubspaceSize(int pairs);
    int getRecycledSubspaceSize() const;
    void setCoulombResponseSteps(int steps);
    int getCoulombResponseSteps() const;
    void setQMEnergyOnly(bool energyOnly);
    bool getQMEnergyOnly() const;
    void setESPChargeMethod(ESPChargeMethod method);
    ESPChargeMethod getESPChargeMethod() const;
    int getNumLinkAtoms() const;
    %apply int& OUTPUT {int& qmParticle};
    %apply int& OUTPUT {int& mmParticle};
    %apply double& OUTPUT {double& bondLength};
    void getLinkAtomParameters(int index, int& qmParticle, int& mmParticle, double& bondLength) const;
    %clear int& qmParticle;
    %clear int& mmParticle;
    %clear double& bondLength;
    void setLinkAtomBondLength(int atomicNumber, double length);
    double getLinkAtomBondLength(int atomicNumber) const;
    void setBoundaryChargeScheme(BoundaryChargeScheme scheme);
    BoundaryChargeScheme getBoundaryChargeScheme() const;
    OpenMMDFT::QMResults getQMResults(const OpenMM::Context& context) const;

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

/* Least squares: a flat interface here, the numpy-facing one in openmmdft/leastsquares.py. */
%inline %{
struct LeastSquaresOutput {
    std::vector<double> x, residualNorms, lagrangeMultipliers;
    int iterations, rank;
    bool rankDeficient;
    double conditionEstimate, relativeNormalResidual;
    long long deviceMemoryBytes;
    std::string platformName, precision;
};

LeastSquaresOutput _solveLeastSquares(const std::string& platformName, const std::string& precision, const std::string& method,
                                      int m, int n, int nrhs, const std::vector<double>& A, const std::vector<double>& b,
                                      int p, const std::vector<double>& C, const std::vector<double>& d,
                                      double tolerance, int maxIterations, double relaxation, bool allowRankDeficient) {
    OpenMMDFT::LeastSquaresOptions options;
    options.method = OpenMMDFT::leastSquaresMethodFromName(method);
    options.tolerance = tolerance;
    options.maxIterations = maxIterations;
    options.relaxation = relaxation;
    options.allowRankDeficient = allowRankDeficient;
    std::map<std::string, std::string> properties;
    if (!precision.empty())
        properties["Precision"] = precision;
    OpenMM::Platform& platform = OpenMM::Platform::getPlatformByName(platformName);
    OpenMMDFT::LeastSquaresResult r = (p > 0
        ? OpenMMDFT::solveConstrainedLeastSquares(platform, m, n, nrhs, A, b, p, C, d, options, properties)
        : OpenMMDFT::solveLeastSquares(platform, m, n, nrhs, A, b, options, properties));
    LeastSquaresOutput out;
    out.x = r.x;
    out.residualNorms = r.residualNorms;
    out.lagrangeMultipliers = r.lagrangeMultipliers;
    out.iterations = r.iterations;
    out.rank = r.rank;
    out.rankDeficient = r.rankDeficient;
    out.conditionEstimate = r.conditionEstimate;
    out.relativeNormalResidual = r.relativeNormalResidual;
    out.deviceMemoryBytes = r.deviceMemoryBytes;
    out.platformName = r.platformName;
    out.precision = r.precision;
    return out;
}
%}

/* ESP grid points (flat x, y, z in nm), the numpy-facing espGridPoints below. */
%inline %{
std::vector<double> _espGridPoints(const std::vector<double>& positions, const std::vector<int>& atomicNumbers, int method) {
    if (positions.size() != 3 * atomicNumbers.size())
        throw OpenMM::OpenMMException("espGridPoints: need 3 coordinates per atom");
    std::vector<OpenMM::Vec3> atoms;
    for (size_t i = 0; i < atomicNumbers.size(); i++)
        atoms.push_back(OpenMM::Vec3(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]));
    std::vector<OpenMM::Vec3> points;
    if (method == OpenMMDFT::QMMMForce::CHELPG)
        points = OpenMMDFT::chelpgGrid(atoms, atomicNumbers);
    else if (method == OpenMMDFT::QMMMForce::MerzKollman)
        points = OpenMMDFT::merzKollmanGrid(atoms, atomicNumbers);
    else
        throw OpenMM::OpenMMException("espGridPoints: method must be QMMMForce.CHELPG or QMMMForce.MerzKollman");
    std::vector<double> flat;
    for (const OpenMM::Vec3& p : points)
        flat.insert(flat.end(), {p[0], p[1], p[2]});
    return flat;
}
%}

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
QMMMForce.getEmbeddingSwitchingDistance = _withUnit(QMMMForce.getEmbeddingSwitchingDistance, lambda d: d * unit.nanometer)
QMMMForce.getLinkAtomParameters = _withUnit(QMMMForce.getLinkAtomParameters, lambda p: [p[0], p[1], p[2] * unit.nanometer])
QMMMForce.getLinkAtomBondLength = _withUnit(QMMMForce.getLinkAtomBondLength, lambda d: d * unit.nanometer)
QMMMForce.getGridGrouping = _withUnit(QMMMForce.getGridGrouping, lambda g: [g[0] * unit.nanometer, g[1]])

# Units on the arguments, checked as OpenMM's wrappers check them: a Quantity must be compatible with the argument's
# unit and is converted to it (angstrom to nm); a Quantity where a plain number is expected (a count, a scale, a
# threshold), or one of another dimension, is a TypeError rather than its bare number. numpy scalars count as numbers.
_ARGUMENT_UNITS = {
    "addParticle": [unit.elementary_charge],
    "setParticleParameters": [None, unit.elementary_charge],
    "setCutoffDistance": [unit.nanometer],
    "setEmbeddingSwitchingDistance": [unit.nanometer],
    "setLinkAtomBondLength": [None, unit.nanometer],
    "setGridGrouping": [unit.nanometer, None],
}


def _plainArgument(value, unitOf, method, position):
    if unit.is_quantity(value):
        if unitOf is None:
            if not value.unit.is_dimensionless():
                raise TypeError("QMMMForce.%s: argument %d is a plain number, not a Quantity in %s" % (method, position + 1, value.unit))
            value = value.value_in_unit(unit.dimensionless)
        elif not value.unit.is_compatible(unitOf):
            raise TypeError("QMMMForce.%s: argument %d in %s is not compatible with Unit \"%s\"" % (method, position + 1, value.unit, unitOf))
        else:
            value = value.value_in_unit(unitOf)
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        value = value.item()  # numpy scalar (int, float or bool) to the Python number; arrays pass as they are
    return value


def _withArgumentUnits(method, units):
    def wrapped(self, *args):
        converted = [_plainArgument(a, units[i] if i < len(units) else None, method.__name__, i) for i, a in enumerate(args)]
        return method(self, *converted)
    wrapped.__doc__ = method.__doc__
    wrapped.__name__ = method.__name__
    return wrapped


for _name in [n for n in dir(QMMMForce) if (n.startswith("set") or n.startswith("add")) and callable(getattr(QMMMForce, n))]:
    setattr(QMMMForce, _name, _withArgumentUnits(getattr(QMMMForce, _name), _ARGUMENT_UNITS.get(_name, [])))
del _name


def _qmResults(self, context):
    """What the last QM computation in ``context`` produced: a dict of energies (kJ/mol
    Quantities), SCF iterations, the number of MM charges in the QM Hamiltonian, orbital
    energies, SCF restarts (attempts that failed before the one that converged), the past densities the SCF's guess combined (extrapolatedDensities), the recycled DIIS directions from the previous steps (recycledDIISPairs), where the XC work ran
    ("host" or "device") and the bytes of basis values it keeps between SCF iterations, the HOMO-LUMO gap and the ESP charges (e, one per QM atom, then one per link hydrogen; empty unless
    setESPChargeMethod chose a method), with the Ewald method its long-range energy and Mulliken charges, and "timings": the wall-clock time of each phase of the computation
    (a dict of second Quantities: "scf.xc", "gradient.total", "total", ...; see QMResults in QMMMForce.h)."""
    r = QMMMForce._getQMResultsRaw(self, context)
    energy = unit.kilojoule_per_mole
    return {
        "totalEnergy": r.totalEnergy * energy,
        "oneElectronEnergy": r.oneElectronEnergy * energy,
        "coulombEnergy": r.coulombEnergy * energy,
        "exchangeCorrelationEnergy": r.exchangeCorrelationEnergy * energy,
        "nuclearRepulsionEnergy": r.nuclearRepulsionEnergy * energy,
        "qmmmEnergy": r.qmmmEnergy * energy,
        "longRangeEnergy": r.longRangeEnergy * energy,
        "mullikenCharges": [q * unit.elementary_charge for q in r.mullikenCharges],
        "scfIterations": r.scfIterations,
        "scfRestarts": r.scfRestarts,
        "extrapolatedDensities": r.extrapolatedDensities,
        "recycledDIISPairs": r.recycledDIISPairs,
        "xcBackend": r.xcBackend,
        "basisValueBytes": int(r.basisValueBytes),
        "basisStorageNotice": r.basisStorageNotice,
        "coulombContractions": r.coulombContractions,
        "densityFittingBytes": int(r.densityFittingBytes),
        "scfProducts": r.scfProducts,
        "scfProductBytes": int(r.scfProductBytes),
        "deviceMemoryBytes": int(r.deviceMemoryBytes),
        "numMMCharges": r.numMMCharges,
        "orbitalEnergies": list(r.orbitalEnergies) * energy,
        "homoLumoGap": r.homoLumoGap * energy,
        "espCharges": [q * unit.elementary_charge for q in r.espCharges],
        "timings": {name: seconds * unit.second for name, seconds in dict(r.timings).items()},
    }


def espGridPoints(positions, atomicNumbers, method):
    """The points (an (n, 3) numpy array, nm) where QMMMForce samples the ESP of the QM region for
    ESP charges: ``method`` is QMMMForce.CHELPG or QMMMForce.MerzKollman, ``positions`` the QM
    atoms' positions (nm, or a Quantity), ``atomicNumbers`` their elements. The same grid the
    Reference/CPU platform uses, e.g. to evaluate another program's potential on it."""
    import numpy as np
    if unit.is_quantity(positions):
        positions = positions.value_in_unit(unit.nanometer)
    flat = np.asarray(positions, dtype=float).reshape(-1)
    points = _espGridPoints([float(x) for x in flat], [int(z) for z in atomicNumbers], int(method))
    return np.asarray(points, dtype=float).reshape(-1, 3)


QMMMForce._getQMResultsRaw = QMMMForce.getQMResults
QMMMForce.getQMResults = _qmResults
del _withUnit
%}
