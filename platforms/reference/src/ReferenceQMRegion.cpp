#include "ReferenceQMRegion.h"
#include "openmmdft/internal/AtomicUnits.h"
#include "openmmdft/LeastSquares.h"
#include "openmmdft/qm/LinearSolve.h"
#include "openmm/OpenMMException.h"
#include <dlfcn.h>
#include <sys/stat.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <numeric>

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
    double cubeEdge;
    force.getGridGrouping(cubeEdge, s.grid.sphereShellFraction);
    s.grid.cubeEdge = cubeEdge * BOHR_PER_NM;
    s.grid.significanceExponent = force.getSignificanceThreshold();
    s.storage = (force.getBasisFunctionStorage() == QMMMForce::Recompute ? QM::BasisFunctionStorage::Recompute
                                                                         : QM::BasisFunctionStorage::Precompute);
    s.convergence = force.getSCFConvergence();
    s.maxIterations = force.getMaxSCFIterations();
    s.diisSubspace = force.getDIISSubspaceSize();
    s.dataDirectory = ReferenceQMRegion::findDataDirectory();
    return s;
}

static bool isDirectory(const string& path) {
    struct stat info;
    return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

string ReferenceQMRegion::findDataDirectory() {
    if (const char* env = getenv("OPENMMDFT_QM_DATA_DIR"))
        return env;
    // The basis sets are installed relative to this library: a pip install puts the library in
    // site-packages/OpenMM.libs/lib/plugins and the data in site-packages/openmmdft/qmdata; a
    // CMake install in <prefix>/lib/plugins and <prefix>/share/openmmdft/qmdata.
    Dl_info info;
    if (dladdr((void*) &ReferenceQMRegion::findDataDirectory, &info) != 0 && info.dli_fname != NULL) {
        string library(info.dli_fname);
        string folder = library.substr(0, library.find_last_of('/'));
        for (const char* relative : {"/../../../openmmdft/qmdata", "/../../share/openmmdft/qmdata"})
            if (isDirectory(folder + relative + "/basis"))
                return folder + relative;
    }
    return "";  // the engine then falls back to the source tree's qmengine/data
}

ReferenceQMRegion::ReferenceQMRegion(const QMMMForce& force) : computed(false) {
    vector<bool> isQM(force.getNumParticles(), false);
    for (int i = 0; i < force.getNumQMAtoms(); i++) {
        int particle, z;
        force.getQMAtomParameters(i, particle, z);
        qmParticles.push_back(particle);
        qmAtomicNumbers.push_back(z);
        isQM[particle] = true;
    }
    // Molecules = connected components of the bond graph (union-find).
    vector<int> parent(force.getNumParticles());
    iota(parent.begin(), parent.end(), 0);
    function<int(int)> root = [&](int i) { return parent[i] == i ? i : parent[i] = root(parent[i]); };
    for (int i = 0; i < force.getNumBonds(); i++) {
        int p1, p2;
        force.getBondParameters(i, p1, p2);
        parent[root(p1)] = root(p2);
    }
    vector<int> moleculeOfRoot(force.getNumParticles(), -1);
    for (int i = 0; i < force.getNumParticles(); i++) {
        if (isQM[i])
            continue;
        int r = root(i);
        if (moleculeOfRoot[r] < 0) {
            moleculeOfRoot[r] = mmMolecules.size();
            mmMolecules.push_back(vector<int>());
        }
        mmMolecules[moleculeOfRoot[r]].push_back(i);
    }
    setParameters(force);
}

void ReferenceQMRegion::setParameters(const QMMMForce& force) {
    charges.resize(force.getNumParticles());
    for (int i = 0; i < force.getNumParticles(); i++)
        force.getParticleParameters(i, charges[i]);
    qmCharge = force.getQMCharge();
    method = force.getNonbondedMethod();
    cutoff = force.getCutoffDistance();
    // updateParametersInContext is rare: rebuilding the engine (parsing basis sets) each time is cheap enough.
    settings = settingsOf(force);
    engine.reset(new QM::KohnShamLDA(settings));
    previousDensity.reset();
    espCharges.reset(force.getESPChargeMethod() == QMMMForce::NoESPCharges ? nullptr
                     : new ReferenceESPCharges(force.getESPChargeMethod(), settings.threads));
}

/** Minimum-image displacement b - a in OpenMM's reduced triclinic box. */
static Vec3 minimumImage(const Vec3& a, const Vec3& b, const Vec3* box) {
    Vec3 d = b - a;
    d -= box[2] * floor(d[2] / box[2][2] + 0.5);
    d -= box[1] * floor(d[1] / box[1][1] + 0.5);
    d -= box[0] * floor(d[0] / box[0][0] + 0.5);
    return d;
}

void ReferenceQMRegion::selectMMCharges(const vector<Vec3>& qmPositions, const vector<Vec3>& positions, const Vec3* boxVectors,
                                        vector<QM::PointCharge>& selected, vector<int>& selectedParticles) const {
    bool periodic = (method == QMMMForce::CutoffPeriodic);
    double cutoff2 = cutoff * cutoff;
    auto add = [&](const Vec3& p, int particle) {
        if (charges[particle] != 0.0) {
            selected.push_back({{p[0] * BOHR_PER_NM, p[1] * BOHR_PER_NM, p[2] * BOHR_PER_NM}, charges[particle]});
            selectedParticles.push_back(particle);
        }
    };
    for (const vector<int>& mol : mmMolecules) {
        if (method == QMMMForce::NoCutoff) {
            for (int p : mol)
                add(positions[p], p);
            continue;
        }
        // Image the molecule as a whole: its first atom next to the first QM atom, the rest next to it.
        vector<Vec3> placed(mol.size());
        placed[0] = periodic ? qmPositions[0] + minimumImage(qmPositions[0], positions[mol[0]], boxVectors) : positions[mol[0]];
        for (size_t k = 1; k < mol.size(); k++)
            placed[k] = periodic ? placed[0] + minimumImage(placed[0], positions[mol[k]], boxVectors) : positions[mol[k]];
        bool within = false;
        for (size_t k = 0; k < mol.size() && !within; k++)
            for (const Vec3& q : qmPositions) {
                Vec3 d = placed[k] - q;
                if (d.dot(d) < cutoff2) {
                    within = true;
                    break;
                }
            }
        if (within)
            for (size_t k = 0; k < mol.size(); k++)
                add(placed[k], mol[k]);
    }
}

double ReferenceQMRegion::compute(ContextImpl& context, const vector<Vec3>& positions, const Vec3* boxVectors, vector<Vec3>* forces) {
    // The QM region is kept whole: every QM atom at its minimum image from the first one.
    vector<Vec3> qmPositions(qmParticles.size());
    for (size_t i = 0; i < qmParticles.size(); i++)
        qmPositions[i] = (method == QMMMForce::CutoffPeriodic && i > 0)
                             ? qmPositions[0] + minimumImage(qmPositions[0], positions[qmParticles[i]], boxVectors)
                             : positions[qmParticles[i]];
    vector<QM::QMAtom> atoms(qmParticles.size());
    for (size_t i = 0; i < qmParticles.size(); i++)
        atoms[i] = {qmAtomicNumbers[i], {qmPositions[i][0] * BOHR_PER_NM, qmPositions[i][1] * BOHR_PER_NM, qmPositions[i][2] * BOHR_PER_NM}};
    vector<QM::PointCharge> mm;
    vector<int> mmParticles;
    selectMMCharges(qmPositions, positions, boxVectors, mm, mmParticles);
    // Density fitting solves its normal equations (the Coulomb metric) through the plugin's
    // least-squares kernel, created once in this Context.
    if (!fitSolver)
        fitSolver.reset(new LeastSquaresSolver(context));
    QM::ScopedNormalEquationSolver throughKernel([this](const Eigen::MatrixXd& A, Eigen::MatrixXd& B) {
        const int n = A.rows(), nrhs = B.cols();
        // The metric is symmetric up to rounding; symmetrize so column-major and row-major agree exactly.
        Eigen::MatrixXd symmetric = 0.5 * (A + A.transpose());
        vector<double> a(symmetric.data(), symmetric.data() + (size_t) n * n);
        Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rowMajorB = B;
        vector<double> b(rowMajorB.data(), rowMajorB.data() + (size_t) n * nrhs);
        LeastSquaresOptions options;
        options.method = LeastSquaresMethod::Cholesky;
        options.normalEquationsGiven = true;
        options.computeResidualNorms = false;
        LeastSquaresResult x = fitSolver->solve(n, n, nrhs, a, b, options);
        B = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> >(x.x.data(), n, nrhs);
    });
    QM::QMResult r = engine->compute(atoms, qmCharge, mm, previousDensity.get());
    // MD moves atoms a little each step: the next SCF starts from this density.
    previousDensity.reset(new QM::DensityGuess(r.guess()));
    results.totalEnergy = r.total * KJ_PER_MOL_PER_HARTREE;
    results.oneElectronEnergy = r.oneElectron * KJ_PER_MOL_PER_HARTREE;
    results.coulombEnergy = r.coulomb * KJ_PER_MOL_PER_HARTREE;
    results.exchangeCorrelationEnergy = r.xc * KJ_PER_MOL_PER_HARTREE;
    results.nuclearRepulsionEnergy = r.nuclearRepulsion * KJ_PER_MOL_PER_HARTREE;
    results.qmmmEnergy = r.qmmm * KJ_PER_MOL_PER_HARTREE;
    results.scfIterations = r.iterations;
    results.numMMCharges = mm.size();
    results.orbitalEnergies.resize(r.orbitalEnergies.size());
    for (size_t i = 0; i < r.orbitalEnergies.size(); i++)
        results.orbitalEnergies[i] = r.orbitalEnergies[i] * KJ_PER_MOL_PER_HARTREE;
    results.homoLumoGap = r.homoLumoGap * KJ_PER_MOL_PER_HARTREE;
    results.espCharges.clear();
    if (espCharges)
        results.espCharges = espCharges->compute(context, qmPositions, qmAtomicNumbers, qmCharge, engine->basis(), r.density);
    if (forces) {
        // A force on an imaged position acts on the particle itself.
        const QM::QMGradient g = engine->gradient(r);
        for (size_t i = 0; i < qmParticles.size(); i++)
            (*forces)[qmParticles[i]] -= Vec3(g.atoms(i, 0), g.atoms(i, 1), g.atoms(i, 2)) * KJ_PER_MOL_NM_PER_HARTREE_BOHR;
        for (size_t c = 0; c < mmParticles.size(); c++)
            (*forces)[mmParticles[c]] -= Vec3(g.mm(c, 0), g.mm(c, 1), g.mm(c, 2)) * KJ_PER_MOL_NM_PER_HARTREE_BOHR;
    }
    computed = true;
    return results.totalEnergy;
}
