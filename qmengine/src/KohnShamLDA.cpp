#include "openmmdft/qm/KohnShamLDA.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmmdft/qm/IntegralGradients.h"
#include "openmmdft/qm/Elements.h"
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/XCBackend.h"
#include "openmmdft/qm/XCIntegrator.h"
#include "SCFIterations.h"
#include <openmm/OpenMMException.h>
#include <chrono>
#include <cmath>
#include <functional>
#include <future>
#include <iostream>
#include <mutex>
#include <sstream>

namespace OpenMMDFT {
namespace QM {

namespace {

/**
 * A density from another geometry (the previous MD step, or an extrapolation of several) made idempotent in
 * this geometry's overlap metric: P = D/2 -> 3 PSP - 2 PSPSP (McWeeny purification, R. McWeeny, Rev. Mod.
 * Phys. 32, 335 (1960)). Without it tr(DS) is not the electron count and DSD != 2D, errors of first order in
 * the change of S, which cost the SCF several iterations even for a tiny step. The products run where `products` runs
 * them (the SCF's device, where there is one; null: the host).
 */
Eigen::MatrixXd purifiedDensity(const Eigen::MatrixXd& D, const Eigen::MatrixXd& S, const MatrixProducts* products) {
    // S held where the products run for all passes; per pass P goes up, PSP and PS PSP come down.
    const MatrixProducts& m = chainProducts(products, 2.0 * S.size() * S.cols());
    const Held overlap = m.hold(S);
    Eigen::MatrixXd P = 0.5 * D;
    for (int k = 0; k < 4; k++) {
        const Held heldP = m.hold(P);
        const Held PS = m.multiply(heldP, false, overlap, false);
        const Held heldPSP = m.multiply(PS, false, heldP, false);
        const Eigen::MatrixXd PSP = m.fetch(heldPSP);
        const Eigen::MatrixXd next = 3 * PSP - 2 * m.fetch(m.multiply(PS, false, heldPSP, false));
        const double change = (next - P).cwiseAbs().maxCoeff();
        P = next;
        // McWeeny's iteration converges quadratically: the next pass would change P by about 16 change^2 (an MD
        // step's extrapolated density: 1.7e-4, 4.7e-7, 3.0e-12, 9e-16), so P is idempotent to 1e-10 (far below the
        // SCF's error threshold of 1e-7) once that is below it, without the passes that would only confirm it.
        if (16 * change * change < 1e-10)
            break;
    }
    return 2 * P;
}
constexpr double kBohrPerAngstrom = 1.0 / 0.52917721092;
constexpr double kMinimumDistance = 0.1 * kBohrPerAngstrom; // two atoms closer than 0.1 A are an input error

bool usePure(const QMSettings& s, const BasisDefinition& def) {
    if (s.angular == AngularConvention::Cartesian)
        return false;
    if (s.angular == AngularConvention::Spherical)
        return true;
    return def.sphericalByDefault;
}

/// The weights w_C = -q_C under which a PointChargeEvaluator's sum_C w_C <u|1/|r-C||v> is the electrons' potential
/// V = -sum_C q_C <u|1/|r-C||v> (pointChargeMatrix's and pointChargeGradient's).
std::vector<double> potentialWeights(const std::vector<PointCharge>& charges) {
    std::vector<double> weights;
    weights.reserve(charges.size());
    for (const PointCharge& c : charges)
        weights.push_back(-c.charge);
    return weights;
}

} // namespace

// One geometry: basis on the atoms, integrals, grid, XC and Coulomb builders.
struct KohnShamLDA::System {
    std::vector<QMAtom> atoms;
    std::vector<PointCharge> mm;
    BasisSet basis, aux;
    Eigen::MatrixXd S, Hcore, Vmm, X; // X: orthonormalizing transformation (nbf x nmo)
    bool symmetricX = false;          // X = S^-1/2 (no linear dependence dropped)
    double nuclearRepulsion = 0, nuclearMM = 0;
    std::unique_ptr<MolecularGrid> grid;
    std::unique_ptr<XCBackend> xc;
    std::unique_ptr<ExactCoulomb> exact;
    std::unique_ptr<DensityFittedCoulomb> fitted;
    std::map<std::string, double> timings;
    std::vector<int> atomOfFunction;           // the QM atom each basis function sits on
    bool hasLongRange = false;
    MullikenElectrostatics longRange;
    /// The final Fock matrix's orbitals being made on a thread of their own beside the gradient (compute() with
    /// deferOrbitals), into deferredOrbitals; pendingOrbitals is declared last, so that its destructor, which waits for
    /// the thread, runs before the members the thread reads (X) are destroyed.
    QMResult deferredOrbitals;
    std::future<void> pendingOrbitals;

