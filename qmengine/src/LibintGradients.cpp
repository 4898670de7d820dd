// Nuclear-coordinate derivatives of integral contractions (IntegralGradients.h).
#include "openmmdft/qm/IntegralGradients.h"
#include "openmmdft/qm/Angular.h"
#include "LibintShells.h"
#include "LibintThreeCentreGradient.h"
#include "Parallel.h"
#include <algorithm>
#include <array>
#include <cmath>

namespace OpenMMDFT {
namespace QM {

namespace {

/// Position of the cartesian component x^lx y^ly z^lz in libint's order (Angular.h).
int componentIndex(int lx, int ly, int lz) {
    const int i = ly + lz;
    return i * (i + 1) / 2 + lz;
}

/// The shells whose integrals give the derivative of shell s with respect to its centre:
/// up = l+1 with coefficients 2 a_p c_p, down = l-1 with c_p (absent for s shells).
struct DerivativeShells {
    libint2::Shell up, down;
    bool hasDown = false;
};

std::vector<DerivativeShells> derivativeShells(const BasisSet& basis) {
    std::vector<DerivativeShells> out(basis.numShells());
    for (int s = 0; s < basis.numShells(); s++) {
        const Shell& sh = basis.shells()[s];
        Shell up = sh;
        up.l = sh.l + 1;
        for (size_t p = 0; p < up.coefficients.size(); p++)
            up.coefficients[p] *= 2 * sh.exponents[p];
        out[s].up = toLibint(up);
        if (sh.l > 0) {
            Shell down = sh;
            down.l = sh.l - 1;
            out[s].down = toLibint(down);
            out[s].hasDown = true;
        }
    }
    return out;
}

/**
 * Adds to g(atom, d) the contraction 2 sum_ij P(i,j) d/dA_d <i|O|j> for bra shell s1 (centre A, on atom)
 * and ket shell s2, from the blocks up = <up(s1)|O|s2> and down = <down(s1)|O|s2> (row-major, n2 columns).
 * The factor 2 counts <j|O|i>: every ordered pair (s1, s2) is visited once.
 */
void addBraDerivative(int l, const double* up, const double* down, int n2, const Eigen::MatrixXd& P, int o1, int o2,
                      double g[3]) {
    const auto& comps = cartesianComponents(l);
    for (size_t i = 0; i < comps.size(); i++)
        for (int d = 0; d < 3; d++) {
            std::array<int, 3> e = comps[i];
            e[d]++;
            const double* upRow = up + (size_t) componentIndex(e[0], e[1], e[2]) * n2;
            const int n = comps[i][d];
            const double* downRow = nullptr;
            if (n > 0) {
                e[d] -= 2;
                downRow = down + (size_t) componentIndex(e[0], e[1], e[2]) * n2;
            }
            double sum = 0;
            for (int j = 0; j < n2; j++)
                sum += P(o1 + i, o2 + j) * (upRow[j] - (n > 0 ? n * downRow[j] : 0.0));
            g[d] += 2 * sum;
        }
}

/**
 * For every ordered shell pair: the bra-centre derivative of sum P O with the engine as set. perPair(s1, g3)
 * receives each bra shell's contribution, so that callers can route it (to the bra's atom, and for point
 * charges, with opposite sign to the charge).
 */
template <class Sink>
void braDerivatives(const BasisSet& basis, const std::vector<libint2::Shell>& shells, const std::vector<DerivativeShells>& deriv,
                    const Eigen::MatrixXd& Pc, libint2::Engine& engine, double threshold, int s1, Sink sink) {
    const auto& buf = engine.results();
    std::vector<double> up, down;
    const int l = basis.shells()[s1].l, n1up = (int) deriv[s1].up.size();
    const int n1down = (deriv[s1].hasDown ? (int) deriv[s1].down.size() : 0);
    double g[3] = {0, 0, 0};
    for (int s2 = 0; s2 < basis.numShells(); s2++) {
        if (threshold > 0 && pairOverlapBound(basis.shells()[s1], basis.shells()[s2]) < threshold)
            continue;
        const int n2 = (int) shells[s2].size();
        engine.compute(deriv[s1].up, shells[s2]);
        if (buf[0] == nullptr)
            continue;
        up.assign(buf[0], buf[0] + (size_t) n1up * n2);
        down.assign((size_t) n1down * n2, 0.0);
        if (deriv[s1].hasDown) {
            engine.compute(deriv[s1].down, shells[s2]);
            if (buf[0] != nullptr)
                down.assign(buf[0], buf[0] + (size_t) n1down * n2);
        }
        addBraDerivative(l, up.data(), down.data(), n2, Pc, basis.cartesianOffset(s1), basis.cartesianOffset(s2), g);
    }
    sink(s1, g);
}

Eigen::MatrixXd oneBodyGradient(const BasisSet& basis, libint2::Operator op, const Eigen::MatrixXd& P, int numAtoms, int threads) {
    ensureLibintInitialized();
    const auto shells = toLibint(basis);
    const auto deriv = derivativeShells(basis);
    const Eigen::MatrixXd Pc = toCartesianBasis(basis, P);
    threads = std::max(1, std::min(resolveThreads(threads), basis.numShells()));
    libint2::Engine prototype(op, basis.maxPrimitives(), basis.maxL() + 1, 0);
    std::vector<libint2::Engine> engines(threads, prototype);
    const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(numAtoms, 3);
    const Eigen::MatrixXd gradient = parallelChunkedSum<Eigen::MatrixXd>(basis.numShells(), threads, zero, [&](int s1, Eigen::MatrixXd& G, int t) {
        braDerivatives(basis, shells, deriv, Pc, engines[t], 0.0, s1, [&](int s, const double g[3]) {
            for (int d = 0; d < 3; d++)
                G(basis.shells()[s].atom, d) += g[d];
        });
    });
    return gradient;
}

} // namespace

Eigen::MatrixXd overlapGradient(const BasisSet& basis, const Eigen::MatrixXd& P, int numAtoms, int threads) {
    return oneBodyGradient(basis, libint2::Operator::overlap, P, numAtoms, threads);
}

Eigen::MatrixXd kineticGradient(const BasisSet& basis, const Eigen::MatrixXd& P, int numAtoms, int threads) {
    return oneBodyGradient(basis, libint2::Operator::kinetic, P, numAtoms, threads);
}

Eigen::MatrixXd densityFittedCoulombGradient(const BasisSet& basis, const BasisSet& auxiliary, const Eigen::MatrixXd& D,
                                             const Eigen::VectorXd& c, int numAtoms, double threshold, int threads) {
    return densityFittingThreeCentreGradient(basis, auxiliary, D, c, numAtoms, threshold, threads) +
           densityFittingMetricGradient(auxiliary, c, numAtoms, threads);
}

Eigen::MatrixXd densityFittingThreeCentreGradientLibint(const BasisSet& basis, const BasisSet& auxiliary, const Eigen::MatrixXd& D,
                                                        const Eigen::VectorXd& c, int numAtoms, double threshold, int threads) {
    // Libint's own first-derivative three-centre integrals are unusable in Debian 12's build (the engine
    // indexes its table of derivative routines with the wrong dimension and finds null routines), so the
    // basis-function derivatives come from the plain integrals with raised and lowered angular momentum, as
    // for the one-body terms, and the derivative on the remaining centre from translational invariance.
    ensureLibintInitialized();
    const auto shells = toLibint(basis);
    const auto auxShells = toLibint(auxiliary);
    const auto deriv = derivativeShells(basis);
    const Eigen::MatrixXd Ta = basisTransform(auxiliary);
    const Eigen::MatrixXd Dc = toCartesianBasis(basis, D);
    const Eigen::VectorXd cc = Ta.transpose() * c;
    const int ns = basis.numShells(), na = auxiliary.numShells();
    threads = std::max(1, std::min(resolveThreads(threads), na));

    // sum_Q c_Q sum_uv D_uv d(Q|uv): 2 sum_Q c_Q sum_{u on A} sum_v D_uv (Q|d_A u, v) on the orbital centres,
    // minus its sum on the fitting function's centre.
    libint2::Engine three(libint2::Operator::coulomb, std::max(maxNprim(shells), maxNprim(auxShells)),
                          std::max(maxL(shells) + 1, maxL(auxShells)), 0);
    three.set(libint2::BraKet::xs_xx);
    std::vector<libint2::Engine> engines3(threads, three);
    // The primitive-pair data of (Q, unit) and of (raised or lowered s1, s2), made once instead of in every call.
    const double lnPrecision = std::log(three.precision());
    const std::vector<libint2::ShellPair> auxPairs = withUnitShell(auxShells, three.precision());
    std::vector<libint2::ShellPair> upPairs((size_t) ns * ns), downPairs((size_t) ns * ns);
    parallelFor(ns, threads, [&](int s1, int) {
        for (int s2 = 0; s2 < ns; s2++) {
            if (threshold > 0 && pairOverlapBound(basis.shells()[s1], basis.shells()[s2]) < threshold)
                continue;
            upPairs[(size_t) s1 * ns + s2].init(deriv[s1].up, shells[s2], lnPrecision);
            if (deriv[s1].hasDown)
                downPairs[(size_t) s1 * ns + s2].init(deriv[s1].down, shells[s2], lnPrecision);
        }
    });
    const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(numAtoms, 3);
    const Eigen::MatrixXd gradient = parallelChunkedSum<Eigen::MatrixXd>(na, threads, zero, [&](int p, Eigen::MatrixXd& G, int t) {
        libint2::Engine& engine = engines3[t];
        const auto& buf = engine.results();
        const int op = auxiliary.cartesianOffset(p), np = (int) auxShells[p].size();
        std::vector<double> up, down;
        // (Q|x s2) contracted with c over the fitting function: out[i * n2 + j].
        auto contracted = [&](const libint2::Shell& x, int s2, const libint2::ShellPair& pair, std::vector<double>& out) {
            const int nx = (int) x.size(), n2 = (int) shells[s2].size();
            out.assign((size_t) nx * n2, 0.0);
            engine.compute2<libint2::Operator::coulomb, libint2::BraKet::xs_xx, 0>(auxShells[p], libint2::Shell::unit(), x, shells[s2],
                                                                                   &auxPairs[p], &pair);
            if (buf[0] == nullptr)
                return;
            for (int a = 0; a < np; a++)
                for (int k = 0; k < nx * n2; k++)
                    out[k] += cc(op + a) * buf[0][(size_t) a * nx * n2 + k];
        };
        for (int s1 = 0; s1 < ns; s1++) {
            double g[3] = {0, 0, 0};
            for (int s2 = 0; s2 < ns; s2++) {
                if (threshold > 0 && pairOverlapBound(basis.shells()[s1], basis.shells()[s2]) < threshold)
                    continue;
                contracted(deriv[s1].up, s2, upPairs[(size_t) s1 * ns + s2], up);
                if (deriv[s1].hasDown)
                    contracted(deriv[s1].down, s2, downPairs[(size_t) s1 * ns + s2], down);
                addBraDerivative(basis.shells()[s1].l, up.data(), down.data(), (int) shells[s2].size(), Dc,
                                 basis.cartesianOffset(s1), basis.cartesianOffset(s2), g);
            }
            for (int d = 0; d < 3; d++) {
                G(basis.shells()[s1].atom, d) += g[d];
                G(auxiliary.shells()[p].atom, d) -= g[d];
            }
        }
    });

    return gradient;
}

int largestFittingShellL() {
    return LIBINT_MAX_AM - 1;
}

Eigen::MatrixXd densityFittingMetricGradient(const BasisSet& auxiliary, const Eigen::VectorXd& c, int numAtoms, int threads) {
    // -1/2 sum_PQ c_P c_Q d(P|Q) = -sum_{P on A} sum_Q c_P c_Q (d_A P|Q) (both centres are basis centres).
    ensureLibintInitialized();
    const auto auxShells = toLibint(auxiliary);
    const auto auxDeriv = derivativeShells(auxiliary);
    const Eigen::VectorXd cc = basisTransform(auxiliary).transpose() * c;
    const int na = auxiliary.numShells();
    threads = std::max(1, std::min(resolveThreads(threads), na));
    Eigen::MatrixXd C = cc * cc.transpose();
    libint2::Engine two(libint2::Operator::coulomb, maxNprim(auxShells), maxL(auxShells) + 1, 0);
    two.set(libint2::BraKet::xs_xs);
    std::vector<libint2::Engine> engines2(threads, two);
    const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(numAtoms, 3);
    const Eigen::MatrixXd gradient = parallelChunkedSum<Eigen::MatrixXd>(na, threads, zero, [&](int p, Eigen::MatrixXd& G, int t) {
        libint2::Engine& engine = engines2[t];
        const auto& buf = engine.results();
        std::vector<double> up, down;
        double g[3] = {0, 0, 0};
        for (int q = 0; q < na; q++) {
            const int nq = (int) auxShells[q].size();
            engine.compute(auxDeriv[p].up, auxShells[q]);
            if (buf[0] == nullptr)
                continue;
            up.assign(buf[0], buf[0] + auxDeriv[p].up.size() * nq);
            down.assign(auxDeriv[p].hasDown ? auxDeriv[p].down.size() * nq : 0, 0.0);
            if (auxDeriv[p].hasDown) {
                engine.compute(auxDeriv[p].down, auxShells[q]);
                if (buf[0] != nullptr)
                    down.assign(buf[0], buf[0] + auxDeriv[p].down.size() * nq);
            }
            addBraDerivative(auxiliary.shells()[p].l, up.data(), down.data(), nq, C, auxiliary.cartesianOffset(p),
                             auxiliary.cartesianOffset(q), g);
        }
        for (int d = 0; d < 3; d++)
            G(auxiliary.shells()[p].atom, d) -= 0.5 * g[d];
    });
    return gradient;
}

Eigen::MatrixXd exactCoulombGradient(const BasisSet& basis, const Eigen::MatrixXd& density, int numAtoms, double threshold,
                                     int threads) {
    ensureLibintInitialized();
    const auto shells = toLibint(basis);
    const int ns = (int) shells.size();
    const Eigen::MatrixXd D = toCartesianBasis(basis, density);
    // Schwarz factors and the largest density element per shell pair, for screening (as ExactCoulomb::compute).
    const Eigen::MatrixXd Q = schwarz(shells, threads), Dmax = shellPairMaxima(basis, shells, D);
    const double Qmax = Q.maxCoeff();
    libint2::Engine prototype(libint2::Operator::coulomb, maxNprim(shells), maxL(shells), 1);
    prototype.set_precision(std::min(threshold, 1e-12) * 1e-3);
    threads = std::max(1, std::min(resolveThreads(threads), ns));
    std::vector<libint2::Engine> engines(threads, prototype);
    // Unique quartets s1>=s2, s3>=s4, (s1s2)>=(s3s4) with the degeneracy of ExactCoulomb::compute; each of the four
    // centres gets 1/2 deg sum D_ij D_kl d(ij|kl)/dR (Libint gives the twelve centre derivatives).
    const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(numAtoms, 3);
    const Eigen::MatrixXd gradient = parallelChunkedSum<Eigen::MatrixXd>(ns, threads, zero, [&](int row, Eigen::MatrixXd& G, int t) {
        const int s1 = ns - 1 - row;
        libint2::Engine& engine = engines[t];
        const auto& buf = engine.results();
        for (int s2 = 0; s2 <= s1; s2++) {
            const double q12 = Q(s1, s2);
            if (q12 * Qmax < threshold)
                continue;
            for (int s3 = 0; s3 <= s1; s3++)
                for (int s4 = 0; s4 <= (s3 == s1 ? s2 : s3); s4++) {
                    if (q12 * Q(s3, s4) * std::max(Dmax(s1, s2), Dmax(s3, s4)) * std::max(Dmax(s1, s2), Dmax(s3, s4)) < threshold)
                        continue;
                    engine.compute(shells[s1], shells[s2], shells[s3], shells[s4]);
                    const double deg = (s1 == s2 ? 1.0 : 2.0) * (s3 == s4 ? 1.0 : 2.0) * (s1 == s3 ? (s2 == s4 ? 1.0 : 2.0) : 2.0);
                    const int o1 = basis.cartesianOffset(s1), o2 = basis.cartesianOffset(s2);
                    const int o3 = basis.cartesianOffset(s3), o4 = basis.cartesianOffset(s4);
                    const int n1 = (int) shells[s1].size(), n2 = (int) shells[s2].size();
                    const int n3 = (int) shells[s3].size(), n4 = (int) shells[s4].size();
                    const int atoms[4] = {basis.shells()[s1].atom, basis.shells()[s2].atom, basis.shells()[s3].atom,
                                          basis.shells()[s4].atom};
                    for (int derivative = 0; derivative < 12; derivative++) {
                        const double* v = buf[derivative];
                        if (v == nullptr)
                            continue;
                        double sum = 0;
                        for (int i = 0, idx = 0; i < n1; i++)
                            for (int j = 0; j < n2; j++) {
                                const double dij = D(o1 + i, o2 + j);
                                double inner = 0;
                                for (int k = 0; k < n3; k++)
                                    for (int l = 0; l < n4; l++, idx++)
                                        inner += v[idx] * D(o3 + k, o4 + l);
                                sum += dij * inner;
                            }
                        G(atoms[derivative / 3], derivative % 3) += 0.5 * deg * sum;
                    }
                }
        }
    });
    return gradient;
}

} // namespace QM
} // namespace OpenMMDFT
