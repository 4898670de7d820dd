#pragma once
// Internal to the engine: the McMurchie-Davidson scheme for one-electron Coulomb integrals (McMurchie and Davidson,
// J. Comput. Phys. 26, 218 (1978); Helgaker, Jorgensen and Olsen, "Molecular Electronic-Structure Theory", 9.5 and
// 9.9). A product of two cartesian Gaussians is a sum of Hermite Gaussians Lambda_tuv centred at P with expansion
// coefficients E^ij_t per direction, and the potential of Lambda_tuv at C is (2 pi / p) R_tuv(p, P - C).

namespace OpenMMDFT {
namespace QM {

/// Highest Hermite order t+u+v handled: f-f pairs (6), one more for a basis-function derivative, and a fitting
/// function up to g (4) or one more for the derivative with respect to a point charge's position.
constexpr int kMaxHermiteOrder = 11;

/// Number of Hermite functions with t+u+v <= L.
constexpr int hermiteCount(int L) {
    return (L + 1) * (L + 2) * (L + 3) / 6;
}

/// Position of (t, u, v) in the compact arrays of hermiteCoulomb (ordered by t+u+v, so the first hermiteCount(L)
/// entries are those of order <= L, whatever the L of the array).
int hermiteIndex(int t, int u, int v);

/// The (t, u, v) of compact index k.
void hermiteTriple(int k, int& t, int& u, int& v);

/**
 * One-dimensional expansion coefficients of x_A^i x_B^j exp(-a x_A^2 - b x_B^2) = K sum_t E[i][j][t] Lambda_t,
 * K = exp(-ab/p X_AB^2) left out, for i <= iMax, j <= jMax: E is (iMax+1) x (jMax+1) x (iMax+jMax+1), row-major.
 * p = a + b, PA = P_x - A_x, PB = P_x - B_x.
 */
void hermiteExpansion(int iMax, int jMax, double p, double PA, double PB, double* E);

/// Charges whose R_tuv hermiteCoulombBlock builds together, lane innermost: one AVX-512 vector of doubles.
constexpr int kHermiteBlock = 8;

/**
 * R_tuv(p, PC) for t+u+v <= L at kHermiteBlock points C at once, in compact order, from F_n(p |PC|^2), n = 0..L
 * (boysFunctionBlock): R^n_000 = (-2p)^n F_n and R^n_(t+1)uv = t R^(n+1)_(t-1)uv + X_PC R^(n+1)_tuv (and likewise
 * for u, v). Arrays are lane-innermost: PC[d * kHermiteBlock + lane], F[n * kHermiteBlock + lane],
 * R[k * kHermiteBlock + lane]. The recursion is the same for every charge, so each step is one vector operation.
 */
void hermiteCoulombBlock(int L, double p, const double* PC, const double* F, double* R);

/// The same with an exponent per lane, p[lane]: the reduced exponent pq / (p + q) of a Hermite Gaussian pair, for
/// Coulomb integrals between two charge distributions (Helgaker et al. 9.9.33).
void hermiteCoulombBlock(int L, const double* p, const double* PC, const double* F, double* R);

} // namespace QM
} // namespace OpenMMDFT
