#include "QMRegionDriver.h"
#include "EwaldLongRange.h"
#include "openmmdft/internal/AtomicUnits.h"
#include "openmmdft/LeastSquares.h"
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/LinearSolve.h"
#include "openmm/OpenMMException.h"
#include "openmm/CustomIntegrator.h"
#include "openmm/Platform.h"
#include "openmm/internal/ContextImpl.h"
#include "openmmdft/internal/MinimizerDetection.h"
#include <sstream>
#include <dlfcn.h>
#include <sys/stat.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <cstdlib>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace OpenMMDFT::AtomicUnits;
using namespace std;

static QM::QMSettings settingsOf(const QMMMForce& force) {
    QM::QMSettings s;
    s.basisSet = force.getBasisSet();
    s.auxiliaryBasisSet = force.getAuxiliaryBasisSet();
    s.angular = (force.getAngularFunctions() == QMMMForce::Cartesian ? QM::AngularConvention::Cartesian
                 : force.getAngularFunctions() == QMMMForce::Spherical ? QM::AngularConvention::Spherical
                                                                        : QM::AngularConvention::BasisDefault);
    s.coulomb = (force.getCoulombMethod() == QMMMForce::Exact ? QM::CoulombMethod::Exact : QM::CoulombMethod::DensityFitting);
    s.functional = (force.getFunctional() == "SVWN_RPA" ? QM::Functional::SVWN_RPA : QM::Functional::SVWN5);
    force.getGrid(s.grid.radialPoints, s.grid.angularPoints);
    s.grid.radialScheme = (force.getRadialScheme() == QMMMForce::BeckeChebyshev ? QM::RadialScheme::BeckeChebyshev
                                                                                 : QM::RadialScheme::TreutlerAhlrichs);
    s.grid.partition = (force.getAtomicPartition() == QMMMForce::StratmannScuseriaFrisch ? QM::AtomicPartition::StratmannScuseriaFrisch
                                                                                          : QM::AtomicPartition::Becke);
    s.grid.pruning = (force.getGridPruning() == QMMMForce::NWChemPruning ? QM::GridPruning::NWChem
                      : force.getGridPruning() == QMMMForce::TreutlerAhlrichsPruning ? QM::GridPruning::TreutlerAhlrichs
                                                                                     : QM::GridPruning::None);
    double cubeEdge;
    force.getGridGrouping(cubeEdge, s.grid.sphereShellFraction);
    s.grid.cubeEdge = cubeEdge * BOHR_PER_NM;
    s.grid.significanceExponent = force.getSignificanceThreshold();
    s.storage = (force.getBasisFunctionStorage() == QMMMForce::Recompute ? QM::BasisFunctionStorage::Recompute
                                                                         : QM::BasisFunctionStorage::Precompute);
    s.grid.maxStoredBasisMiB = force.getBasisStorageLimit();
    s.convergence = force.getSCFConvergence();
    s.maxIterations = force.getMaxSCFIterations();
    s.diisSubspace = force.getDIISSubspaceSize();
    s.recycledSubspace = force.getRecycledSubspaceSize();
    s.coulombResponseSteps = force.getCoulombResponseSteps();
    s.dataDirectory = QMRegionDriver::findDataDirectory();
    return s;
}

