// Integrals through Libint2 (with LibintGradients.cpp the only users of its slow-to-compile
// headers). Libint sees only cartesian shells with our own normalized coefficients
// (embed_normalization_into_coefficients = false, see LibintShells.h); pure functions come
// from basisTransform(), which the grid code uses too.
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmmdft/qm/IntegralGradients.h"
#include "openmmdft/qm/LinearSolve.h"
#include "openmmdft/qm/PairDensityMap.h"
#include "LibintShells.h"
#include "Parallel.h"
#include "WallClock.h"
#include <openmm/OpenMMException.h>
#include <libint2.hpp>
#include <algorithm>
#include <cmath>
#include <future>
#include <mutex>

namespace OpenMMDFT {
namespace QM {

namespace {

// Compute a symmetric one-body operator over cartesian shells and transform.
// Threads take rows s1 (each with its own engine copy); blocks written are disjoint.
Eigen::MatrixXd oneBody(const BasisSet& basis, const libint2::Engine& prototype, double threshold, int threads = 1) {
    const auto shells = toLibint(basis);
    const int n = basis.cartesianSize();
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
    threads = std::max(1, std::min(resolveThreads(threads), basis.numShells()));
    std::vector<libint2::Engine> engines(threads, prototype);
    parallelFor(basis.numShells(), threads, [&](int s1, int t) {
        libint2::Engine& engine = engines[t];
        const auto& buf = engine.results();
        for (int s2 = 0; s2 <= s1; s2++) {
            if (threshold > 0 && pairOverlapBound(basis.shells()[s1], basis.shells()[s2]) < threshold)
                continue;
            engine.compute(shells[s1], shells[s2]);
            if (buf[0] == nullptr)
                continue;
            const int o1 = basis.cartesianOffset(s1), o2 = basis.cartesianOffset(s2);
            const int n1 = (int) shells[s1].size(), n2 = (int) shells[s2].size();
            for (int i = 0; i < n1; i++)
                for (int j = 0; j < n2; j++) {
                    M(o1 + i, o2 + j) = buf[0][i * n2 + j];
                    M(o2 + j, o1 + i) = buf[0][i * n2 + j];
                }
        }
    });
    return fromCartesianBasis(basis, M);
}

} // namespace

void ensureLibintInitialized() {
    static std::once_flag flag;
    std::call_once(flag, []() { libint2::initialize(); });
}

std::vector<libint2::ShellPair> withUnitShell(const std::vector<libint2::Shell>& shells, double precision) {
    std::vector<libint2::ShellPair> pairs;
    pairs.reserve(shells.size());
    for (const libint2::Shell& s : shells)
        pairs.emplace_back(s, libint2::Shell::unit(), std::log(precision));
    return pairs;
}

Eigen::MatrixXd schwarz(const std::vector<libint2::Shell>& shells, int threads) {
    const int ns = (int) shells.size();
    libint2::Engine prototype(libint2::Operator::coulomb, maxNprim(shells), maxL(shells), 0);
    prototype.set_precision(0.);
    threads = std::max(1, std::min(resolveThreads(threads), ns));
    std::vector<libint2::Engine> engines(threads, prototype);
    Eigen::MatrixXd Q = Eigen::MatrixXd::Zero(ns, ns);
    // Row s1 (and its mirror column) belongs to one thread: (ab|ab) over every shell pair is a four-centre integral
    // each, a visible share of the set-up for a few hundred shells when it ran on one core. Row s1 holds s1 + 1 of
    // them: the rows are handed out longest first, so that the last ones to finish are short.
    parallelFor(ns, threads, [&](int item, int t) {
        const int s1 = ns - 1 - item;
        libint2::Engine& engine = engines[t];
        const auto& buf = engine.results();
        for (int s2 = 0; s2 <= s1; s2++) {
            engine.compute(shells[s1], shells[s2], shells[s1], shells[s2]);
            double m = 0;
            if (buf[0] != nullptr) {
                const int n12 = (int) (shells[s1].size() * shells[s2].size());
                for (int i = 0; i < n12; i++)
                    m = std::max(m, std::abs(buf[0][i * n12 + i]));
            }
            Q(s1, s2) = Q(s2, s1) = std::sqrt(m);
        }
    });
    return Q;
}

Eigen::MatrixXd shellPairMaxima(const BasisSet& basis, const std::vector<libint2::Shell>& shells, const Eigen::MatrixXd& D) {
    const int ns = (int) shells.size();
    Eigen::MatrixXd M(ns, ns);
    for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++)
            M(a, b) = D.block(basis.cartesianOffset(a), basis.cartesianOffset(b), shells[a].size(), shells[b].size()).cwiseAbs().maxCoeff();
    return M;
}

libint2::Shell toLibint(const Shell& s) {
    libint2::svector<double> alpha(s.exponents.begin(), s.exponents.end());
    libint2::svector<double> coef(s.coefficients.begin(), s.coefficients.end());
    return libint2::Shell(alpha, libint2::svector<libint2::Shell::Contraction>{{s.l, false, coef}}, s.center, false);
}

std::vector<libint2::Shell> toLibint(const BasisSet& basis) {
    ensureLibintInitialized();
    std::vector<libint2::Shell> out;
    out.reserve(basis.numShells());
    for (const Shell& s : basis.shells())
        out.push_back(toLibint(s));
    return out;
}

int maxNprim(const std::vector<libint2::Shell>& shells) {
    size_t n = 1;
    for (const auto& s : shells)
        n = std::max(n, s.nprim());
    return (int) n;
}

int maxL(const std::vector<libint2::Shell>& shells) {
    int l = 0;
    for (const auto& s : shells)
        l = std::max(l, s.contr[0].l);
    return l;
}

// Upper bound of |<a|b>|-like products for a shell pair, used to skip pairs whose
// charge distribution is negligible: exp(-ab/(a+b) R^2) with the most diffuse primitives.
double pairOverlapBound(const Shell& a, const Shell& b) {
    const double ea = a.minExponent(), eb = b.minExponent();
    double r2 = 0;
    for (int k = 0; k < 3; k++)
        r2 += (a.center[k] - b.center[k]) * (a.center[k] - b.center[k]);
    return std::exp(-ea * eb / (ea + eb) * r2);
}

Eigen::MatrixXd overlapMatrix(const BasisSet& basis, int threads) {
    ensureLibintInitialized();
    libint2::Engine engine(libint2::Operator::overlap, basis.maxPrimitives(), basis.maxL(), 0);
    return oneBody(basis, engine, 0.0, threads);
}

Eigen::MatrixXd kineticMatrix(const BasisSet& basis, int threads) {
    ensureLibintInitialized();
    libint2::Engine engine(libint2::Operator::kinetic, basis.maxPrimitives(), basis.maxL(), 0);
    return oneBody(basis, engine, 0.0, threads);
}

double electrostaticPotential(const BasisSet& basis, const Eigen::MatrixXd& density, const std::vector<QMAtom>& atoms,
                              const double point[3]) {
    // pointChargeMatrix of a unit charge is -(u|1/|r-C||v): tr(D M) is the electrons' potential.
    const PointCharge unit = {{point[0], point[1], point[2]}, 1.0};
    double potential = density.cwiseProduct(pointChargeMatrix(basis, {unit}, 1e-14, 1)).sum();
    for (const QMAtom& atom : atoms) {
        const double d[3] = {point[0] - atom.xyz[0], point[1] - atom.xyz[1], point[2] - atom.xyz[2]};
        potential += atom.Z / std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    }
    return potential;
}

// ---------------------------------------------------------------------------------
struct ExactCoulomb::Impl {
    const BasisSet& basis;
    std::vector<libint2::Shell> shells;
    Eigen::MatrixXd Q;
    double threshold;
    int threads;
    Impl(const BasisSet& b, double t, int n)
        : basis(b), shells(toLibint(b)), Q(schwarz(shells, n)), threshold(t), threads(resolveThreads(n)) {}
};

ExactCoulomb::ExactCoulomb(const BasisSet& basis, double threshold, int threads)
    : impl_(new Impl(basis, threshold, threads)) {}
ExactCoulomb::~ExactCoulomb() = default;

Eigen::MatrixXd ExactCoulomb::compute(const Eigen::MatrixXd& density) const {
    const Impl& d = *impl_;
    const BasisSet& basis = d.basis;
    const auto& shells = d.shells;
    const int ns = (int) shells.size();
    const Eigen::MatrixXd D = toCartesianBasis(d.basis, density);
    // Largest density element per shell pair, for screening by |(ab|cd)| D_cd <= Q_ab Q_cd D_cd.
    const Eigen::MatrixXd Dmax = shellPairMaxima(basis, shells, D);
    libint2::Engine prototype(libint2::Operator::coulomb, maxNprim(shells), maxL(shells), 0);
    prototype.set_precision(std::min(d.threshold, 1e-12) * 1e-3);
    const int threads = std::max(1, std::min(d.threads, ns));
    std::vector<libint2::Engine> engines(threads, prototype);
    std::vector<Eigen::MatrixXd> Xs(threads, Eigen::MatrixXd::Zero(D.rows(), D.cols()));
    const double Qmax = d.Q.maxCoeff();
    // Unique quartets s1>=s2, s3>=s4, (s1s2)>=(s3s4); X_ab += deg v D_cd, X_cd += deg v D_ab;
    // J = (X + X^T)/4 restores the full sum over all orderings. Threads take s1 rows round robin (largest
    // first, as they carry the most quartets) and accumulate into their own X, summed in thread order.
    parallelForRoundRobin(ns, threads, [&](int row, int t) {
        const int s1 = ns - 1 - row;
        libint2::Engine& engine = engines[t];
        const auto& buf = engine.results();
        Eigen::MatrixXd& X = Xs[t];
        for (int s2 = 0; s2 <= s1; s2++) {
            const double q12 = d.Q(s1, s2);
            if (q12 * Qmax < d.threshold)
                continue;
            for (int s3 = 0; s3 <= s1; s3++)
                for (int s4 = 0; s4 <= (s3 == s1 ? s2 : s3); s4++) {
                    const double bound = q12 * d.Q(s3, s4);
                    if (bound * std::max(Dmax(s1, s2), Dmax(s3, s4)) < d.threshold)
                        continue;
                    engine.compute(shells[s1], shells[s2], shells[s3], shells[s4]);
                    const double* v = buf[0];
                    if (v == nullptr)
                        continue;
                    const double deg = (s1 == s2 ? 1.0 : 2.0) * (s3 == s4 ? 1.0 : 2.0) *
                                       (s1 == s3 ? (s2 == s4 ? 1.0 : 2.0) : 2.0);
                    const int o1 = basis.cartesianOffset(s1), o2 = basis.cartesianOffset(s2);
                    const int o3 = basis.cartesianOffset(s3), o4 = basis.cartesianOffset(s4);
                    const int n1 = (int) shells[s1].size(), n2 = (int) shells[s2].size();
                    const int n3 = (int) shells[s3].size(), n4 = (int) shells[s4].size();
                    for (int i = 0, idx = 0; i < n1; i++)
                        for (int j = 0; j < n2; j++) {
                            double xab = 0;
                            const double dab = D(o1 + i, o2 + j);
                            for (int k = 0; k < n3; k++)
                                for (int l = 0; l < n4; l++, idx++) {
                                    const double val = deg * v[idx];
                                    xab += val * D(o3 + k, o4 + l);
                                    X(o3 + k, o4 + l) += val * dab;
                                }
                            X(o1 + i, o2 + j) += xab;
                        }
                }
        }
    });
    Eigen::MatrixXd X = Xs[0];
    for (int t = 1; t < threads; t++)
        X += Xs[t];
    const Eigen::MatrixXd Jc = 0.25 * (X + X.transpose());
    return fromCartesianBasis(d.basis, Jc);
}

// ---------------------------------------------------------------------------------
struct DensityFittedCoulomb::Impl {
    const BasisSet& basis;
    const BasisSet& aux;
    Eigen::MatrixXd Taux;
    Eigen::MatrixXd metric;                          // (P|Q) in the (pure) auxiliary basis
    std::unique_ptr<SymmetricPositiveDefiniteSolver> solver;
    // The significant cartesian function pairs a >= b (the columns of B), and the pair vectors from and to matrices
    // over the basis's functions.
    std::unique_ptr<PairDensityMap> pairMap;
    Eigen::MatrixXd B;  // on the host: (P|ab) for the pure fitting functions P and the pairs, B(P, pair)
    std::unique_ptr<DensityFittingContractions> contractions;  // holding B instead of the host, when set
    mutable Eigen::VectorXd coefficients;
    bool deviceIntegrals = false;  // B (and so the three-centre gradient) computed where the contractions run
    bool deviceSolve = false;      // the metric's inverse applied where the contractions run
    mutable std::map<std::string, double> timings;
    /** Hand the contractions over (B is where they run), with the metric's inverse if they can keep it. */
    void useContractions(std::unique_ptr<DensityFittingContractions> c) {
        contractions = std::move(c);
        const double start = seconds();
        const Eigen::MatrixXd* inverse = solver->inverse();
        deviceSolve = inverse != nullptr && contractions->storeMetric(metric, *inverse);
        timings["storeMetric"] = seconds() - start;
    }
};



/** The two-centre Coulomb metric (P|Q) in the pure auxiliary basis, transformed shell block by shell block: the
 *  transformation is block diagonal, and as a dense product its cost (naux^3) would outgrow the integrals themselves. */
static Eigen::MatrixXd coulombMetric(const BasisSet& aux, const std::vector<libint2::Shell>& auxShells,
                                     const std::vector<Eigen::MatrixXd>& auxToPure, int threads) {
    libint2::Engine prototype(libint2::Operator::coulomb, maxNprim(auxShells), maxL(auxShells), 0);
    prototype.set(libint2::BraKet::xs_xs);
    prototype.set_precision(0.);
    const int metricThreads = std::max(1, std::min(threads, aux.numShells()));
    std::vector<libint2::Engine> engines(metricThreads, prototype);
    Eigen::MatrixXd metric = Eigen::MatrixXd::Zero(aux.size(), aux.size());
    // Each row of shell blocks p belongs to one thread; the mirrored block (q, p) is written by it too,
    // and q <= p never equals another thread's p.
    parallelFor(aux.numShells(), metricThreads, [&](int p, int t) {
        libint2::Engine& engine = engines[t];
        const auto& buf = engine.results();
        for (int q = 0; q <= p; q++) {
            engine.compute(auxShells[p], auxShells[q]);
            if (buf[0] == nullptr)
                continue;
            const int np = (int) auxShells[p].size(), nq = (int) auxShells[q].size();
            const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> > cart(buf[0], np, nq);
            const Eigen::MatrixXd block = auxToPure[p] * cart * auxToPure[q].transpose();
            metric.block(aux.offset(p), aux.offset(q), block.rows(), block.cols()) = block;
            metric.block(aux.offset(q), aux.offset(p), block.cols(), block.rows()) = block.transpose();
        }
    });
    return metric;
}

FittingPairs screenFittingPairs(const BasisSet& basis, const BasisSet& aux, double threshold, int threads) {
    const double start = seconds();
    const auto shells = toLibint(basis);
    const auto auxShells = toLibint(aux);
    // Significant shell pairs by Schwarz bound times the largest auxiliary (P|P)^1/2.
    const Eigen::MatrixXd Q = schwarz(shells, threads);
    double auxMax = 0;
    {
        libint2::Engine engine(libint2::Operator::coulomb, maxNprim(auxShells), maxL(auxShells), 0);
        engine.set(libint2::BraKet::xs_xs);
        const auto& buf = engine.results();
        for (const auto& s : auxShells) {
            engine.compute(s, s);
            for (size_t i = 0; i < s.size(); i++)
                auxMax = std::max(auxMax, std::abs(buf[0][i * s.size() + i]));
        }
        auxMax = std::sqrt(auxMax);
    }
    FittingPairs out;
    for (int s1 = 0; s1 < basis.numShells(); s1++)
        for (int s2 = 0; s2 <= s1; s2++)
            if (Q(s1, s2) * auxMax >= threshold)
                out.shellPairs.push_back({s1, s2});
    for (const auto& sp : out.shellPairs) {
        out.pairStart.push_back((int) out.functionPairs.size());
        const int o1 = basis.cartesianOffset(sp.first), o2 = basis.cartesianOffset(sp.second);
        for (size_t i = 0; i < shells[sp.first].size(); i++)
            for (size_t j = 0; j < shells[sp.second].size(); j++)
                if (o1 + (int) i >= o2 + (int) j)
                    out.functionPairs.push_back({o1 + (int) i, o2 + (int) j});
    }
    out.seconds = seconds() - start;
    return out;
}

DensityFittedCoulomb::DensityFittedCoulomb(const BasisSet& basis, const BasisSet& aux, double threshold, int threads,
                                           const NormalEquationSolver& metricSolver,
                                           std::unique_ptr<DensityFittingContractions> contractions,
                                           const std::function<void()>& meanwhile, bool inverseOnDevice,
                                           std::shared_future<FittingPairs> screened)
    : impl_(new Impl{basis, aux, basisTransform(aux), {}, nullptr, nullptr, {}, nullptr, {}, false}) {
    Impl& d = *impl_;
    const auto shells = toLibint(basis);
    const auto auxShells = toLibint(aux);
    // Each auxiliary shell's cartesian-to-pure transformation, for the metric and the host's tensor.
    std::vector<Eigen::MatrixXd> auxToPure(aux.numShells());
    for (int p = 0; p < aux.numShells(); p++) {
        const Shell& sh = aux.shells()[p];
        auxToPure[p] = sh.pure ? cartesianToPure(sh.l) : Eigen::MatrixXd::Identity(sh.size(), sh.size());
    }
    threads = std::max(1, resolveThreads(threads));
    // The metric and its factorization or inverse (LAPACK, n_aux^3: 0.12-0.18 s of the set-up for 24 waters on a GPU
    // machine's host). Where a device computes the tensor, the metric comes first and its inverse runs on a thread of
    // its own while this one screens the pairs, starts the tensor and does the caller's set-up work: this thread then
    // mostly waits for the device, and the inverse, the set-up's longest host task, starts as early as it can (on an
    // H200's 16-core host the inverse beside the set-up took the n = 24 set-up's Coulomb part from 0.152 to 0.084 s).
    // Where the host computes the tensor, every core has work already, and OpenBLAS's threads waiting for each other
    // among the engine's took 1.1 s for the 0.08 s inverse of 24 waters on 2 cores (and the work beside it slowed by as
    // much): there it runs after the rest, when asked for. (Should the device refuse the tensor after all, for shells
    // beyond its kernels' l, the inverse runs beside the host's tensor: slower, not wrong.) Where the device inverts
    // the metric too (cuSOLVER: 0.064 s beside the tensor on an H200, against 0.09-0.12 s for the host's LAPACK), the
    // inverse is no longer the longest task, and the device would idle while the host computes the metric: there the
    // tensor starts first, and the metric (Libint, 0.020 s) and the inverse's thread come after its launch.
    const bool deviceContractions = contractions != nullptr;
    const bool metricFirst = deviceContractions && !inverseOnDevice;
    double solverSeconds = 0;
    std::future<void> factored;
    auto startMetric = [&] {
        const double start = seconds();
        d.metric = coulombMetric(aux, auxShells, auxToPure, threads);
        d.timings["metric"] = seconds() - start;
        // OpenBLAS keeps its own thread count for the inverse beside the set-up: capped at 8 of an H200 host's 16
        // threads the step was unchanged (0.767 s against 0.772). On CUDA the device inverts it (cuSOLVER), without
        // the BLAS lock: held for the device's inverse, it kept the orthogonalization's product waiting for the whole
        // inverse, and the inverse waiting for the orthogonalization's eigensolver (an H200's set-up of 24 waters:
        // orthogonalization 0.146 s for a 0.022 s eigensolver, the metric's inverse 0.070 s and the wait for it 0.087 s).
        factored = std::async(deviceContractions ? std::launch::async : std::launch::deferred, [&] {
            auto factor = [&] {
                const double begin = seconds();
                d.solver.reset(new SymmetricPositiveDefiniteSolver(d.metric, metricSolver, threads));
                solverSeconds = seconds() - begin;
            };
            if (inverseOnDevice && metricSolver)
                factor();  // the solver takes the lock itself for host work
            else
                withOpenBLASThreads(factor);
        });
    };
    if (metricFirst)
        startMetric();
    double t = seconds();
    FittingPairs screenedHere;
    if (!screened.valid())
        screenedHere = screenFittingPairs(basis, aux, threshold, threads);
    const FittingPairs& screening = screened.valid() ? screened.get() : screenedHere;
    if (screened.valid())
        d.timings["screeningWait"] = seconds() - t;
    const std::vector<std::pair<int, int>>& shellPairs = screening.shellPairs;
    const std::vector<int>& pairStart = screening.pairStart;
    const int numPairs = (int) screening.functionPairs.size();
    t = seconds();
    d.pairMap = std::make_unique<PairDensityMap>(basis, screening.functionPairs, threads);
    d.timings["screening"] = screening.seconds + seconds() - t;
    // Where the contractions run may compute B itself (a GPU platform, from the same pairs and screening). It is
    // started before the caller's set-up work, so that the device works on it meanwhile.
    t = seconds();
    const bool tensorThere =
        contractions && contractions->computeTensor(makeThreeCentreTask(basis, aux, shellPairs, pairStart, numPairs));
    const double tensorSeconds = seconds() - t;
    if (!metricFirst)
        startMetric();
    if (meanwhile)
        meanwhile();
    auto waitForSolver = [&] {
        const double start = seconds();
        factored.get();  // rethrows the factorization's error
        d.timings["metricSolverWait"] = seconds() - start;
        d.timings["metricSolver"] = solverSeconds;
    };
    if (tensorThere) {
        waitForSolver();
        t = seconds();
        contractions->finishTensor();
        d.useContractions(std::move(contractions));
        d.deviceIntegrals = true;
        d.timings["tensor"] = tensorSeconds + seconds() - t;  // the launch and the wait after the host's metric work
        return;
    }
    t = seconds();
    // B in the pure auxiliary basis (so that the SCF works with the metric directly), each aux shell's
    // cartesian rows transformed as they come from Libint.
    d.B = Eigen::MatrixXd::Zero(aux.size(), (Eigen::Index) numPairs);
    libint2::Engine prototype(libint2::Operator::coulomb, std::max(maxNprim(shells), maxNprim(auxShells)),
                              std::max(maxL(shells), maxL(auxShells)), 0);
    prototype.set(libint2::BraKet::xs_xx);
    prototype.set_precision(std::min(threshold, 1e-12) * 1e-3);
    threads = std::max(1, std::min(threads, (int) shellPairs.size()));
    std::vector<libint2::Engine> engines(threads, prototype);
    // The primitive-pair data of both sides are made once here, not by Libint in every call.
    const std::vector<libint2::ShellPair> auxPairs = withUnitShell(auxShells, prototype.precision());
    // Each shell pair fills its own columns of B, so threads never write the same element.
    parallelFor((int) shellPairs.size(), threads, [&](int k, int t) {
        libint2::Engine& engine = engines[t];
        const auto& buf = engine.results();
        const int s1 = shellPairs[k].first, s2 = shellPairs[k].second;
        const int o1 = basis.cartesianOffset(s1), o2 = basis.cartesianOffset(s2);
        const int n1 = (int) shells[s1].size(), n2 = (int) shells[s2].size();
        const libint2::ShellPair ket(shells[s1], shells[s2], std::log(prototype.precision()));
        for (int p = 0; p < aux.numShells(); p++) {
            engine.compute2<libint2::Operator::coulomb, libint2::BraKet::xs_xx, 0>(auxShells[p], libint2::Shell::unit(), shells[s1],
                                                                                   shells[s2], &auxPairs[p], &ket);
            if (buf[0] == nullptr)
                continue;
            const int np = (int) auxShells[p].size();
            const Eigen::MatrixXd& toPure = auxToPure[p];
            for (int m = 0; m < toPure.rows(); m++) {
                int col = pairStart[k];
                for (int i = 0; i < n1; i++)
                    for (int j = 0; j < n2; j++)
                        if (o1 + i >= o2 + j) {
                            double value = 0;
                            for (int a = 0; a < np; a++)
                                value += toPure(m, a) * buf[0][(a * n1 + i) * n2 + j];
                            d.B(aux.offset(p) + m, col++) = value;
                        }
            }
        }
    });
    d.timings["tensor"] = seconds() - t;
    waitForSolver();
    if (contractions && contractions->store(d.B)) {
        d.useContractions(std::move(contractions));
        d.B.resize(0, 0);  // held where the contractions run now
    }
}

DensityFittedCoulomb::~DensityFittedCoulomb() = default;

Eigen::MatrixXd DensityFittedCoulomb::compute(const Eigen::MatrixXd& density) const {
    const Impl& d = *impl_;
    double t = seconds();
    if (d.deviceSolve) {
        // The whole build where the contractions run: D there, J back.
        Eigen::MatrixXd J = d.contractions->coulombMatrix(*d.pairMap, density, d.coefficients);
        d.timings["builds.contractions"] += seconds() - t;
        return J;
    }
    const Eigen::VectorXd dv = d.pairMap->gather(density);
    double hostSeconds = seconds() - t;
    t = seconds();
    const Eigen::VectorXd gamma = d.contractions ? d.contractions->fit(dv) : Eigen::VectorXd(product(d.B, false, dv));
    d.coefficients = d.solver->solve(gamma);
    const Eigen::VectorXd jv = d.contractions ? d.contractions->project(d.coefficients) : Eigen::VectorXd(product(d.B, true, d.coefficients));
    const double contractionSeconds = seconds() - t;
    t = seconds();
    Eigen::MatrixXd pureJ = d.pairMap->scatter(jv);
    hostSeconds += seconds() - t;
    // Each geometry's Coulomb builds, summed: the contractions (B d, the fit, B^T c, where they run, with their
    // transfers) and the host's pair gathering and angular transformations around them.
    d.timings["builds.contractions"] += contractionSeconds;
    d.timings["builds.host"] += hostSeconds;
    return pureJ;
}

Held DensityFittedCoulomb::compute(const MatrixProducts& products, const Held& density, double scale) const {
    const Impl& d = *impl_;
    if (density->rows() != d.basis.size() || density->cols() != d.basis.size())
        throw OpenMM::OpenMMException("QM: DensityFittedCoulomb::compute() of a held matrix of the wrong size (internal error)");
    if (d.deviceSolve) {
        const double t = seconds();
        Held J = d.contractions->coulombMatrix(*d.pairMap, density, scale);
        if (J) {
            d.timings["builds.held"] += seconds() - t;
            return J;
        }
    }
    // Where D is not held beside the contractions: through the host, as the SCF's own builds go.
    const Eigen::MatrixXd D = products.fetch(density);
    const Eigen::VectorXd coefficients = d.coefficients;
    const Eigen::MatrixXd J = compute((0.5 * scale) * (D + D.transpose()));
    d.coefficients = coefficients;
    return products.hold(J);
}

const Eigen::VectorXd& DensityFittedCoulomb::fitCoefficients() const {
    return impl_->coefficients;
}

size_t DensityFittedCoulomb::storedBytes() const {
    return impl_->contractions ? impl_->contractions->storedBytes() : (size_t) impl_->B.size() * sizeof(double);
}

const char* DensityFittedCoulomb::contractionsLocation() const {
    return impl_->contractions ? "device" : "host";
}

const char* DensityFittedCoulomb::integralsLocation() const {
    return impl_->deviceIntegrals ? "device" : "host";
}

Eigen::MatrixXd DensityFittedCoulomb::gradient(const Eigen::MatrixXd& density, int numAtoms, double threshold, int threads,
                                               const Eigen::MatrixXd* cartesianDensity) const {
    const Impl& d = *impl_;
    // The gradient belongs to the fit of compute(): without one there are no coefficients to differentiate.
    if (d.coefficients.size() != d.aux.size())
        throw OpenMM::OpenMMException("QM: DensityFittedCoulomb::gradient() before compute() (internal error)");
    for (const BasisSet* set : {&d.basis, &d.aux})
        for (const Shell& shell : set->shells())
            if (shell.atom < 0 || shell.atom >= numAtoms)
                throw OpenMM::OpenMMException("QM: DensityFittedCoulomb::gradient() for " + std::to_string(numAtoms) +
                                              " atoms, but a shell sits on atom " + std::to_string(shell.atom) + " (internal error)");
    double t = seconds();
    // Where B was computed, there the three-centre part runs (on cartesian D and c), and the metric's part too where
    // the device offers it (else the host computes it meanwhile); else both on the host. "gradient.threeCentre" is then
    // the time the host waits for the device.
    if (cartesianDensity && (cartesianDensity->rows() != d.basis.cartesianSize() || cartesianDensity->cols() != d.basis.cartesianSize()))
        throw OpenMM::OpenMMException("QM: DensityFittedCoulomb::gradient() given a cartesian density of the wrong size (internal error)");
    const bool onDevice =
        d.deviceIntegrals && d.contractions->startThreeCentreGradient(cartesianDensity ? *cartesianDensity : toCartesianBasis(d.basis, density),
                                                                      d.Taux.transpose() * d.coefficients);
    const double tStart = seconds() - t;
    t = seconds();
    // The metric's part on the host, unless the device computes it after its three-centre part.
    Eigen::MatrixXd G = onDevice && d.contractions->computesMetricGradient()
                            ? Eigen::MatrixXd::Zero(numAtoms, 3)
                            : densityFittingMetricGradient(d.aux, d.coefficients, numAtoms, threads);
    d.timings["gradient.metric"] = seconds() - t;
    t = seconds();
    if (onDevice)
        d.contractions->finishThreeCentreGradient(G);
    else
        G += densityFittingThreeCentreGradient(d.basis, d.aux, density, d.coefficients, numAtoms, threshold, threads);
    d.timings["gradient.threeCentre"] = tStart + seconds() - t;
    return G;
}

const std::map<std::string, double>& DensityFittedCoulomb::timings() const {
    return impl_->timings;
}

const Eigen::MatrixXd& DensityFittedCoulomb::metric() const {
    return impl_->metric;
}

} // namespace QM
} // namespace OpenMMDFT
