// Atomic partition of the molecular grid and grouping of points (seed 001 §3.2).
#include "openmmdft/qm/Elements.h"
#include "openmmdft/qm/Grid.h"
#include "Parallel.h"
#include <openmm/OpenMMException.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace OpenMMDFT {
namespace QM {

namespace {
constexpr double kSSFa = 0.64; // Stratmann, Scuseria, Frisch, CPL 257, 213 (1996)

double distance(const double a[3], const double b[3]) {
    return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/// Becke's (three iterations of p(f) = 1.5 f - 0.5 f^3) or SSF's cell function s(nu); cellFunction() for callers
/// outside, this inline copy for the per-point loops.
inline double cellValue(AtomicPartition partition, double nu) {
    if (partition == AtomicPartition::Becke) {
        double f = nu;
        for (int k = 0; k < 3; k++)
            f = 1.5 * f - 0.5 * f * f * f;
        return 0.5 * (1 - f);
    }
    if (nu <= -kSSFa)
        return 1.0;
    if (nu >= kSSFa)
        return 0.0;
    const double z = nu / kSSFa, z2 = z * z;
    const double g = z * (35 + z2 * (-35 + z2 * (21 - 5 * z2))) / 16;
    return 0.5 * (1 - g);
}

double sizeRadius(AtomicSizeAdjustment adj, int Z) {
    // Treutler's choice is the square root of the Bragg radius.
    return adj == AtomicSizeAdjustment::TreutlerRadii ? std::sqrt(braggRadius(Z)) : braggRadius(Z);
}

/// A cell whose product P_c falls below this times P_A (A: the point's parent atom) is left out of the partition
/// sum Z = sum_c P_c. Each left-out cell changes W_A = P_A / Z by less than this relative to W_A (below double
/// rounding), and its derivative, bounded by about 10 (P_c)^(7/8) / Z for Becke's s(mu) ~ (1 - mu)^8, by less still.
/// Since every factor s lies in [0, 1], a partial product bounds P_c from above, so the product stops at the first
/// factor that takes it below: for a point near its own atom, cells of distant atoms stop after a few factors.
constexpr double kRelativeCellCutoff = 1e-16;
/// The partition-weight derivatives take the product of a cell's other factors as P_c / s_d while every factor is
/// above this (P_c then keeps every other factor's digits); below, by prefix and suffix products.
constexpr double kSmallestDividedFactor = 1e-200;
/// Before the weight derivatives form a cell's whole row of factors and slopes (in vector instructions), the product
/// of its factors with the point's atom and this many of that atom's nearest neighbours must reach the cutoff (scalar,
/// stopping early): two thirds of the rows formed were dropped without it (8 QM waters). The weights alone, whose rows
/// are cheaper, test the first factor only (more cost them more than it saved, measured).
constexpr int kPrescreenedFactors = 2;

// Precomputed pair data for the partition: 1/R_AB and Becke's size adjustment a_AB, and for every atom the others
// nearest first (a point's nearest atoms are mostly those nearest to its parent atom: the factors that end a
// distant cell's product early).
struct PartitionData {
    int n;
    std::vector<double> invR, a;
    std::vector<double> nearest; // distance to the nearest other atom
    std::vector<int> order;      // order[A n + k]: the k-th nearest atom to A (k = 0: A itself)
    PartitionData(const std::vector<QMAtom>& atoms, const GridSettings& s) : n((int) atoms.size()) {
        invR.assign(n * n, 0);
        a.assign(n * n, 0);
        nearest.assign(n, std::numeric_limits<double>::infinity());
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                if (i == j)
                    continue;
                const double R = distance(atoms[i].xyz, atoms[j].xyz);
                invR[i * n + j] = 1 / R;
                nearest[i] = std::min(nearest[i], R);
                if (s.sizeAdjustment != AtomicSizeAdjustment::None) {
                    const double ri = sizeRadius(s.sizeAdjustment, atoms[i].Z);
                    const double rj = sizeRadius(s.sizeAdjustment, atoms[j].Z);
                    a[i * n + j] = std::max(-0.5, std::min(0.5, 0.25 * (rj / ri - ri / rj)));
                }
            }
        order.resize((size_t) n * n);
        for (int i = 0; i < n; i++) {
            int* row = &order[(size_t) i * n];
            for (int j = 0; j < n; j++)
                row[j] = j;
            // A itself first (invR = 0 on the diagonal), then by increasing distance, ties by index.
            std::sort(row, row + n, [&](int x, int y) {
                const double dx = (x == i ? 0.0 : 1 / invR[i * n + x]), dy = (y == i ? 0.0 : 1 / invR[i * n + y]);
                return dx < dy || (dx == dy && x < y);
            });
        }
    }
    /// s(nu_cd) at a point with distances dist.
    double factor(AtomicPartition partition, int c, int d, const double* dist) const {
        double mu = (dist[c] - dist[d]) * invR[c * n + d];
        mu += a[c * n + d] * (1 - mu * mu);
        return cellValue(partition, mu);
    }
    /// P_A = prod_{d != A} s(nu_Ad), stopped once below 1e-300 (the value then no longer matters).
    double ownCell(AtomicPartition partition, int A, const double* dist) const {
        double p = 1;
        for (int d = 0; d < n && p > 1e-300; d++)
            if (d != A)
                p *= factor(partition, A, d, dist);
        return p;
    }
    /// Whether cell c != A can survive otherCell's screening, judged from its first factors only: s(nu_cA) >= 1e-15,
    /// and the product of that and the factors of A's `count` nearest neighbours (other than c) >= cutoff. A cell
    /// that fails fails otherCell too (factors lie in [0, 1]); most cells far from the point fail here, before a
    /// caller forms their whole row.
    bool mayKeep(AtomicPartition partition, int A, int c, const double* dist, double cutoff, int count) const {
        double p = factor(partition, c, A, dist);
        if (p < 1e-15)
            return false;
        const int* near = &order[(size_t) A * n];
        for (int k = 1; k < n && count > 0; k++) {
            const int d = near[k];
            if (d == c)
                continue;
            p *= factor(partition, c, d, dist);
            if (p < cutoff)
                return false;
            count--;
        }
        return true;
    }
    /// P_c of a cell c != A for a point of atom A, or 0 when the cell is screened out: s(nu_cA) < 1e-15 (absolute,
    /// the first factor), or P_c < cutoff (kRelativeCellCutoff P_A). Factors are taken in A's neighbour order.
    double otherCell(AtomicPartition partition, int A, int c, const double* dist, double cutoff) const {
        double p = factor(partition, c, A, dist);
        if (p < 1e-15)
            return 0.0;
        const int* near = &order[(size_t) A * n];
        for (int k = 1; k < n; k++) {
            const int d = near[k];
            if (d == c)
                continue;
            p *= factor(partition, c, d, dist);
            if (p < cutoff)
                return 0.0;
        }
        return p;
    }
};

/**
 * The product of row[0 .. n) as eight independent partial products (one vector, no serial chain), and with
 * withSmallest its smallest entry, likewise, into *smallest.
 */
template <bool withSmallest>
double rowProduct(const double* __restrict row, int n, double* smallest) {
    double part[8] = {1, 1, 1, 1, 1, 1, 1, 1}, least[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int d0 = 0;
    for (; d0 + 8 <= n; d0 += 8)
        for (int k = 0; k < 8; k++) {
            part[k] *= row[d0 + k];
            if (withSmallest)
                least[k] = std::min(least[k], row[d0 + k]);
        }
    for (int k = 0; d0 + k < n; k++) {
        part[k] *= row[d0 + k];
        if (withSmallest)
            least[k] = std::min(least[k], row[d0 + k]);
    }
    if (withSmallest)
        *smallest = std::min(std::min(std::min(least[0], least[1]), std::min(least[2], least[3])),
                             std::min(std::min(least[4], least[5]), std::min(least[6], least[7])));
    return ((part[0] * part[1]) * (part[2] * part[3])) * ((part[4] * part[5]) * (part[6] * part[7]));
}

/// Becke's factors s(nu_cd) of cell c at a point for every d (d = c: not 1; the caller skips or resets it), without
/// branches or calls so that the loop runs in vector instructions.
void beckeFactors(int n, double dc, const double* __restrict dist, const double* __restrict invR, const double* __restrict a,
                  double* __restrict sv) {
    for (int d = 0; d < n; d++) {
        const double mu = (dc - dist[d]) * invR[d];
        const double f0 = mu + a[d] * (1 - mu * mu);
        const double f1 = 1.5 * f0 - 0.5 * f0 * f0 * f0, f2 = 1.5 * f1 - 0.5 * f1 * f1 * f1;
        sv[d] = 0.5 * (1 - (1.5 * f2 - 0.5 * f2 * f2 * f2));
    }
}

double weightOf(const std::vector<QMAtom>& atoms, const PartitionData& pd, int A, const double r[3],
                const GridSettings& s, std::vector<double>& dist) {
    const int n = pd.n;
    if (n == 1)
        return 1.0;
    for (int b = 0; b < n; b++)
        dist[b] = distance(r, atoms[b].xyz);
    // SSF screening: close enough to its own nucleus the weight is exactly one.
    if (s.partition == AtomicPartition::StratmannScuseriaFrisch && dist[A] <= 0.5 * (1 - kSSFa) * pd.nearest[A])
        return 1.0;
    if (s.partition == AtomicPartition::Becke) {
        // Becke's factors hardly ever reach 0 or 1 exactly, so each cell's whole row is formed at once in vector
        // instructions and the cell screened by its full product: the same decision as the early-stopping product
        // below (a partial product below the cutoff means a full one below it).
        thread_local std::vector<double> row;
        row.resize(n);
        auto cellProduct = [&](int c) {
            beckeFactors(n, dist[c], dist.data(), &pd.invR[(size_t) c * n], &pd.a[(size_t) c * n], row.data());
            row[c] = 1;
            return rowProduct<false>(row.data(), n, nullptr);
        };
        const double own = cellProduct(A);
        if (!(own > 0))
            return 0.0;
        const double cutoff = kRelativeCellCutoff * own;
        double total = own;
        for (int c = 0; c < n; c++) {
            if (c == A || !pd.mayKeep(s.partition, A, c, dist.data(), cutoff, 0))
                continue;
            const double p = cellProduct(c);
            if (p >= cutoff)
                total += p;
        }
        return own / total;
    }
    const double own = pd.ownCell(s.partition, A, dist.data());
    if (!(own > 0))
        return 0.0;
    const double cutoff = kRelativeCellCutoff * own;
    double total = own;
    for (int b = 0; b < n; b++)
        if (b != A)
            total += pd.otherCell(s.partition, A, b, dist.data(), cutoff);
    return own / total;
}
} // namespace

double cellFunction(AtomicPartition partition, double nu) {
    return cellValue(partition, nu);
}

namespace {
/// cellFunction and its derivative ds/dnu, in one pass.
void cellValueAndSlope(AtomicPartition partition, double nu, double& value, double& slope) {
    if (partition == AtomicPartition::Becke) {
        double f = nu;
        slope = 1;
        for (int k = 0; k < 3; k++) {
            slope *= 1.5 - 1.5 * f * f;
            f = 1.5 * f - 0.5 * f * f * f;
        }
        value = 0.5 * (1 - f);
        slope *= -0.5;
        return;
    }
    if (nu <= -kSSFa || nu >= kSSFa) {
        value = (nu <= -kSSFa ? 1.0 : 0.0);
        slope = 0;
        return;
    }
    const double z = nu / kSSFa, z2 = z * z;
    value = 0.5 * (1 - z * (35 + z2 * (-35 + z2 * (21 - 5 * z2))) / 16);
    slope = -0.5 * (35 + z2 * (-105 + z2 * (105 - 35 * z2))) / 16 / kSSFa;
}
} // namespace

struct PartitionWeightDerivatives::Impl {
    std::vector<QMAtom> atoms;
    GridSettings settings;
    PartitionData pd;
    std::vector<double> ax, ay, az;  // atom coordinates, one array per direction
    Impl(const std::vector<QMAtom>& a, const GridSettings& s) : atoms(a), settings(s), pd(a, s) {
        for (const QMAtom& atom : a) {
            ax.push_back(atom.xyz[0]);
            ay.push_back(atom.xyz[1]);
            az.push_back(atom.xyz[2]);
        }
    }
};

PartitionWeightDerivatives::PartitionWeightDerivatives(const std::vector<QMAtom>& atoms, const GridSettings& settings)
    : impl_(new Impl(atoms, settings)) {}

PartitionWeightDerivatives::~PartitionWeightDerivatives() = default;

namespace {

/** Per-thread scratch of PartitionWeightDerivatives::compute, one array per quantity and direction. */
struct PartitionScratch {
    std::vector<double> dist, ux, uy, uz, prefix, suffix, dZx, dZy, dZz, dPx, dPy, dPz;
    std::vector<double> sv, sl, mu;  ///< per cell c, a row of n at [c n]: factors s(nu_cd), slopes, mu_cd
    std::vector<int> cells;          ///< the cells kept (A's first)
    std::vector<double> cellProduct, cellSmallest;  ///< per kept cell: P_c and its smallest factor
    /// Sizes every array for n atoms and zeroes the accumulated derivatives (the rest is written before it is read).
    void prepare(int n) {
        if ((int) dist.size() != n) {
            for (std::vector<double>* v : {&dist, &ux, &uy, &uz})
                v->assign(n, 0.0);
            for (std::vector<double>* v : {&sv, &sl, &mu})
                v->assign((size_t) n * n, 0.0);
            prefix.resize(n + 1);
            suffix.resize(n + 1);
        }
        for (std::vector<double>* v : {&dZx, &dZy, &dZz, &dPx, &dPy, &dPz})
            v->assign(n, 0.0);
    }
};

/**
 * Becke's factors s(nu_cd) of cell c at a point, and their slopes ds/dmu_cd, for every d: mu_cd = (r_c - r_d) / R_cd,
 * nu = mu + a_cd (1 - mu^2). d = c gives mu = 0 through invR = 0 (the caller resets it). Without branches or calls,
 * in arrays of their own, so that the loop runs in vector instructions. A factor that is exactly 1 in double (a
 * neighbour far on the other side) has a slope below 1e-16: 0.
 */
void beckeFactorsAndSlopes(int n, double dc, const double* __restrict dist, const double* __restrict invR, const double* __restrict a,
                           double* __restrict muOf, double* __restrict sv, double* __restrict sl) {
    for (int d = 0; d < n; d++) {
        const double mu = (dc - dist[d]) * invR[d];
        // Becke's three iterations of p(f) = 1.5 f - 0.5 f^3, unrolled, with the chain rule for the slope.
        const double f0 = mu + a[d] * (1 - mu * mu);
        const double f1 = 1.5 * f0 - 0.5 * f0 * f0 * f0, f2 = 1.5 * f1 - 0.5 * f1 * f1 * f1;
        const double f3 = 1.5 * f2 - 0.5 * f2 * f2 * f2;
        const double slope = (1.5 - 1.5 * f0 * f0) * (1.5 - 1.5 * f1 * f1) * (1.5 - 1.5 * f2 * f2);
        const double value = 0.5 * (1 - f3);
        muOf[d] = mu;
        sv[d] = value;
        sl[d] = (value == 1.0 ? 0.0 : -0.5 * slope * (1 - 2 * a[d] * mu));
    }
}

/**
 * dP_c/dmu_cd (in sl) times dmu_cd/dR_c and dmu_cd/dR_d, added to (toX, toY, toZ)[d] and, summed, to [c]; d = c
 * contributes nothing (its slope is 0). toC: the unit vector from atom c to the point, atC: atom c's position.
 */
void addCellDerivatives(int n, int c, const double toC[3], const double atC[3], const double* __restrict sl,
                        const double* __restrict invR, const double* __restrict muOf, const double* __restrict ux,
                        const double* __restrict uy, const double* __restrict uz, const double* __restrict ax,
                        const double* __restrict ay, const double* __restrict az, double* __restrict toX,
                        double* __restrict toY, double* __restrict toZ) {
    double toCx = 0, toCy = 0, toCz = 0;
    for (int d = 0; d < n; d++) {
        const double others = sl[d] * invR[d];  // dP_c/dmu_cd / R_cd
        const double mu = muOf[d];
        const double ex = (atC[0] - ax[d]) * invR[d], ey = (atC[1] - ay[d]) * invR[d], ez = (atC[2] - az[d]) * invR[d];
        toCx += others * (-toC[0] - mu * ex);
        toCy += others * (-toC[1] - mu * ey);
        toCz += others * (-toC[2] - mu * ez);
        toX[d] += others * (ux[d] + mu * ex);
        toY[d] += others * (uy[d] + mu * ey);
        toZ[d] += others * (uz[d] + mu * ez);
    }
    toX[c] += toCx;
    toY[c] += toCy;
    toZ[c] += toCz;
}

} // namespace

double PartitionWeightDerivatives::compute(int A, const double r[3], std::vector<double>& dW) const {
    const Impl& impl = *impl_;
    const GridSettings& s = impl.settings;
    const PartitionData& pd = impl.pd;
    const int n = pd.n;
    dW.assign((size_t) n * 3, 0.0);
    if (n == 1)
        return 1.0;
    thread_local PartitionScratch w;
    w.prepare(n);
    const double* ax = impl.ax.data();
    const double* ay = impl.ay.data();
    const double* az = impl.az.data();
    for (int b = 0; b < n; b++) {
        const double dx = r[0] - ax[b], dy = r[1] - ay[b], dz = r[2] - az[b];
        const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
        w.dist[b] = d;
        const double inverse = (d > 0 ? 1 / d : 0.0);  // (r - R_b) / |r - R_b|
        w.ux[b] = dx * inverse;
        w.uy[b] = dy * inverse;
        w.uz[b] = dz * inverse;
    }
    if (s.partition == AtomicPartition::StratmannScuseriaFrisch && w.dist[A] <= 0.5 * (1 - kSSFa) * pd.nearest[A])
        return 1.0; // the weight is exactly one in a neighbourhood: no derivative
    // P_c = prod_{d != c} s(nu_cd). Only dP_A/dR_b and dZ/dR_b = sum_c dP_c/dR_b are needed, accumulated cell by
    // cell (O(atoms) per cell) over the cells that survive weightOf's screening. When only A's does,
    // W_A = P_A / P_A = 1 and dW_A = (dP_A - W_A dP_A) / P_A = 0 exactly: most points near a nucleus end here.
    // Pass 1 forms every candidate cell's factors as a whole row in vector instructions and screens the cell by its
    // full product (the same decision as weightOf's early-stopping scalar product: factors lie in [0, 1], so a
    // partial product below the cutoff means a full one below it); pass 2 takes the kept cells' derivatives.
    const bool becke = s.partition == AtomicPartition::Becke;
    // Plain unaliased pointers into the scratch arrays (one array per quantity and direction) for the loops over d.
    const double* __restrict dist = w.dist.data();
    const double* __restrict ux = w.ux.data();
    const double* __restrict uy = w.uy.data();
    const double* __restrict uz = w.uz.data();
    double* __restrict prefix = w.prefix.data();
    double* __restrict suffix = w.suffix.data();
    double* __restrict dZx = w.dZx.data();
    double* __restrict dZy = w.dZy.data();
    double* __restrict dZz = w.dZz.data();
    double* __restrict dPx = w.dPx.data();
    double* __restrict dPy = w.dPy.data();
    double* __restrict dPz = w.dPz.data();
    // Cell c's row of factors, slopes and mu (n each) at [c n]; its product and smallest factor.
    auto formCell = [&](int c, double& product, double& smallest) {
        const double* __restrict invR = &pd.invR[c * n];
        const double* __restrict a = &pd.a[c * n];
        double* __restrict sv = &w.sv[(size_t) c * n];
        double* __restrict sl = &w.sl[(size_t) c * n];
        double* __restrict muOf = &w.mu[(size_t) c * n];
        const double dc = dist[c];
        // d = c gives mu = 0 through invR = 0 and is reset to the neutral factor after the loop.
        if (becke)
            beckeFactorsAndSlopes(n, dc, dist, invR, a, muOf, sv, sl);
        else
            for (int d = 0; d < n; d++) {
                const double mu = (dc - dist[d]) * invR[d];
                double value, slope;
                cellValueAndSlope(s.partition, mu + a[d] * (1 - mu * mu), value, slope);
                muOf[d] = mu;
                sv[d] = value;
                sl[d] = (value == 1.0 ? 0.0 : slope * (1 - 2 * a[d] * mu));
            }
        sv[c] = 1;
        sl[c] = 0;
        product = rowProduct<true>(sv, n, &smallest);
    };
    w.cells.clear();
    w.cellProduct.clear();
    w.cellSmallest.clear();
    double PA, smallestA;
    formCell(A, PA, smallestA);
    if (!(PA > 0))
        return 0.0;
    w.cells.push_back(A);
    w.cellProduct.push_back(PA);
    w.cellSmallest.push_back(smallestA);
    const double cutoff = kRelativeCellCutoff * PA;
    for (int c = 0; c < n; c++) {
        if (c == A || !pd.mayKeep(s.partition, A, c, dist, cutoff, kPrescreenedFactors))
            continue;
        double product, smallest;
        formCell(c, product, smallest);
        if (product < cutoff)
            continue;
        w.cells.push_back(c);
        w.cellProduct.push_back(product);
        w.cellSmallest.push_back(smallest);
    }
    if (w.cells.size() == 1)
        return 1.0;
    double Z = 0;
    for (size_t k = 0; k < w.cells.size(); k++) {
        const int c = w.cells[k];
        const double* __restrict invR = &pd.invR[c * n];
        const double* __restrict sv = &w.sv[(size_t) c * n];
        double* __restrict sl = &w.sl[(size_t) c * n];
        const double* __restrict muOf = &w.mu[(size_t) c * n];
        // dP_c/dmu_cd needs the product of the other factors, P_c / s_d. Dividing is exact to a few ulps unless a
        // factor is so small that P_c could lose the others (underflow): then the prefix and suffix products, whose
        // two scans are serial chains and cost more than the rest of the cell.
        double product = w.cellProduct[k];
        if (w.cellSmallest[k] > kSmallestDividedFactor)
            for (int d = 0; d < n; d++)
                sl[d] *= product / sv[d];
        else {
            prefix[0] = 1;
            for (int d = 0; d < n; d++)
                prefix[d + 1] = prefix[d] * sv[d];
            suffix[n] = 1;
            for (int d = n - 1; d >= 0; d--)
                suffix[d] = suffix[d + 1] * sv[d];
            for (int d = 0; d < n; d++)
                sl[d] *= prefix[d] * suffix[d + 1];
            product = prefix[n];
            if (c == A)
                PA = product;
        }
        Z += product;
        // d P_c / d mu_cd times d mu_cd / dR_c and dR_d; d = c contributes nothing (its slope is 0). A's cell goes
        // to dP (and joins dZ after the loop over cells), the others to dZ alone.
        double* __restrict toX = (c == A ? dPx : dZx);
        double* __restrict toY = (c == A ? dPy : dZy);
        double* __restrict toZ = (c == A ? dPz : dZz);
        const double toC[3] = {ux[c], uy[c], uz[c]}, atC[3] = {ax[c], ay[c], az[c]};
        addCellDerivatives(n, c, toC, atC, sl, invR, muOf, ux, uy, uz, ax, ay, az, toX, toY, toZ);
    }
    for (int b = 0; b < n; b++) {
        dZx[b] += dPx[b];
        dZy[b] += dPy[b];
        dZz[b] += dPz[b];
    }
    if (!(Z > 0))
        return 0.0;
    const double W = PA / Z;
    for (int b = 0; b < n; b++) {
        dW[(size_t) b * 3] = (dPx[b] - W * dZx[b]) / Z;
        dW[(size_t) b * 3 + 1] = (dPy[b] - W * dZy[b]) / Z;
        dW[(size_t) b * 3 + 2] = (dPz[b] - W * dZz[b]) / Z;
    }
    return W;
}

void partitionPairData(const std::vector<QMAtom>& atoms, const GridSettings& settings, std::vector<double>& invR,
                       std::vector<double>& sizeAdjustment, std::vector<double>& nearest, std::vector<int>& neighbourOrder) {
    const PartitionData pd(atoms, settings);
    invR = pd.invR;
    sizeAdjustment = pd.a;
    nearest = pd.nearest;
    neighbourOrder = pd.order;
}

double partitionRelativeCellCutoff() {
    return kRelativeCellCutoff;
}

double ssfHalfWidth() {
    return kSSFa;
}

double partitionWeight(const std::vector<QMAtom>& atoms, int A, const double r[3], const GridSettings& settings) {
    PartitionData pd(atoms, settings);
    std::vector<double> dist(atoms.size());
    return weightOf(atoms, pd, A, r, settings, dist);
}

std::unique_ptr<PartitionWeightsInFlight> PartitionWeightEvaluator::startWeights(const std::vector<QMAtom>& atoms,
                                                                                 const GridSettings& settings,
                                                                                 const std::vector<RadialGrid>& radial,
                                                                                 const std::vector<std::vector<int>>& angularSizes) const {
    return deferredWork<std::vector<double>>([this, atoms, settings, radial, angularSizes] {
        size_t points = 0;
        for (const std::vector<int>& sizes : angularSizes)
            for (int size : sizes)
                points += size;
        std::vector<double> partition(points);
        weights(atoms, settings, radial, angularSizes, partition);
        return partition;
    });
}

AtomicGridWeightsInFlight::AtomicGridWeightsInFlight(AtomicGridWeights shells, std::unique_ptr<PartitionWeightsInFlight> started)
    : shells_(std::move(shells)), started_(std::move(started)) {
}

AtomicGridWeights AtomicGridWeightsInFlight::finish() {
    if (started_) {
        shells_.partition = started_->finish();
        started_.reset();
    }
    return std::move(shells_);
}

AtomicGridWeights atomicGridWeights(const std::vector<QMAtom>& atoms, const GridSettings& s, int threads,
                                    const PartitionWeightEvaluator* evaluator) {
    return startAtomicGridWeights(atoms, s, threads, evaluator).finish();
}

AtomicGridWeightsInFlight startAtomicGridWeights(const std::vector<QMAtom>& atoms, const GridSettings& s, int threads,
                                                 const PartitionWeightEvaluator* evaluator) {
    const int natoms = (int) atoms.size();
    // Partition weights of every atom's radial shells, in parallel (the O(atoms^2) part). Each shell has its own
    // Lebedev grid when the angular grids are pruned; the weights of shell (A, i) start at shellStart[A nr + i].
    const int nr = s.radialPoints;
    AtomicGridWeights out;
    std::vector<RadialGrid>& radial = out.radial;
    std::vector<std::vector<int>>& angularSizes = out.angularSizes;
    std::vector<size_t>& shellStart = out.shellStart;
    radial.resize(natoms);
    angularSizes.resize(natoms);
    shellStart.assign((size_t) natoms * nr + 1, 0);
    for (int A = 0; A < natoms; A++) {
        radial[A] = s.radialScheme == RadialScheme::TreutlerAhlrichs ? treutlerAhlrichsGrid(nr, atoms[A].Z, s.treutlerAtomicXi)
                                                                     : beckeGrid(nr, atoms[A].Z);
        angularSizes[A] = prunedAngularSizes(s.pruning, atoms[A].Z, radial[A], s.angularPoints);
        for (int i = 0; i < nr; i++)
            shellStart[(size_t) A * nr + i + 1] = shellStart[(size_t) A * nr + i] + angularSizes[A][i];
    }
    std::vector<double>& partition = out.partition;
    partition.resize(shellStart.back());
    threads = std::max(1, resolveThreads(threads));
    if (evaluator != nullptr) {
        std::unique_ptr<PartitionWeightsInFlight> started = evaluator->startWeights(atoms, s, radial, angularSizes);  // before out moves
        return AtomicGridWeightsInFlight(std::move(out), std::move(started));
    }
    else {
        const PartitionData pd(atoms, s);
        std::vector<std::vector<double>> scratch(threads, std::vector<double>(natoms));
        parallelFor(natoms * nr, threads, [&](int shell, int t) {
            const int A = shell / nr, i = shell % nr;
            const AngularGrid& ang = lebedevGrid(angularSizes[A][i]);
            for (size_t j = 0; j < ang.w.size(); j++) {
                double p[3];
                for (int k = 0; k < 3; k++)
                    p[k] = atoms[A].xyz[k] + radial[A].r[i] * ang.xyz[j][k];
                partition[shellStart[shell] + j] = weightOf(atoms, pd, A, p, s, scratch[t]);
            }
        });
    }
    return AtomicGridWeightsInFlight(std::move(out), nullptr);
}

MolecularGrid::MolecularGrid(const std::vector<QMAtom>& atoms, const BasisSet& basis, const GridSettings& s,
                             int threads, const PartitionWeightEvaluator* evaluator)
    : MolecularGrid(atoms, basis, s, threads, atomicGridWeights(atoms, s, threads, evaluator)) {
}

MolecularGrid::MolecularGrid(const std::vector<QMAtom>& atoms, const BasisSet& basis, const GridSettings& s,
                             int threads, AtomicGridWeights weights) {
    const int natoms = (int) atoms.size(), nr = s.radialPoints;
    if (weights.radial.size() != atoms.size() || weights.shellStart.size() != (size_t) natoms * nr + 1 ||
        weights.partition.size() != weights.shellStart.back())
        throw OpenMM::OpenMMException("QM: grid weights made for other atoms or settings (internal error)");
    const PartitionData pd(atoms, s);
    const std::vector<RadialGrid>& radial = weights.radial;
    const std::vector<std::vector<int>>& angularSizes = weights.angularSizes;
    const std::vector<size_t>& shellStart = weights.shellStart;
    const std::vector<double>& partition = weights.partition;
    threads = std::max(1, resolveThreads(threads));

    // 1. Points with weights; each either goes to its atom's sphere or waits for a cube. Atoms in parallel, each into
    // its own lists, joined in atom order afterwards: the batches are the same for any thread count.
    struct Loose { double p[3]; double w; int atom; };
    std::vector<GridBatch> spheres(natoms);
    std::vector<std::vector<Loose>> looseOf(natoms);
    parallelFor(natoms, threads, [&](int A, int) {
        const RadialGrid& rad = radial[A];
        const int sphereShells = (int) std::floor(s.sphereShellFraction * nr);
        const double cap = s.sphereNeighbourFraction * pd.nearest[A];
        GridBatch& sph = spheres[A];
        sph.sphere = true;
        sph.atom = A;
        sph.center = {atoms[A].xyz[0], atoms[A].xyz[1], atoms[A].xyz[2]};
        const size_t atomPoints = shellStart[(size_t) (A + 1) * nr] - shellStart[(size_t) A * nr];
        for (std::vector<double>* v : {&sph.x, &sph.y, &sph.z, &sph.w})
            v->reserve(atomPoints);
        sph.parentAtom.reserve(atomPoints);
        std::vector<Loose>& loose = looseOf[A];
        loose.reserve(atomPoints);
        for (int i = 0; i < nr; i++) {
            const bool inSphere = i < sphereShells && rad.r[i] <= cap;
            if (inSphere)
                sph.radius = std::max(sph.radius, rad.r[i]);
            const AngularGrid& ang = lebedevGrid(angularSizes[A][i]);
            const double* shellPartition = &partition[shellStart[(size_t) A * nr + i]];
            for (size_t j = 0; j < ang.w.size(); j++) {
                double p[3];
                for (int k = 0; k < 3; k++)
                    p[k] = atoms[A].xyz[k] + rad.r[i] * ang.xyz[j][k];
                const double w = 4 * M_PI * rad.w[i] * ang.w[j] * shellPartition[j];
                if (std::abs(w) <= s.weightThreshold)
                    continue;
                if (inSphere) {
                    sph.x.push_back(p[0]);
                    sph.y.push_back(p[1]);
                    sph.z.push_back(p[2]);
                    sph.w.push_back(w);
                    sph.parentAtom.push_back(A);
                }
                else
                    loose.push_back({{p[0], p[1], p[2]}, w, A});
            }
        }
    });
    for (auto& sph : spheres)
        if (sph.size() > 0)
            batches_.push_back(std::move(sph));

    // 2. Remaining points into axis-aligned cubes of edge cubeEdge, numbered in the order their first points come.
    // The cubes' numbers are looked up in a flat table over the points' bounding box (a tree map of the cubes'
    // coordinates took 18 ms for the 350000 points of 24 waters on (50, 194), in the serial part of the set-up), or
    // in a hash map where that box holds too many cubes (a point far out).
    size_t numLoose = 0;
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    std::vector<size_t> looseStart(natoms + 1, 0);  // the first loose point of each atom, in atom order
    for (int A = 0; A < natoms; A++) {
        looseStart[A] = numLoose;
        numLoose += looseOf[A].size();
        for (const Loose& l : looseOf[A])
            for (int k = 0; k < 3; k++) {
                lo[k] = std::min(lo[k], l.p[k]);
                hi[k] = std::max(hi[k], l.p[k]);
            }
    }
    looseStart[natoms] = numLoose;
    if (numLoose > 0) {
        long long cells[3];
        for (int k = 0; k < 3; k++)
            cells[k] = (long long) std::floor((hi[k] - lo[k]) / s.cubeEdge) + 1;
        const bool flat = cells[0] * cells[1] * cells[2] <= (1LL << 22);
        std::vector<int> table(flat ? cells[0] * cells[1] * cells[2] : 0, -1);
        std::unordered_map<long long, int> sparse;
        // The cubes' keys in parallel, then their numbers in the order the points come.
        std::vector<long long> keyOf(numLoose);
        parallelFor(natoms, threads, [&](int A, int) {
            for (size_t k = looseStart[A]; k < looseStart[A + 1]; k++) {
                const Loose& l = looseOf[A][k - looseStart[A]];
                long long c[3];
                for (int i = 0; i < 3; i++)
                    c[i] = std::min(cells[i] - 1, (long long) std::floor((l.p[i] - lo[i]) / s.cubeEdge));
                keyOf[k] = (c[0] * cells[1] + c[1]) * cells[2] + c[2];
            }
        });
        std::vector<int> cubeOf(numLoose);  // per loose point (atom order), its batch
        for (size_t k = 0; k < numLoose; k++) {
            int& index = flat ? table[keyOf[k]] : sparse.emplace(keyOf[k], -1).first->second;
            if (index < 0) {
                index = (int) batches_.size();
                const long long c[3] = {keyOf[k] / (cells[1] * cells[2]), (keyOf[k] / cells[2]) % cells[1], keyOf[k] % cells[2]};
                GridBatch cube;
                cube.center = {lo[0] + (c[0] + 0.5) * s.cubeEdge, lo[1] + (c[1] + 0.5) * s.cubeEdge, lo[2] + (c[2] + 0.5) * s.cubeEdge};
                cube.radius = 0.5 * std::sqrt(3.0) * s.cubeEdge;
                batches_.push_back(std::move(cube));
            }
            cubeOf[k] = index;
        }
        // Each point's place in its cube (the order they come), then the cubes sized and filled, atoms in parallel.
        std::vector<size_t> cubeSize(batches_.size(), 0), place(numLoose);
        for (size_t k = 0; k < numLoose; k++)
            place[k] = cubeSize[cubeOf[k]]++;
        parallelFor((int) batches_.size(), threads, [&](int b, int) {  // (the new pages' first touch is most of this)
            if (!batches_[b].sphere) {
                GridBatch& cube = batches_[b];
                for (std::vector<double>* v : {&cube.x, &cube.y, &cube.z, &cube.w})
                    v->resize(cubeSize[b]);
                cube.parentAtom.resize(cubeSize[b]);
            }
        });
        parallelFor(natoms, threads, [&](int A, int) {
            for (size_t k = looseStart[A]; k < looseStart[A + 1]; k++) {
                const Loose& l = looseOf[A][k - looseStart[A]];
                GridBatch& b = batches_[cubeOf[k]];
                const size_t i = place[k];
                b.x[i] = l.p[0];
                b.y[i] = l.p[1];
                b.z[i] = l.p[2];
                b.w[i] = l.w;
                b.parentAtom[i] = l.atom;
            }
        });
    }

    // 3. Significant shells per group (seed 001 eq. 3.1 with the group-to-centre distance), groups in parallel.
    parallelFor((int) batches_.size(), threads, [&](int index, int) {
        GridBatch& b = batches_[index];
        b.lo = {1e300, 1e300, 1e300};
        b.hi = {-1e300, -1e300, -1e300};
        for (size_t i = 0; i < b.size(); i++) {
            const double p[3] = {b.x[i], b.y[i], b.z[i]};
            for (int k = 0; k < 3; k++) {
                b.lo[k] = std::min(b.lo[k], p[k]);
                b.hi[k] = std::max(b.hi[k], p[k]);
            }
        }
        for (int sh = 0; sh < basis.numShells(); sh++) {
            const Shell& shell = basis.shells()[sh];
            bool keep = true;
            if (s.screening) {
                double d2 = 0;
                if (b.sphere) {
                    const double d = std::max(0.0, distance(shell.center.data(), b.center.data()) - b.radius);
                    d2 = d * d;
                }
                // The tight box bounds every group (for spheres it may be closer than the sphere).
                double box2 = 0;
                for (int k = 0; k < 3; k++) {
                    const double c = shell.center[k];
                    const double e = c < b.lo[k] ? b.lo[k] - c : (c > b.hi[k] ? c - b.hi[k] : 0.0);
                    box2 += e * e;
                }
                d2 = b.sphere ? std::max(d2, box2) : box2;
                keep = shell.minExponent() * d2 < s.significanceExponent;
            }
            if (keep) {
                b.shells.push_back(sh);
                for (int f = 0; f < shell.size(); f++)
                    b.functions.push_back(basis.offset(sh) + f);
            }
        }
    });
    for (const GridBatch& b : batches_)
        numPoints_ += b.size();
}

double MolecularGrid::averageFunctionsPerPoint() const {
    double sum = 0;
    for (const auto& b : batches_)
        sum += (double) b.size() * b.functions.size();
    return numPoints_ ? sum / numPoints_ : 0.0;
}

} // namespace QM
} // namespace OpenMMDFT