static bool isDirectory(const string& path) {
    struct stat info;
    return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

string QMRegionDriver::findDataDirectory() {
    if (const char* env = getenv("OPENMMDFT_QM_DATA_DIR"))
        return env;
    // The basis sets are installed relative to this library: a pip install puts the library in
    // site-packages/OpenMM.libs/lib/plugins and the data in site-packages/openmmdft/qmdata; a
    // CMake install in <prefix>/lib/plugins and <prefix>/share/openmmdft/qmdata.
    Dl_info info;
    if (dladdr((void*) &QMRegionDriver::findDataDirectory, &info) != 0 && info.dli_fname != NULL) {
        string library(info.dli_fname);
        string folder = library.substr(0, library.find_last_of('/'));
        for (const char* relative : {"/../../../openmmdft/qmdata", "/../../share/openmmdft/qmdata"})
            if (isDirectory(folder + relative + "/basis"))
                return folder + relative;
    }
    return "";  // the engine then falls back to the source tree's qmengine/data
}

QMRegionDriver::QMRegionDriver(const QMMMForce& force, int threads, bool espOnContextKernel, bool metricOnContextKernel,
                               shared_ptr<const QM::XCBackendFactory> xcFactory)
    : embedding(force), threads(threads), espOnContextKernel(espOnContextKernel), metricOnContextKernel(metricOnContextKernel),
      xcFactory(xcFactory) {
    setParameters(force);
}

void QMRegionDriver::setParameters(const QMMMForce& force) {
    // Build everything that can fail first (parsing basis sets, checking settings), then commit.
    QM::QMSettings newSettings = settingsOf(force);
    newSettings.threads = threads;
    // Density fitting solves its normal equations (the Coulomb metric) through the plugin's least-squares kernel,
    // created once (compute() makes it before the engine runs).
    QM::NormalEquationSolver metricSolver = [this](const Eigen::MatrixXd& A, Eigen::MatrixXd& B) {
        if (metricFit == nullptr)
            throw OpenMMException("QMMMForce: the least-squares kernel for density fitting is missing (internal error)");
        solveMetric(*metricFit, A, B);
    };
    unique_ptr<QM::KohnShamLDA> newEngine(new QM::KohnShamLDA(newSettings, xcFactory, metricSolver));
    unique_ptr<DensityExtrapolation> newHistory(
        new DensityExtrapolation(force.getDensityExtrapolation(), force.getDensityExtrapolationOrder()));
    unique_ptr<ESPChargeFit> newESP(force.getESPChargeMethod() == QMMMForce::NoESPCharges ? nullptr
                                    : new ESPChargeFit(force.getESPChargeMethod(), threads));
    embedding.setParameters(force);
    ewald = force.getNonbondedMethod() == QMMMForce::Ewald;
    ewaldTolerance = force.getEwaldErrorTolerance();
    qmCharge = force.getQMCharge();
    energyOnly = force.getQMEnergyOnly();
    settings = newSettings;
    engine = move(newEngine);
    espCharges = move(newESP);
    // A new basis or grid makes the old densities meaningless; a new charge makes them the wrong size.
    densityHistory = move(newHistory);
    last.valid = false;
}

bool QMRegionDriver::LastEvaluation::matches(const vector<Vec3>& positions, const Vec3* boxVectors, bool needForces) const {
    if (!valid || (needForces && !hasForces) || positions != this->positions || (boxVectors != nullptr) != periodic)
        return false;
    return boxVectors == nullptr || (boxVectors[0] == box[0] && boxVectors[1] == box[1] && boxVectors[2] == box[2]);
}

void QMRegionDriver::checkPositionsAreFinite(const vector<Vec3>& positions) const {
    OpenMMDFT::checkPositionsAreFinite(positions, nanForcesBecause.empty() ? ""
                                       : "the previous evaluation returned NaN forces on the QM atoms: " + nanForcesBecause);
}

double QMRegionDriver::execute(ContextImpl& context, const vector<Vec3>& positions, const Vec3* boxVectors, vector<Vec3>& forces,
                               bool includeForces, bool includeEnergy) {
    rejected = false;
    nanForcesBecause.clear();
    if (energyOnly && includeForces) {
        // Energy-only mode has no QM forces. Forces alone are an integrator step; the minimizer is recognized
        // from the call stack, and a CustomIntegrator (the one integrator that asks for energy and forces in
        // one step) from the Context: all refused. What is left is getState(getEnergy=True), which asks for
        // forces too whenever the integrator's kinetic energy needs them (Verlet): the QM atoms get NaN
        // forces, so a single point keeps its potential energy and nothing can use the forces unnoticed.
        const char* why = "energy-only mode (setQMEnergyOnly) has no QM forces, so it cannot be used for dynamics or "
                          "minimization; call setQMEnergyOnly(False)";
        if (!includeEnergy || insideEnergyMinimization() || dynamic_cast<const CustomIntegrator*>(&context.getIntegrator())) {
            markFailed(why);
            throw OpenMMException(string("QMMMForce: ") + why);
        }
        const double energy = compute(context, positions, boxVectors, nullptr);
        setNaNForces(forces, why);
        return energy;
    }
    try {
        // The Reference platform passes the forces of the other Forces too: only a force this evaluation made
        // non-finite is its fault.
        const vector<int> before = includeForces ? nonFiniteForces(forces) : vector<int>();
        const double energy = compute(context, positions, boxVectors, includeForces ? &forces : nullptr);
        if (includeForces) {
            const vector<int> after = nonFiniteForces(forces);
            vector<int> made;
            set_difference(after.begin(), after.end(), before.begin(), before.end(), back_inserter(made));
            if (!made.empty()) {
                markFailed("non-finite force");
                throw OpenMMException("QMMMForce: the QM/MM force on particle " + to_string(made[0]) + " is not finite (NaN or "
                                      "infinite): an internal error of the QM gradient; please report it with the System");
            }
        }
        return energy;
    }
    catch (const QM::SCFConvergenceError& e) {
        // Inside energy minimization an SCF failure is a trial step too far: L-BFGS treats +infinity as a
        // rejected step and shortens it (the NaN forces are never used). Anywhere else it raises: dynamics
        // and single points fail closed.
        if (!insideEnergyMinimization())
            throw;
        setNaNForces(forces, e.what());
        rejected = true;
        return INFINITY;
    }
}

void QMRegionDriver::solveMetric(LeastSquaresSolver& fit, const Eigen::MatrixXd& A, Eigen::MatrixXd& B) {
    const int n = A.rows(), nrhs = B.cols();
    // The metric is symmetric up to rounding; symmetrize so column-major and row-major agree exactly.
    vector<double> a((size_t) n * n);
    Eigen::Map<Eigen::MatrixXd>(a.data(), n, n) = 0.5 * (A + A.transpose());
    LeastSquaresOptions options;
    options.method = LeastSquaresMethod::Cholesky;
    if (B.rows() == n && B.cols() == n && B.isIdentity(0.0)) {
        // The inverse (what the density fitting asks for), without the passes over the identity as right-hand sides.
        const LeastSquaresResult inverse = fit.invertSymmetricPositiveDefinite(n, a, options);
        B = Eigen::Map<const Eigen::MatrixXd>(inverse.x.data(), n, n);  // symmetric: either layout
        return;
    }
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rowMajorB = B;
    vector<double> b(rowMajorB.data(), rowMajorB.data() + (size_t) n * nrhs);
    options.normalEquationsGiven = true;
    options.computeResidualNorms = false;
    LeastSquaresResult x = fit.solve(n, n, nrhs, a, b, options);
    B = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> >(x.x.data(), n, nrhs);
}

vector<int> QMRegionDriver::nonFiniteForces(const vector<Vec3>& forces) {
    // A non-finite force must never reach an integrator: the GPU platforms' fixed-point force buffers would turn it
    // into a huge finite one. (Energy-only mode and rejected minimizer steps set NaN forces on purpose, elsewhere.)
    vector<int> particles;
    for (size_t i = 0; i < forces.size(); i++)
        if (!isfinite(forces[i][0]) || !isfinite(forces[i][1]) || !isfinite(forces[i][2]))
            particles.push_back((int) i);
    return particles;
}

void QMRegionDriver::setNaNForces(vector<Vec3>& forces, const string& why) {
    for (int particle : embedding.getQMParticles())
        forces[particle] = Vec3(NAN, NAN, NAN);
    nanForcesBecause = why;
}

LeastSquaresSolver* QMRegionDriver::newHostSolver() {
    for (int i = 0; i < Platform::getNumPlatforms(); i++)
        if (Platform::getPlatform(i).getName() == "CPU")
            return new LeastSquaresSolver(Platform::getPlatform(i));
    return new LeastSquaresSolver(Platform::getPlatformByName("Reference"));
}

LeastSquaresSolver& QMRegionDriver::fitSolver(ContextImpl& context, bool onContextKernel) {
    unique_ptr<LeastSquaresSolver>& solver = onContextKernel ? contextSolver : hostSolver;
    if (!solver)
        solver.reset(onContextKernel ? new LeastSquaresSolver(context) : newHostSolver());
    return *solver;
}

void QMRegionDriver::addSwitchingForces(const QMEmbedding::Placement& placement, const vector<QM::QMAtom>& atoms,
                                        const Eigen::MatrixXd& density, const vector<double>& extraPotential,
                                        vector<Vec3>& forces) const {
    // A molecule in the switching shell has its charges scaled by S(R): E depends on R through S as well, with
    // dE/dS = sum of its (unscaled) charges times the QM region's potential there (nuclei and electrons; the SCF
    // energy is stationary in the density, so no response term), and R on the closest MM-QM pair. The MM end of
    // that pair is a charge's particle (a boundary charge never is: it is no atom), the QM end a QM atom.
    for (const QMEmbedding::Placement::Switched& sw : placement.switched) {
        double dEdS = 0;  // hartree
        for (int c = sw.firstCharge; c < sw.endCharge; c++) {
            const Vec3 r = placement.mmPositions[c] * BOHR_PER_NM;
            const double point[3] = {r[0], r[1], r[2]};
            dEdS += placement.mmBaseCharges[c] * QM::electrostaticPotential(engine->basis(), density, atoms, point);
            if (!extraPotential.empty())
                dEdS += placement.mmBaseCharges[c] * extraPotential[c];
        }
        const double distance = sqrt(sw.delta.dot(sw.delta));
        const Vec3 force = sw.delta * (dEdS * sw.slope * KJ_PER_MOL_PER_HARTREE / distance);  // dE/dr_mm, kJ/mol/nm
        forces[sw.mmParticle] -= force;
        forces[embedding.getQMParticles()[sw.qmAtom]] += force;
    }
}

void QMRegionDriver::addLinkAtomForces(const QMEmbedding::Placement& placement, const Eigen::MatrixXd& gradient,
                                       vector<Vec3>& forces) const {
    // L = Q + d u, u = (M - Q) / |M - Q|: dL/dM = (d / r)(1 - u u^T) and dL/dQ = 1 - dL/dM, so a force F on the
    // link hydrogen gives M1 (d / r)(F - u (u.F)) and Q1 the rest.
    const vector<QMEmbedding::Link>& links = embedding.getLinks();
    const size_t first = embedding.getQMParticles().size();
    for (size_t l = 0; l < links.size(); l++) {
        const Vec3 f = -Vec3(gradient(first + l, 0), gradient(first + l, 1), gradient(first + l, 2)) * KJ_PER_MOL_NM_PER_HARTREE_BOHR;
        const Vec3 q1 = placement.qmPositions[links[l].qmAtom], bond = placement.linkMMPositions[l] - q1;
        const double r = sqrt(bond.dot(bond));
        const Vec3 u = bond / r;
        const Vec3 onM1 = (f - u * u.dot(f)) * (links[l].bondLength / r);
        forces[links[l].mmParticle] += onM1;
        forces[embedding.getQMParticles()[links[l].qmAtom]] += f - onM1;
    }
}

const QMResults& QMRegionDriver::getResults() const {
    if (!computed) {
        if (!lastFailure.empty())
            throw OpenMMException("QMMMForce.getQMResults: the last QM computation in this Context failed, so there are no "
                                  "results for the current positions (" + lastFailure + ")");
        throw OpenMMException("QMMMForce.getQMResults: no QM computation has been done in this Context yet");
    }
    return results;
}

double QMRegionDriver::compute(ContextImpl& context, const vector<Vec3>& positions, const Vec3* boxVectors, vector<Vec3>* forces) {
    // Results are valid only for the positions of a computation that succeeded.
    computed = false;
    lastFailure.clear();
    // The QM energy and forces are a function of the positions and parameters alone. An evaluation at the
    // positions of the last one (a reporter's getState after a step, an MTS integrator's slow group) reuses
    // it: it costs nothing, and getQMResults keeps describing the step (its SCF iterations, its timings)
    // instead of a second SCF that restarts from the converged density.
    if (last.matches(positions, boxVectors, forces != nullptr)) {
        if (forces)
            for (const auto& f : last.forces)
                (*forces)[f.first] += f.second;
        computed = true;
        return last.energy;
    }
    last.valid = false;
    // An energy alone (a reporter's getState under an integrator whose kinetic energy needs no forces, such as
    // LangevinMiddleIntegrator) is followed by the next step's forces at the same positions: they are computed now, so
    // that the step reuses this evaluation instead of repeating the set-up and the SCF. Energy-only mode has none.
    const bool withForces = forces != nullptr || !energyOnly;
    try {
        vector<Vec3> added;
        if (withForces)
            added.assign(forces ? forces->size() : positions.size(), Vec3());
        double energy = computeOrThrow(context, positions, boxVectors, withForces ? &added : nullptr);
        last.forces.clear();
        for (size_t i = 0; i < added.size(); i++)
            if (added[i] != Vec3()) {
                if (forces)
                    (*forces)[i] += added[i];
                last.forces.emplace_back((int) i, added[i]);
            }
        last.positions = positions;
        last.periodic = boxVectors != nullptr;
        for (int k = 0; k < 3 && boxVectors != nullptr; k++)
            last.box[k] = boxVectors[k];
        last.energy = energy;
        last.hasForces = withForces;
        last.valid = true;
        computed = true;
        return energy;
    }
    catch (const exception& e) {
        lastFailure = e.what();
        throw;
    }
}

void QMRegionDriver::checkCoordinateMagnitudes(const QMEmbedding::Placement& placement) const {
    // The engine's integrals take differences of absolute coordinates: at 1e6 nm their rounding reaches 1e-10 nm, and
    // far beyond it the Gaussian products overflow. Finite positions that far out are named here instead.
    const double limit = 1e6;  // nm
    auto tooFar = [&](const Vec3& p) { return !(fabs(p[0]) <= limit && fabs(p[1]) <= limit && fabs(p[2]) <= limit); };
    const vector<int>& qmParticles = embedding.getQMParticles();
    for (size_t i = 0; i < placement.qmPositions.size(); i++)
        if (tooFar(placement.qmPositions[i])) {
            stringstream msg;
            msg << "QMMMForce: ";
            if (i < qmParticles.size())
                msg << "QM atom " << i << " (particle " << qmParticles[i] << ")";
            else
                msg << "link hydrogen " << i - qmParticles.size();
            msg << " is at " << placement.qmPositions[i] << " nm; the QM region must lie within " << limit
                << " nm of the origin in each coordinate";
            throw OpenMMException(msg.str());
        }
    for (size_t c = 0; c < placement.mmPositions.size(); c++)
        if (tooFar(placement.mmPositions[c])) {
            stringstream msg;
            msg << "QMMMForce: the MM charge of particle " << placement.mmParticles[c] << " embedding the QM region is at "
                << placement.mmPositions[c] << " nm; it must lie within " << limit << " nm of the origin in each coordinate";
            throw OpenMMException(msg.str());
        }
}

double QMRegionDriver::computeOrThrow(ContextImpl& context, const vector<Vec3>& positions, const Vec3* boxVectors,
                                         vector<Vec3>* forces) {
    typedef chrono::steady_clock Clock;
    const auto since = [](Clock::time_point start) { return chrono::duration<double>(Clock::now() - start).count(); };
    const Clock::time_point start = Clock::now();
    const QMEmbedding::Placement placement = embedding.place(positions, boxVectors);
    const double embeddingSeconds = since(start);
    checkCoordinateMagnitudes(placement);
    // The QM atoms, then the link hydrogens (Placement::qmPositions holds both).
    const vector<Vec3>& qmPositions = placement.qmPositions;
    vector<int> qmAtomicNumbers = embedding.getQMAtomicNumbers();
    qmAtomicNumbers.resize(qmPositions.size(), 1);
    const vector<int>& qmParticles = embedding.getQMParticles();
    vector<QM::QMAtom> atoms(qmPositions.size());
    for (size_t i = 0; i < qmPositions.size(); i++)
        atoms[i] = {qmAtomicNumbers[i], {qmPositions[i][0] * BOHR_PER_NM, qmPositions[i][1] * BOHR_PER_NM, qmPositions[i][2] * BOHR_PER_NM}};
    vector<QM::PointCharge> mm(placement.mmPositions.size());
    for (size_t c = 0; c < mm.size(); c++) {
        const Vec3& p = placement.mmPositions[c];
        mm[c] = {{p[0] * BOHR_PER_NM, p[1] * BOHR_PER_NM, p[2] * BOHR_PER_NM}, placement.mmCharges[c]};
    }
    const vector<int>& mmParticles = placement.mmParticles;
    metricFit = &fitSolver(context, metricOnContextKernel);  // the engine's metric solver uses it
    // MD moves atoms a little each step: the SCF starts from the densities of the previous steps.
    int extrapolated = 0;
    const unique_ptr<QM::DensityGuess> guess = densityHistory->guess(qmPositions, extrapolated);
    // Ewald: the periodic MM charges beyond the explicit ones, and the QM region's images, at the Mulliken level.
    unique_ptr<EwaldLongRange> longRange;
    vector<EwaldLongRange::Charge> periodicCharges;
    vector<int> periodicOwner;  // the particle of each periodic charge, or -1 - k for placement.sites[k]
    QM::MullikenElectrostatics longRangeTerms;
    if (ewald) {
        Vec3 box[3];
        for (int k = 0; k < 3; k++)
            box[k] = boxVectors[k] * BOHR_PER_NM;
        longRange.reset(new EwaldLongRange(box, ewaldTolerance));
        for (int p = 0; p < (int) positions.size(); p++)
            if (!embedding.isQMParticle(p) && embedding.getCharge(p) != 0) {
                periodicCharges.push_back({positions[p] * BOHR_PER_NM, embedding.getCharge(p)});
                periodicOwner.push_back(p);
            }
        for (size_t k = 0; k < placement.sites.size(); k++) {
            const int c = placement.sites[k].charge;
            periodicCharges.push_back({placement.mmPositions[c] * BOHR_PER_NM, placement.mmBaseCharges[c]});
            periodicOwner.push_back(-1 - (int) k);
        }
        vector<Vec3> qmBohr(atoms.size());
        for (size_t i = 0; i < atoms.size(); i++)
            qmBohr[i] = Vec3(atoms[i].xyz[0], atoms[i].xyz[1], atoms[i].xyz[2]);
        vector<EwaldLongRange::Charge> explicitCharges(mm.size());
        for (size_t c = 0; c < mm.size(); c++)
            explicitCharges[c] = {Vec3(mm[c].xyz[0], mm[c].xyz[1], mm[c].xyz[2]), mm[c].charge};
        longRangeTerms = longRange->terms(qmBohr, periodicCharges, explicitCharges);
    }
    // With forces, the gradient comes first, and the final Fock matrix's orbitals (the results' orbital energies, the
    // next step's starting orbitals) are made beside it where a device computes it (KohnShamLDA::completeOrbitals).
    QM::QMResult r = engine->compute(atoms, qmCharge, mm, guess.get(), longRange ? &longRangeTerms : nullptr, forces != nullptr);
    std::unique_ptr<QM::QMGradient> gradient;
    if (forces)
        gradient.reset(new QM::QMGradient(engine->gradient(r)));
    engine->completeOrbitals(r);
    densityHistory->record(qmPositions, r.density, std::move(r.fockChanges), std::move(r.errorChanges),
                           std::move(r.coulombChanges), std::move(r.lowdinOrbitals), std::move(r.errorChangeGram));
    results.extrapolatedDensities = extrapolated;
    results.recycledDIISPairs = r.recycledPairs;
    results.totalEnergy = r.total * KJ_PER_MOL_PER_HARTREE;
    results.oneElectronEnergy = r.oneElectron * KJ_PER_MOL_PER_HARTREE;
    results.coulombEnergy = r.coulomb * KJ_PER_MOL_PER_HARTREE;
    results.exchangeCorrelationEnergy = r.xc * KJ_PER_MOL_PER_HARTREE;
    results.nuclearRepulsionEnergy = r.nuclearRepulsion * KJ_PER_MOL_PER_HARTREE;
    results.qmmmEnergy = r.qmmm * KJ_PER_MOL_PER_HARTREE;
    results.longRangeEnergy = r.longRange * KJ_PER_MOL_PER_HARTREE;
    results.mullikenCharges.assign(r.mullikenCharges.data(), r.mullikenCharges.data() + r.mullikenCharges.size());
    results.scfIterations = r.iterations;
    results.scfRestarts = r.restarts;
    results.xcBackend = r.xcBackend;
    results.basisValueBytes = (double) r.storedBasisBytes;
    results.basisStorageNotice = r.basisStorageNotice;
    results.coulombContractions = r.coulombContractions;
    results.densityFittingBytes = (double) r.densityFittingBytes;
    results.scfProducts = r.scfProducts;
    results.scfProductBytes = (double) r.scfProductBytes;
    results.deviceMemoryBytes = (double) engine->deviceBytes();  // after the gradient, which takes arrays of its own
    results.numMMCharges = mm.size();
    results.orbitalEnergies.resize(r.orbitalEnergies.size());
    for (size_t i = 0; i < r.orbitalEnergies.size(); i++)
        results.orbitalEnergies[i] = r.orbitalEnergies[i] * KJ_PER_MOL_PER_HARTREE;
    results.homoLumoGap = r.homoLumoGap * KJ_PER_MOL_PER_HARTREE;
    results.timings.clear();
    for (const auto& phase : r.timings)
        results.timings[phase.first == "total" ? "scf.total" : phase.first] = phase.second;
    results.timings["embedding"] = embeddingSeconds;
    results.espCharges.clear();
    const Clock::time_point espStart = Clock::now();
    if (espCharges)
        results.espCharges = espCharges->compute(fitSolver(context, espOnContextKernel), qmPositions, qmAtomicNumbers, qmCharge, engine->basis(), r.density);
    results.timings["espCharges"] = since(espStart);
    if (forces) {
        // A force on an imaged position acts on the particle itself.
        QM::QMGradient& g = *gradient;
        for (const auto& phase : g.timings)
            results.timings[phase.first] = phase.second;
        vector<double> switchPotential;  // the Ewald term's dE/d(charge) at each explicit charge (hartree / e)
        if (longRange) {
            const Clock::time_point ewaldStart = Clock::now();
            vector<Vec3> qmGradient(atoms.size()), periodicGradient(periodicCharges.size()), explicitGradient(mm.size());
            longRange->gradient(r.mullikenCharges, qmGradient, periodicGradient, explicitGradient, switchPotential);
            for (size_t i = 0; i < atoms.size(); i++)
                for (int d = 0; d < 3; d++)
                    g.atoms(i, d) += qmGradient[i][d];
            for (size_t c = 0; c < mm.size(); c++)
                for (int d = 0; d < 3; d++)
                    g.mm(c, d) += explicitGradient[c][d];
            // A periodic boundary charge is an explicit one too: its force joins that charge's, passed on below.
            for (size_t j = 0; j < periodicCharges.size(); j++) {
                if (periodicOwner[j] >= 0)
                    (*forces)[periodicOwner[j]] -= periodicGradient[j] * KJ_PER_MOL_NM_PER_HARTREE_BOHR;
                else
                    for (int d = 0; d < 3; d++)
                        g.mm(placement.sites[-1 - periodicOwner[j]].charge, d) += periodicGradient[j][d];
            }
            results.timings["gradient.ewald"] = since(ewaldStart);
        }
        for (size_t i = 0; i < qmParticles.size(); i++)
            (*forces)[qmParticles[i]] -= Vec3(g.atoms(i, 0), g.atoms(i, 1), g.atoms(i, 2)) * KJ_PER_MOL_NM_PER_HARTREE_BOHR;
        addLinkAtomForces(placement, g.atoms, *forces);
        vector<Vec3> chargeForces(mmParticles.size());
        for (size_t c = 0; c < mmParticles.size(); c++)
            chargeForces[c] = -Vec3(g.mm(c, 0), g.mm(c, 1), g.mm(c, 2)) * KJ_PER_MOL_NM_PER_HARTREE_BOHR;
        addSwitchingForces(placement, atoms, r.density, switchPotential, *forces);
        // A boundary charge between two particles passes its force on by its weights.
        vector<bool> onSite(mmParticles.size(), false);
        for (const QMEmbedding::Placement::Site& site : placement.sites) {
            (*forces)[site.particle1] += chargeForces[site.charge] * site.weight1;
            (*forces)[site.particle2] += chargeForces[site.charge] * site.weight2;
            onSite[site.charge] = true;
        }
        for (size_t c = 0; c < mmParticles.size(); c++)
            if (!onSite[c])
                (*forces)[mmParticles[c]] += chargeForces[c];
    }
    results.timings["total"] = since(start);
    return results.totalEnergy;
}
