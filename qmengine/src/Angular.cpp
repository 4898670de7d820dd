#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/Basis.h"
#include <cmath>
#include <mutex>

namespace OpenMMDFT {
namespace QM {

namespace {
constexpr int kMaxL = 6; // tables built up to l = 6 (beyond what the basis allows, for auxiliary sets)

double binomial(int n, int k) {
    if (k < 0 || k > n)
        return 0;
    double r = 1;
    for (int i = 1; i <= k; i++)
        r = r * (n - k + i) / i;
    return r;
}

double doubleFactorial(int n) {
    double r = 1;
    for (int k = n; k > 1; k -= 2)
        r *= k;
    return r;
}

int componentIndex(int l, int lx, int ly, int lz) {
    // Position in libint order: i = l - lx, within it j = lz.
    const int i = l - lx;
    return i * (i + 1) / 2 + lz;
    (void) ly;
}

struct Tables {
    std::vector<std::vector<std::array<int, 3>>> components;
    std::vector<Eigen::MatrixXd> pure;
    Tables() {
        for (int l = 0; l <= kMaxL; l++) {
            std::vector<std::array<int, 3>> c;
            for (int i = 0; i <= l; i++)
                for (int j = 0; j <= i; j++)
                    c.push_back({l - i, i - j, j});
            components.push_back(c);
            pure.push_back(buildPure(l));
        }
    }
    // Real solid harmonics from the expansion in Helgaker, Jorgensen, Olsen eq. (6.4.47);
    // the normalization is then fixed numerically with the exact overlap of cartesian
    // monomials of a common radial Gaussian, so no closed-form constant has to be trusted.
    static Eigen::MatrixXd buildPure(int l) {
        const int ncart = (l + 1) * (l + 2) / 2;
        Eigen::MatrixXd T = Eigen::MatrixXd::Zero(2 * l + 1, ncart);
        for (int m = -l; m <= l; m++) {
            const int am = std::abs(m);
            Eigen::VectorXd row = Eigen::VectorXd::Zero(ncart);
            for (int t = 0; t <= (l - am) / 2; t++)
                for (int u = 0; u <= t; u++) {
                    // 2v runs over even values for m >= 0, odd values for m < 0.
                    for (int twoV = (m < 0 ? 1 : 0); twoV <= am; twoV += 2) {
                        const int vMinusVm = m < 0 ? (twoV - 1) / 2 : twoV / 2;
                        const double sign = ((t + vMinusVm) % 2) ? -1.0 : 1.0;
                        const double c = sign * std::pow(0.25, t) * binomial(l, t) * binomial(l - t, am + t) *
                                         binomial(t, u) * binomial(am, twoV);
                        const int ly = 2 * u + twoV;
                        const int lx = 2 * t + am - ly;
                        const int lz = l - 2 * t - am;
                        row[componentIndex(l, lx, ly, lz)] += c;
                    }
                }
            // Normalize: <x^a y^b z^c | x^a' y^b' z^c'> / <x^l | x^l> over a common radial part.
            double norm = 0;
            const auto& comps = componentsOf(l);
            for (int i = 0; i < ncart; i++)
                for (int j = 0; j < ncart; j++) {
                    const int a = comps[i][0] + comps[j][0], b = comps[i][1] + comps[j][1], cz = comps[i][2] + comps[j][2];
                    if (a % 2 || b % 2 || cz % 2)
                        continue;
                    norm += row[i] * row[j] * doubleFactorial(a - 1) * doubleFactorial(b - 1) * doubleFactorial(cz - 1) /
                            doubleFactorial(2 * l - 1);
                }
            T.row(m + l) = row / std::sqrt(norm);
        }
        return T;
    }
    static std::vector<std::array<int, 3>> componentsOf(int l) {
        std::vector<std::array<int, 3>> c;
        for (int i = 0; i <= l; i++)
            for (int j = 0; j <= i; j++)
                c.push_back({l - i, i - j, j});
        return c;
    }
};

const Tables& tables() {
    static const Tables t;
    return t;
}
} // namespace

const std::vector<std::array<int, 3>>& cartesianComponents(int l) {
    return tables().components.at(l);
}

const Eigen::MatrixXd& cartesianToPure(int l) {
    return tables().pure.at(l);
}

Eigen::MatrixXd basisTransform(const BasisSet& basis) {
    Eigen::MatrixXd T = Eigen::MatrixXd::Zero(basis.size(), basis.cartesianSize());
    for (int s = 0; s < basis.numShells(); s++) {
        const Shell& sh = basis.shells()[s];
        if (sh.pure)
            T.block(basis.offset(s), basis.cartesianOffset(s), sh.size(), sh.cartesianSize()) = cartesianToPure(sh.l);
        else
            T.block(basis.offset(s), basis.cartesianOffset(s), sh.size(), sh.size()).setIdentity();
    }
    return T;
}

namespace {

bool anyPure(const BasisSet& basis) {
    for (const Shell& sh : basis.shells())
        if (sh.pure && sh.l >= 2)
            return true;
    return false;
}

} // namespace

Eigen::MatrixXd toCartesianBasis(const BasisSet& basis, const Eigen::MatrixXd& M) {
    if (!anyPure(basis))
        return M;
    // R = M T, then T^T R, one shell's columns and rows at a time.
    Eigen::MatrixXd R(M.rows(), basis.cartesianSize());
    for (int s = 0; s < basis.numShells(); s++) {
        const Shell& sh = basis.shells()[s];
        auto columns = R.middleCols(basis.cartesianOffset(s), sh.cartesianSize());
        if (sh.pure)
            columns.noalias() = M.middleCols(basis.offset(s), sh.size()) * cartesianToPure(sh.l);
        else
            columns = M.middleCols(basis.offset(s), sh.size());
    }
    Eigen::MatrixXd out(basis.cartesianSize(), basis.cartesianSize());
    for (int s = 0; s < basis.numShells(); s++) {
        const Shell& sh = basis.shells()[s];
        auto rows = out.middleRows(basis.cartesianOffset(s), sh.cartesianSize());
        if (sh.pure)
            rows.noalias() = cartesianToPure(sh.l).transpose() * R.middleRows(basis.offset(s), sh.size());
        else
            rows = R.middleRows(basis.offset(s), sh.size());
    }
    return out;
}

Eigen::MatrixXd fromCartesianBasis(const BasisSet& basis, const Eigen::MatrixXd& M) {
    if (!anyPure(basis))
        return M;
    // R = M T^T, then T R.
    Eigen::MatrixXd R(M.rows(), basis.size());
    for (int s = 0; s < basis.numShells(); s++) {
        const Shell& sh = basis.shells()[s];
        auto columns = R.middleCols(basis.offset(s), sh.size());
        if (sh.pure)
            columns.noalias() = M.middleCols(basis.cartesianOffset(s), sh.cartesianSize()) * cartesianToPure(sh.l).transpose();
        else
            columns = M.middleCols(basis.cartesianOffset(s), sh.size());
    }
    Eigen::MatrixXd out(basis.size(), basis.size());
    for (int s = 0; s < basis.numShells(); s++) {
        const Shell& sh = basis.shells()[s];
        auto rows = out.middleRows(basis.offset(s), sh.size());
        if (sh.pure)
            rows.noalias() = cartesianToPure(sh.l) * R.middleRows(basis.cartesianOffset(s), sh.cartesianSize());
        else
            rows = R.middleRows(basis.cartesianOffset(s), sh.size());
    }
    return out;
}

} // namespace QM
} // namespace OpenMMDFT