    /// q_A = Z_A - sum_{mu on A} (D S)_{mu mu}, and V = potential + kernel q.
    void mulliken(const Eigen::MatrixXd& D, Eigen::VectorXd& q, Eigen::VectorXd& V) const {
        q.resize(atoms.size());
        for (size_t a = 0; a < atoms.size(); a++)
            q[a] = atoms[a].Z;
        for (int mu = 0; mu < D.rows(); mu++)
            q[atomOfFunction[mu]] -= D.row(mu).dot(S.col(mu));
        V = longRange.potential + longRange.kernel * q;
    }
    /// The Mulliken-level term's energy; its Fock matrix -1/2 S_{mu nu} (V_A(mu) + V_A(nu)) is added to F.
    double longRangeTerm(const Eigen::MatrixXd& D, Eigen::MatrixXd& F) const {
        Eigen::VectorXd q, V;
        mulliken(D, q, V);
        const int n = D.rows();
        for (int nu = 0; nu < n; nu++)
            for (int mu = 0; mu < n; mu++)
                F(mu, nu) -= 0.5 * S(mu, nu) * (V[atomOfFunction[mu]] + V[atomOfFunction[nu]]);
        return q.dot(longRange.potential) + 0.5 * q.dot(longRange.kernel * q);
    }

    System(const std::vector<QMAtom>& a, const std::vector<PointCharge>& mm, const QMSettings& s,
           const BasisDefinition& def, const BasisDefinition& auxDef, bool densityFitting, const XCBackendFactory& xcFactory,
           const NormalEquationSolver& metricSolver)
        : atoms(a), mm(mm), basis(def, a, usePure(s, def)) {
        double t = seconds();
        // Where a device computes the fitting tensor (a GPU platform), the host's share of the set-up runs beside the
        // device's: the orthonormalizing transformation, and from the start the fitting's Schwarz screening (Libint's
        // (ab|ab) of every shell pair, 0.028 s of an n = 24 set-up on a 16-core host, which the tensor's launch waits
        // for), while this thread mostly waits for the device's point-charge integrals and grid weights. On the host
        // platforms every core has integral work already: there they run in order.
        const bool besideTheDevice = densityFitting && xcFactory.pointCharges() != nullptr;
        std::shared_future<FittingPairs> screened;
        if (densityFitting) {
            // The auxiliary basis follows the orbital basis's angular convention (as PySCF does).
            try {
                aux = BasisSet(auxDef, atoms, basis.pure(), largestFittingShellL());
            }
            catch (const OpenMM::OpenMMException& e) {
                // Say why here: energies alone would work, the first forces would not.
                throw OpenMM::OpenMMException(std::string(e.what()) + " for the auxiliary basis (the density fitting's "
                                              "gradient raises each fitting shell's l by one, and this Libint2 goes to l = " +
                                              std::to_string(largestFittingShellL() + 1) + ")");
            }
            if (besideTheDevice)
                screened = std::async(std::launch::async, screenFittingPairs, std::cref(basis), std::cref(aux), s.integralThreshold,
                                      s.threads).share();
        }
        // The grid's partition weights where a device computes the fitting tensor (and the weights, on GPU platforms):
        // started first (the factory runs them on a queue of their own, beside the point charges' integrals and the
        // tensor queued next) and taken where the grid's grouping needs them, while the device computes the tensor.
        // Queued after the tensor on one queue, their kernel would wait for it, and the grouping with it.
        const double weightsStart = seconds();
        std::unique_ptr<AtomicGridWeightsInFlight> gridWeightsStarted;
        if (besideTheDevice)
            gridWeightsStarted.reset(new AtomicGridWeightsInFlight(
                startAtomicGridWeights(atoms, s.grid, s.threads, xcFactory.partitionWeights())));
        double gridSeconds = seconds() - weightsStart;
        // The point charges' potentials where the back end's factory computes them (a GPU platform), else on the host:
        // started here (on the device's XC queue, beside the host's one-electron integrals and the fitting tensor) and
        // taken at the end of the set-up where a device computes the tensor, else at once.
        double part = seconds();
        std::vector<PointCharge> nuclei;
        for (const QMAtom& at : atoms)
            nuclei.push_back({{at.xyz[0], at.xyz[1], at.xyz[2]}, (double) at.Z});
        const PointChargeEvaluator* deviceCharges = xcFactory.pointCharges();
        auto startChargeMatrix = [&](const std::vector<PointCharge>& charges, double threshold) {
            return deviceCharges != nullptr && !charges.empty()
                       ? deviceCharges->startMatrix(makePointChargeTask(basis, charges, threshold), potentialWeights(charges))
                       : std::unique_ptr<PointChargeMatrixInFlight>();
        };
        auto chargeMatrix = [&](std::unique_ptr<PointChargeMatrixInFlight>& started, const std::vector<PointCharge>& charges,
                                double threshold) -> Eigen::MatrixXd {
            if (started) {
                const Eigen::MatrixXd cartesian = started->finish();
                started.reset();
                return fromCartesianBasis(basis, cartesian);
            }
            return pointChargeMatrix(basis, charges, threshold, s.threads);
        };
        std::unique_ptr<PointChargeMatrixInFlight> nucleiStarted = startChargeMatrix(nuclei, 0.0);
        std::unique_ptr<PointChargeMatrixInFlight> mmStarted = startChargeMatrix(mm, s.integralThreshold);
        double chargeSeconds = seconds() - part;
        auto takeChargeMatrices = [&] {
            const double start = seconds();
            Vmm = chargeMatrix(mmStarted, mm, s.integralThreshold);
            Hcore = chargeMatrix(nucleiStarted, nuclei, 0.0);  // the kinetic energy is added below
            timings["setup.integrals.pointCharges"] = chargeSeconds + seconds() - start;
        };
        t = seconds();
        atomOfFunction.resize(basis.size());
        for (int sh = 0; sh < basis.numShells(); sh++) {
            const int end = sh + 1 < basis.numShells() ? basis.offset(sh + 1) : basis.size();
            for (int mu = basis.offset(sh); mu < end; mu++)
                atomOfFunction[mu] = basis.shells()[sh].atom;
        }
        S = overlapMatrix(basis, s.threads);
        const Eigen::MatrixXd kinetic = kineticMatrix(basis, s.threads);
        timings["setup.integrals.overlapAndKinetic"] = seconds() - t;
        if (!besideTheDevice)
            takeChargeMatrices();
        for (size_t i = 0; i < atoms.size(); i++) {
            for (size_t j = 0; j < i; j++)
                nuclearRepulsion += atoms[i].Z * atoms[j].Z / dist(atoms[i].xyz, atoms[j].xyz);
            for (const PointCharge& c : mm)
                nuclearMM += atoms[i].Z * c.charge / dist(atoms[i].xyz, c.xyz);
        }
        timings["setup.integrals"] = seconds() - t;
        // The orthonormalizing transformation from the overlap's eigensystem (dsyevd: 22 ms for 456 functions on a GPU
        // machine's 16-core host, where it threads poorly). Where a device computes the fitting tensor, on a thread of
        // its own while this one has the grid's weights computed and makes the fitting metric (no BLAS there: the
        // eigensolver holds DenseAlgebra's BLAS lock, which a host inverse of the metric, started next, takes after it;
        // a device's inverse does not take it); on the host platforms, whose cores all have integral work, in order.
        double orthogonalizationSeconds = 0;
        auto orthogonalize = [&] {
            const double start = seconds();
            Eigen::VectorXd overlapValues;
            Eigen::MatrixXd overlapVectors;
            symmetricEigensystem(S, overlapValues, overlapVectors);
            int keep = 0;
            for (int i = 0; i < overlapValues.size(); i++)
                keep += overlapValues[i] > s.linearDependenceThreshold;
            // Canonical orthogonalization drops the near-dependent combinations; without any, the symmetric (Loewdin)
            // S^-1/2 is used, which changes smoothly with the geometry, so that SCF errors of successive MD steps are
            // expressed in comparable bases (recycled DIIS subspace).
            X = overlapVectors.rightCols(keep) * overlapValues.tail(keep).cwiseSqrt().cwiseInverse().asDiagonal();
            symmetricX = keep == overlapValues.size();
            if (symmetricX)
                X = product(X, false, overlapVectors, true);
            orthogonalizationSeconds = seconds() - start;
        };
        std::future<void> orthogonalized = std::async(besideTheDevice ? std::launch::async : std::launch::deferred, orthogonalize);
        if (!besideTheDevice)
            orthogonalized.get();
        // The grid and the XC back end; with density fitting, while another thread factors the fitting metric.
        auto gridAndXC = [&] {
            double start = seconds();
            if (gridWeightsStarted) {
                AtomicGridWeights weights = gridWeightsStarted->finish();
                timings["setup.gridWeightsWait"] = seconds() - start;
                grid.reset(new MolecularGrid(atoms, basis, s.grid, s.threads, std::move(weights)));
            }
            else
                grid.reset(new MolecularGrid(atoms, basis, s.grid, s.threads, xcFactory.partitionWeights()));
            timings["setup.grid"] = gridSeconds + seconds() - start;
            start = seconds();
            xc = xcFactory.create(XCGeometry{basis, *grid, atoms, s});
            timings["setup.xc"] = seconds() - start;
        };
        if (!densityFitting)
            gridAndXC();
        t = seconds();
        if (densityFitting) {
            // The metric's inverse on the device where the factory makes it there (else, or where that fails, the
            // given solver's, or Eigen's Cholesky factorization). The device's runs without the BLAS lock
            // (DensityFittedCoulomb's inverseOnDevice), the host's fallback with it.
            NormalEquationSolver solver = metricSolver;
            if (xcFactory.invertsSymmetricPositiveDefinite())
                solver = [&xcFactory, metricSolver](const Eigen::MatrixXd& A, Eigen::MatrixXd& B) {
                    if (B.rows() == A.rows() && B.cols() == A.cols() && B.isIdentity(0.0) &&
                        xcFactory.invertSymmetricPositiveDefinite(0.5 * (A + A.transpose()), B))
                        return;
                    withOpenBLASThreads([&] {
                        if (metricSolver)
                            metricSolver(A, B);
                        else
                            solveSymmetricPositiveDefinite(A, B);
                    });
                };
            fitted.reset(new DensityFittedCoulomb(basis, aux, s.integralThreshold, s.threads, solver,
                                                  xcFactory.densityFittingContractions(), gridAndXC,
                                                  xcFactory.invertsSymmetricPositiveDefinite(), screened));
            for (const auto& part : fitted->timings())
                timings["setup.coulomb." + part.first] = part.second;
        }
        else
            exact.reset(new ExactCoulomb(basis, s.integralThreshold, s.threads));
        // With density fitting, the grid's and the XC back end's set-up are inside (run meanwhile).
        timings["setup.coulomb"] = seconds() - t - (densityFitting ? timings["setup.grid"] - gridSeconds + timings["setup.xc"] : 0.0);
        if (orthogonalized.valid()) {
            const double start = seconds();
            orthogonalized.get();  // rethrows the eigensolver's error
            timings["setup.integrals.orthogonalizationWait"] = seconds() - start;
        }
        timings["setup.integrals.orthogonalization"] = orthogonalizationSeconds;
        if (besideTheDevice)
            takeChargeMatrices();
        Hcore += kinetic;
    }
    static double dist(const double a[3], const double b[3]) {
        return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
    }
    Eigen::MatrixXd coulomb(const Eigen::MatrixXd& D) const {
        return fitted ? fitted->compute(D) : exact->compute(D);
    }
};


KohnShamLDA::KohnShamLDA(const QMSettings& settings, std::shared_ptr<const XCBackendFactory> xcFactory,
                         NormalEquationSolver metricSolver)
    : settings_(settings), xcFactory_(xcFactory ? xcFactory : std::make_shared<HostXCBackendFactory>()),
      metricSolver_(std::move(metricSolver)) {
    // Once per process: a BLAS on its slow fallback kernels is a setting away from twice the speed.
    static std::once_flag warned;
    std::call_once(warned, [] {
        const std::string warning = openBLASKernelWarning();
        if (!warning.empty())
            std::cerr << warning << std::endl;
    });
    basisDefinition_ = loadBasisDefinition(settings.basisSet, settings.dataDirectory);
    if (settings.coulomb == CoulombMethod::DensityFitting)
        auxiliaryDefinition_ = loadBasisDefinition(settings.auxiliaryBasisSet, settings.dataDirectory);
    auto require = [](bool ok, const char* what) {
        if (!ok)
            throw OpenMM::OpenMMException(std::string("QM: invalid setting: ") + what);
    };
    require(settings.maxIterations >= 2, "maximum number of SCF iterations must be at least 2 (convergence is judged "
                                         "from the change between iterations)");
    require(settings.convergence > 0 && settings.energyConvergence > 0, "SCF convergence thresholds must be positive");
    require(settings.diisSubspace >= 0, "DIIS subspace size must not be negative");
    require(settings.levelShift >= 0, "level shift must not be negative");
    require(settings.grid.radialPoints >= 1, "number of radial points must be positive");
    require(settings.grid.cubeEdge > 0, "cube edge must be positive");
    require(settings.grid.blockSize >= 1, "block size must be positive");
    require(settings.grid.sphereShellFraction >= 0 && settings.grid.sphereShellFraction <= 1,
            "sphere shell fraction must be in [0, 1]");
    require(settings.grid.significanceExponent > 0, "significance exponent must be positive");
    lebedevGrid(settings.grid.angularPoints); // fail early on an unsupported angular grid
}

KohnShamLDA::~KohnShamLDA() = default;

const BasisSet& KohnShamLDA::basis() const {
    if (!last_)
        throw OpenMM::OpenMMException("QM: no computation has been done yet");
    return last_->basis;
}

XCBackend& KohnShamLDA::xcBackend() const {
    if (!last_)
        throw OpenMM::OpenMMException("QM: no computation has been done yet");
    return *last_->xc;
}

const DensityFittedCoulomb* KohnShamLDA::densityFitting() const {
    if (!last_)
        throw OpenMM::OpenMMException("QM: no computation has been done yet");
    return last_->fitted.get();
}

QMGradient KohnShamLDA::gradient(const QMResult& result) const {
    return gradientTerms(result, true);
}

QMGradient KohnShamLDA::gradientFixedGrid(const QMResult& result) const {
    return gradientTerms(result, false);
}

QMGradient KohnShamLDA::gradientTerms(const QMResult& result, bool gridResponse) const {
    if (!last_)
        throw OpenMM::OpenMMException("QM: no computation has been done yet");
    const System& sys = *last_;
    const Eigen::MatrixXd& D = result.density;
    if (D.rows() != sys.basis.size())
        throw OpenMM::OpenMMException("QM: the result passed to gradient() is not from the last compute()");
    const int na = (int) sys.atoms.size(), threads = settings_.threads;
    QMGradient g;
    const double tStart = seconds();
    double t = tStart;
    auto lap = [&](const char* name) {
        const double now = seconds();
        g.timings[name] = now - t;
        t = now;
    };
    g.atoms = Eigen::MatrixXd::Zero(na, 3);
    g.mm = Eigen::MatrixXd::Zero((int) sys.mm.size(), 3);
    // Where a device computes the point-charge and three-centre terms, their kernels are queued one after the other,
    // each started before the host's terms that can run beside it (the fit first: it waits for the queue). A device
    // upload waits for the kernels queued before it, so every start comes after the host work meant to overlap the
    // kernel before it.
    if (sys.fitted)
        sys.fitted->compute(D);  // the fit of this density (the SCF's last fit may belong to the previous iteration's)
    lap("gradient.coulomb.fit");
    // The XC gradient first: a device back end runs it on a queue of its own, beside the point charges' and the
    // density fitting's kernels queued below (the host's is computed where it is finished, last).
    std::unique_ptr<XCGradientInFlight> xcStarted = sys.xc->startGradient(D, gridResponse);
    const double xcStartSeconds = seconds() - t;
    t = seconds();
    std::vector<PointCharge> nuclei;
    for (const QMAtom& a : sys.atoms)
        nuclei.push_back({{a.xyz[0], a.xyz[1], a.xyz[2]}, (double) a.Z});
    const PointChargeEvaluator* deviceCharges = xcFactory_->pointCharges();
    const Eigen::MatrixXd cartesianD = deviceCharges ? toCartesianBasis(sys.basis, D) : Eigen::MatrixXd();
    // The point charges' term: started on the device (null: the host computes it in chargeTerm).
    auto startChargeTerm = [&](const std::vector<PointCharge>& charges, double threshold) {
        return deviceCharges ? deviceCharges->startGradient(makePointChargeTask(sys.basis, charges, threshold), potentialWeights(charges),
                                                            cartesianD, na)
                             : std::unique_ptr<PointChargeGradientInFlight>();
    };
    auto chargeTerm = [&](std::unique_ptr<PointChargeGradientInFlight>& started, const std::vector<PointCharge>& charges,
                          double threshold, Eigen::MatrixXd& basisPart, Eigen::MatrixXd& chargePart) {
        basisPart = Eigen::MatrixXd::Zero(na, 3);
        chargePart = Eigen::MatrixXd::Zero((int) charges.size(), 3);
        if (started)
            started->addTo(basisPart, chargePart);
        else
            pointChargeGradient(sys.basis, charges, D, na, threshold, basisPart, chargePart, threads);
    };
    std::unique_ptr<PointChargeGradientInFlight> nucleiStarted = startChargeTerm(nuclei, 0.0);
    double chargeSeconds = seconds() - t;
    t = seconds();
    // Point charges among themselves: nuclei-nuclei and nuclei-MM.
    for (int i = 0; i < na; i++) {
        const QMAtom& a = sys.atoms[i];
        auto pair = [&](const double* other, double q, double* gOther) {
            double r[3], r2 = 0;
            for (int d = 0; d < 3; d++) {
                r[d] = a.xyz[d] - other[d];
                r2 += r[d] * r[d];
            }
            const double f = a.Z * q / (r2 * std::sqrt(r2)); // d/dR_a (Z q / r) = -Z q r / r^3
            for (int d = 0; d < 3; d++) {
                g.atoms(i, d) -= f * r[d];
                if (gOther)
                    gOther[d] += f * r[d];
            }
        };
        for (int j = 0; j < na; j++)
            if (j != i)
                pair(sys.atoms[j].xyz, sys.atoms[j].Z, nullptr); // each pair twice, each time for atom i only
        for (size_t c = 0; c < sys.mm.size(); c++) {
            double gc[3] = {0, 0, 0};
            pair(sys.mm[c].xyz, sys.mm[c].charge, gc);
            for (int d = 0; d < 3; d++)
                g.mm((int) c, d) += gc[d];
        }
    }
    // One-electron terms and the Pulay term of the overlap.
    g.atoms += kineticGradient(sys.basis, D, na, threads);
    g.atoms -= overlapGradient(sys.basis, result.energyWeightedDensity, na, threads);
    if (sys.hasLongRange) {
        // The Mulliken charges depend on S: dE/dS_{mu nu} = -1/2 (V_A(mu) + V_A(nu)) D_{mu nu}.
        const Eigen::VectorXd& V = result.longRangePotential;
        Eigen::MatrixXd W(D.rows(), D.cols());
        for (int nu = 0; nu < D.cols(); nu++)
            for (int mu = 0; mu < D.rows(); mu++)
                W(mu, nu) = -0.5 * (V[sys.atomOfFunction[mu]] + V[sys.atomOfFunction[nu]]) * D(mu, nu);
        g.atoms += overlapGradient(sys.basis, W, na, threads);
    }
    lap("gradient.oneElectron");
    std::unique_ptr<PointChargeGradientInFlight> mmStarted = sys.mm.empty() ? nullptr : startChargeTerm(sys.mm, settings_.integralThreshold);
    chargeSeconds += seconds() - t;
    t = seconds();
    // Coulomb: the device's three-centre and metric parts (queued after the point charges), or the host's.
    if (sys.fitted) {
        g.atoms += sys.fitted->gradient(D, na, settings_.integralThreshold, threads, deviceCharges ? &cartesianD : nullptr);
        for (const auto& part : sys.fitted->timings())
            if (part.first.rfind("gradient.", 0) == 0)
                g.timings["gradient.coulomb." + part.first.substr(9)] = part.second;
    }
    else
        g.atoms += exactCoulombGradient(sys.basis, D, na, settings_.integralThreshold, threads);
    const double coulombSeconds = seconds() - t;
    t = seconds();
    Eigen::MatrixXd basisPart, chargePart;
    chargeTerm(nucleiStarted, nuclei, 0.0, basisPart, chargePart);
    g.atoms += basisPart + chargePart; // the nuclei are the atoms
    if (!sys.mm.empty()) {
        chargeTerm(mmStarted, sys.mm, settings_.integralThreshold, basisPart, chargePart);
        g.atoms += basisPart;
        g.mm += chargePart;
    }
    g.timings["gradient.pointCharges"] = chargeSeconds + seconds() - t;
    g.timings["gradient.coulomb"] = g.timings["gradient.coulomb.fit"] + coulombSeconds;
    t = seconds();
    g.atoms += xcStarted->finish();
    g.timings["gradient.xc"] = xcStartSeconds + seconds() - t;
    for (const auto& part : sys.xc->gradientTimings())
        g.timings["gradient.xc." + part.first] = part.second;
    g.timings["gradient.total"] = seconds() - tStart;
    return g;
}

const MolecularGrid& KohnShamLDA::grid() const {
    if (!last_)
        throw OpenMM::OpenMMException("QM: no computation has been done yet");
    return *last_->grid;
}

const Eigen::MatrixXd& KohnShamLDA::atomicDensity(int Z) {
    auto it = atomicDensities_.find(Z);
    if (it != atomicDensities_.end())
        return it->second;
    // Spin-restricted, spherically averaged atom: fractional occupation of degenerate levels.
    QMSettings s = settings_;
    s.coulomb = CoulombMethod::Exact;
    s.grid.radialPoints = std::min(s.grid.radialPoints, 50);
    s.grid.angularPoints = 110;
    s.maxIterations = 60;
    s.convergence = 1e-5;
    s.energyConvergence = 1e-6;
    const std::vector<QMAtom> atom = {{Z, {0, 0, 0}}};
    // Spherical atoms for the guess: small, always on the host.
    System sys(atom, {}, s, basisDefinition_, auxiliaryDefinition_, false, HostXCBackendFactory(), NormalEquationSolver());
    SCFProblem problem{sys.S, sys.Hcore, sys.Vmm, sys.X, 0.0, 0.0,
                       [&](const Eigen::MatrixXd& D) { return sys.coulomb(D); }, *sys.xc, (double) Z, true};
    SCFOutcome o = runSCF(s, problem, Eigen::MatrixXd(), false);
    return atomicDensities_[Z] = o.result.density; // unconverged is acceptable for a guess
}

Eigen::MatrixXd KohnShamLDA::superpositionOfAtomicDensities(const std::vector<QMAtom>& atoms, const BasisSet& basis) {
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(basis.size(), basis.size());
    const auto& atomShells = basis.atomShellOffsets();
    for (size_t a = 0; a < atoms.size(); a++) {
        const Eigen::MatrixXd& Da = atomicDensity(atoms[a].Z);
        const int first = basis.offset(atomShells[a]);
        D.block(first, first, Da.rows(), Da.cols()) = Da;
    }
    return D;
}

QMResult KohnShamLDA::compute(const std::vector<QMAtom>& atoms, int charge, const std::vector<PointCharge>& mm,
                              const DensityGuess* previous, const MullikenElectrostatics* longRange, bool deferOrbitals) {
    if (atoms.empty())
        throw OpenMM::OpenMMException("QM: no QM atoms");
    if (longRange && (longRange->potential.size() != (int) atoms.size() || longRange->kernel.rows() != (int) atoms.size() ||
                      longRange->kernel.cols() != (int) atoms.size()))
        throw OpenMM::OpenMMException("QM: the Mulliken-level electrostatics do not match the number of QM atoms (internal error)");
    int nuclearCharge = 0;
    for (const QMAtom& a : atoms) {
        elementSymbol(a.Z); // validates Z
        nuclearCharge += a.Z;
    }
    for (size_t i = 0; i < atoms.size(); i++)
        for (size_t j = 0; j < i; j++)
            if (System::dist(atoms[i].xyz, atoms[j].xyz) < kMinimumDistance) {
                std::ostringstream msg;
                msg << "QM: atoms " << j << " (" << elementSymbol(atoms[j].Z) << ") and " << i << " ("
                    << elementSymbol(atoms[i].Z) << ") are closer than 0.1 Angstrom ("
                    << System::dist(atoms[i].xyz, atoms[j].xyz) / kBohrPerAngstrom << " A)";
                throw OpenMM::OpenMMException(msg.str());
            }
    for (size_t c = 0; c < mm.size(); c++)
        for (size_t i = 0; i < atoms.size(); i++)
            if (!(System::dist(atoms[i].xyz, mm[c].xyz) >= kMinimumDistance)) {
                std::ostringstream msg;
                msg << "QM: MM charge " << c << " (" << mm[c].charge << " e) sits on the nucleus of atom " << i << " ("
                    << elementSymbol(atoms[i].Z) << "): " << System::dist(atoms[i].xyz, mm[c].xyz) / kBohrPerAngstrom
                    << " A apart, at least 0.1 A is required";
                throw OpenMM::OpenMMException(msg.str());
            }
    const int nElectrons = nuclearCharge - charge;
    if (nElectrons <= 0)
        throw OpenMM::OpenMMException("QM: the QM region has no electrons (charge " + std::to_string(charge) + ")");
    if (nElectrons % 2 != 0)
        throw OpenMM::OpenMMException("QM: odd number of electrons (" + std::to_string(nElectrons) +
                                      "): open shell is not supported");

    const double tStart = seconds();
    // The previous geometry's system goes first: a back end that keeps device arrays from one geometry to the next
    // gets them back for this one, and nothing is held twice while this one is made.
    last_.reset();
    last_.reset(new System(atoms, mm, settings_, basisDefinition_, auxiliaryDefinition_,
                           settings_.coulomb == CoulombMethod::DensityFitting, *xcFactory_, metricSolver_));
    System& sys = *last_;
    if (nElectrons / 2 > sys.X.cols())
        throw OpenMM::OpenMMException("QM: the basis set has fewer orbitals than occupied orbitals");

    const double tGuess = seconds();
    Eigen::MatrixXd D;
    bool haveDensity = false;
    if (previous && previous->density.rows() == sys.basis.size() && previous->density.cols() == sys.basis.size()) {
        D = purifiedDensity(previous->density, sys.S, xcFactory_->matrixProducts());
        haveDensity = true;
    }
    else if (settings_.guess == InitialGuess::SuperpositionOfAtomicDensities) {
        D = superpositionOfAtomicDensities(atoms, sys.basis);
        haveDensity = true;
    }
    const double guessTime = seconds() - tGuess;
    SCFProblem problem{sys.S, sys.Hcore, sys.Vmm, sys.X, sys.nuclearRepulsion, sys.nuclearMM,
                       [&](const Eigen::MatrixXd& Dm) { return sys.coulomb(Dm); }, *sys.xc, (double) nElectrons, false};
    problem.symmetricOrthogonalization = sys.symmetricX;
    problem.products = xcFactory_->matrixProducts();
    if (sys.fitted)
        problem.heldCoulomb = [&sys](const MatrixProducts& m, const Held& H, double scale) { return sys.fitted->compute(m, H, scale); };
    // The final orbitals beside the gradient where a device computes it (the host is then mostly idle); on the host
    // platforms the gradient's loops take every core.
    problem.deferFinalOrbitals = deferOrbitals && xcFactory_->pointCharges() != nullptr;
    const long long productsBefore = problem.products ? problem.products->productsRun() : 0;
    if (longRange) {
        sys.hasLongRange = true;
        sys.longRange = *longRange;
        problem.extra = [&sys](const Eigen::MatrixXd& Dm, Eigen::MatrixXd& F) { return sys.longRangeTerm(Dm, F); };
    }
    // Restarts when an attempt fails (e.g. a minimizer's trial geometry far from the last one): from the
    // atomic densities with a level shift and damping, then from the core Hamiltonian with a larger shift.
    const double shift = std::max(settings_.levelShift, 0.5);
    struct Attempt {
        const char* name;
        SCFStrategy strategy;
        bool sad;
    };
    std::vector<Attempt> attempts = {{haveDensity ? (previous ? "previous density" : "atomic densities") : "core guess", SCFStrategy(), false}};
    if (settings_.restartFailedSCF) {
        attempts.push_back({"atomic densities, level shift, damping", {shift, 0.5, 12}, true});
        attempts.push_back({"core guess, large level shift, damping", {4 * shift, 0.7, 25}, false});
    }
    SCFOutcome o;
    std::ostringstream history;
    history.precision(10);
    int totalIterations = 0;
    for (size_t a = 0; a < attempts.size(); a++) {
        Eigen::MatrixXd start = D;
        bool startHasDensity = haveDensity;
        if (a > 0) {
            startHasDensity = attempts[a].sad;
            start = attempts[a].sad ? superpositionOfAtomicDensities(atoms, sys.basis) : Eigen::MatrixXd();
        }
        problem.recycled = a == 0 && previous && haveDensity ? previous : nullptr;
        o = runSCF(settings_, problem, start, startHasDensity, attempts[a].strategy);
        totalIterations += o.result.iterations;
        if (o.converged) {
            o.result.restarts = (int) a;
            break;
        }
        history << " attempt " << a + 1 << " (" << attempts[a].name << "):";
        const size_t n = o.result.energyHistory.size();
        for (size_t k = n > 3 ? n - 3 : 0; k < n; k++)
            history << " [" << k + 1 << ": E = " << o.result.energyHistory[k] << " Eh, error = " << o.result.errorHistory[k]
                    << "]";
        history << ";";
    }
    o.result.totalIterations = totalIterations;
    if (!o.converged) {
        std::ostringstream msg;
        msg << "QM: SCF did not converge (" << attempts.size() << " attempts of at most " << settings_.maxIterations
            << " iterations each; last energies and errors:" << history.str()
            << " convergence needs error < " << settings_.convergence << " and |dE| < " << settings_.energyConvergence << ")";
        throw SCFConvergenceError(msg.str());
    }
    if (sys.hasLongRange)
        sys.mulliken(o.result.density, o.result.mullikenCharges, o.result.longRangePotential);
    o.result.gridPoints = sys.grid->numPoints();
    o.result.xcBackend = sys.xc->name();
    o.result.coulombContractions = sys.fitted ? sys.fitted->contractionsLocation() : "host";
    o.result.densityFittingBytes = sys.fitted ? sys.fitted->storedBytes() : 0;
    o.result.storedBasisBytes = sys.xc->storedBytes();
    if (problem.products && problem.products->productsRun() > productsBefore) {  // none if every product was small
        o.result.scfProducts = problem.products->name();
        o.result.scfProductBytes = problem.products->storedBytes();
    }
    o.result.basisStorageNotice = sys.xc->notice();
    for (const auto& kv : sys.timings)
        o.result.timings[kv.first] = kv.second;
    if (sys.fitted)
        for (const auto& part : sys.fitted->timings())
            if (part.first.rfind("builds.", 0) == 0)
                o.result.timings["scf.coulomb." + part.first] = part.second;  // every build of this geometry's SCF
    o.result.timings["guess"] = guessTime;
    o.result.timings["total"] = seconds() - tStart;
    if (o.finalOrbitals) {
        sys.deferredOrbitals.occupiedOrbitals = o.result.occupiedOrbitals;
        sys.pendingOrbitals = std::async(std::launch::async, [&sys, finish = std::move(o.finalOrbitals)] { finish(sys.deferredOrbitals); });
    }
    return o.result;
}

size_t KohnShamLDA::deviceBytes() const {
    return xcFactory_ ? xcFactory_->deviceBytes() : 0;
}

void KohnShamLDA::completeOrbitals(QMResult& result) {
    if (!last_ || !last_->pendingOrbitals.valid())
        return;
    const double start = seconds();
    last_->pendingOrbitals.get();  // rethrows the eigensolver's error
    QMResult& made = last_->deferredOrbitals;
    result.orbitals = std::move(made.orbitals);
    result.orbitalEnergies = std::move(made.orbitalEnergies);
    result.homoLumoGap = made.homoLumoGap;
    result.lowdinOrbitals = std::move(made.lowdinOrbitals);
    result.timings["scf.finalOrbitals"] = made.timings["scf.finalOrbitals"];
    result.timings["scf.finalOrbitalsWait"] = seconds() - start;
}

} // namespace QM
} // namespace OpenMMDFT
