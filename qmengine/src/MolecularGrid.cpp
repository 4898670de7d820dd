// Atomic partition of the molecular grid and grouping of points (seed 001 §3.2).
#include "openmmdft/qm/Elements.h"
#include "openmmdft/qm/Grid.h"
#include "Parallel.h"
#include <openmm/OpenMMException.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace OpenMMDFT {
namespace QM {

namespace {
constexpr double kSSFa = 0.64; // Stratmann, Scuseria, Frisch, CPL 257, 213 (1996)

double distance(const double a[3], const double b[3]) {
    return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

double sizeRadius(AtomicSizeAdjustment adj, int Z) {
    // Treutler's choice is the square root of the Bragg radius.
    return adj == AtomicSizeAdjustment::TreutlerRadii ? std::sqrt(braggRadius(Z)) : braggRadius(Z);
}

// Precomputed pair data for the partition: 1/R_AB and Becke's size adjustment a_AB.
struct PartitionData {
    int n;
    std::vector<double> invR, a;
    std::vector<double> nearest; // distance to the nearest other atom
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
    }
};

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
    double total = 0, own = 0;
    for (int b = 0; b < n; b++) {
        double p = 1;
        if (b != A) {
            // P_B <= s(mu_BA): atoms B much farther from the point than A have a negligible cell
            // function (Becke's ~ (1-mu)^8, SSF's exactly 0), which avoids the O(atoms) product
            // for all but the few atoms near the point. Dropped P_B are below 1e-15 absolute.
            double mu = (dist[b] - dist[A]) * pd.invR[b * n + A];
            mu += pd.a[b * n + A] * (1 - mu * mu);
            p = cellFunction(s.partition, mu);
            if (p < 1e-15)
                continue;
        }
        for (int c = 0; c < n && p > 1e-300; c++) {
            if (c == b || (b != A && c == A))
                continue;
            double mu = (dist[b] - dist[c]) * pd.invR[b * n + c];
            mu += pd.a[b * n + c] * (1 - mu * mu);
            p *= cellFunction(s.partition, mu);
        }
        total += p;
        if (b == A)
            own = p;
    }
    return total > 0 ? own / total : 0.0;
}
} // namespace

double cellFunction(AtomicPartition partition, double nu) {
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
    Impl(const std::vector<QMAtom>& a, const GridSettings& s) : atoms(a), settings(s), pd(a, s) {}
};

PartitionWeightDerivatives::PartitionWeightDerivatives(const std::vector<QMAtom>& atoms, const GridSettings& settings)
    : impl_(new Impl(atoms, settings)) {}

PartitionWeightDerivatives::~PartitionWeightDerivatives() = default;

double PartitionWeightDerivatives::compute(int A, const double r[3], std::vector<double>& dW) const {
    const auto& atoms = impl_->atoms;
    const GridSettings& s = impl_->settings;
    const PartitionData& pd = impl_->pd;
    const int n = pd.n;
    dW.assign((size_t) n * 3, 0.0);
    if (n == 1)
        return 1.0;
    thread_local std::vector<double> dist;
    thread_local std::vector<std::array<double, 3>> unit; // (r - R_b) / |r - R_b|
    dist.resize(n);
    unit.resize(n);
    for (int b = 0; b < n; b++) {
        dist[b] = distance(r, atoms[b].xyz);
        for (int k = 0; k < 3; k++)
            unit[b][k] = dist[b] > 0 ? (r[k] - atoms[b].xyz[k]) / dist[b] : 0.0;
    }
    if (s.partition == AtomicPartition::StratmannScuseriaFrisch && dist[A] <= 0.5 * (1 - kSSFa) * pd.nearest[A])
        return 1.0; // the weight is exactly one in a neighbourhood: no derivative
    // P_c = prod_{d != c} s(nu_cd). Only dP_A/dR_b and dZ/dR_b = sum_c dP_c/dR_b are needed, accumulated cell by
    // cell (O(atoms) per cell that survives the screening of weightOf; far cells are exactly the skipped ones).
    thread_local std::vector<double> sv, sl, prefix, suffix;
    thread_local std::vector<std::array<double, 3>> dnuC, dnuD, dZ, dPA;
    sv.resize(n);
    sl.resize(n);
    prefix.resize(n + 1);
    suffix.resize(n + 1);
    dnuC.resize(n);
    dnuD.resize(n);
    dZ.assign(n, {0, 0, 0});
    dPA.assign(n, {0, 0, 0});
    // The cells that survive weightOf's screening. When only A's does, W_A = P_A / P_A = 1 and
    // dW_A = (dP_A - W_A dP_A) / P_A = 0 exactly: most points near a nucleus end here.
    thread_local std::vector<int> cells;
    cells.clear();
    for (int c = 0; c < n; c++) {
        if (c != A) {
            double mu = (dist[c] - dist[A]) * pd.invR[c * n + A];
            mu += pd.a[c * n + A] * (1 - mu * mu);
            if (cellFunction(s.partition, mu) < 1e-15)
                continue;
        }
        cells.push_back(c);
    }
    if (cells.size() == 1)
        return 1.0;
    double Z = 0, PA = 0;
    for (int c : cells) {
        for (int d = 0; d < n; d++) {
            sv[d] = 1;
            sl[d] = 0;
            if (d == c)
                continue;
            const double invR = pd.invR[c * n + d], a = pd.a[c * n + d];
            const double mu = (dist[c] - dist[d]) * invR;
            const double nu = mu + a * (1 - mu * mu);
            double slope;
            cellValueAndSlope(s.partition, nu, sv[d], slope);
            // A factor that is exactly 1 in double (a neighbour far on the other side) has a slope below 1e-16.
            sl[d] = (sv[d] == 1.0 ? 0.0 : slope * (1 - 2 * a * mu)); // ds/dmu
            if (sl[d] == 0)
                continue;
            for (int k = 0; k < 3; k++) {
                const double e = (atoms[c].xyz[k] - atoms[d].xyz[k]) * invR; // unit vector R_d -> R_c
                dnuC[d][k] = (-unit[c][k] - mu * e) * invR;
                dnuD[d][k] = (unit[d][k] + mu * e) * invR;
            }
        }
        prefix[0] = 1;
        for (int d = 0; d < n; d++)
            prefix[d + 1] = prefix[d] * sv[d];
        suffix[n] = 1;
        for (int d = n - 1; d >= 0; d--)
            suffix[d] = suffix[d + 1] * sv[d];
        const double Pc = prefix[n];
        Z += Pc;
        if (c == A)
            PA = Pc;
        for (int d = 0; d < n; d++) {
            if (d == c || sl[d] == 0)
                continue;
            const double others = prefix[d] * suffix[d + 1] * sl[d]; // d P_c / d mu_cd
            for (int k = 0; k < 3; k++) {
                const double toC = others * dnuC[d][k], toD = others * dnuD[d][k];
                dZ[c][k] += toC;
                dZ[d][k] += toD;
                if (c == A) {
                    dPA[c][k] += toC;
                    dPA[d][k] += toD;
                }
            }
        }
    }
    if (!(Z > 0))
        return 0.0;
    const double W = PA / Z;
    for (int b = 0; b < n; b++)
        for (int k = 0; k < 3; k++)
            dW[(size_t) b * 3 + k] = (dPA[b][k] - W * dZ[b][k]) / Z;
    return W;
}

void partitionPairData(const std::vector<QMAtom>& atoms, const GridSettings& settings, std::vector<double>& invR,
                       std::vector<double>& sizeAdjustment, std::vector<double>& nearest) {
    const PartitionData pd(atoms, settings);
    invR = pd.invR;
    sizeAdjustment = pd.a;
    nearest = pd.nearest;
}

double ssfHalfWidth() {
    return kSSFa;
}

double partitionWeight(const std::vector<QMAtom>& atoms, int A, const double r[3], const GridSettings& settings) {
    PartitionData pd(atoms, settings);
    std::vector<double> dist(atoms.size());
    return weightOf(atoms, pd, A, r, settings, dist);
}

MolecularGrid::MolecularGrid(const std::vector<QMAtom>& atoms, const BasisSet& basis, const GridSettings& s,
                             int threads, const PartitionWeightEvaluator* evaluator) {
    const int natoms = (int) atoms.size();
    const AngularGrid& ang = lebedevGrid(s.angularPoints);
    PartitionData pd(atoms, s);

    // 0. Partition weights of every atom's radial shells, in parallel (the O(atoms^2) part).
    std::vector<RadialGrid> radial(natoms);
    for (int A = 0; A < natoms; A++)
        radial[A] = s.radialScheme == RadialScheme::TreutlerAhlrichs
                        ? treutlerAhlrichsGrid(s.radialPoints, atoms[A].Z, s.treutlerAtomicXi)
                        : beckeGrid(s.radialPoints, atoms[A].Z);
    const int nang = (int) ang.w.size();
    std::vector<double> partition((size_t) natoms * s.radialPoints * nang);
    threads = std::max(1, resolveThreads(threads));
    if (evaluator != nullptr)
        evaluator->weights(atoms, s, radial, ang, partition);
    else {
        std::vector<std::vector<double>> scratch(threads, std::vector<double>(natoms));
        parallelFor(natoms * s.radialPoints, threads, [&](int shell, int t) {
            const int A = shell / s.radialPoints, i = shell % s.radialPoints;
            for (int j = 0; j < nang; j++) {
                double p[3];
                for (int k = 0; k < 3; k++)
                    p[k] = atoms[A].xyz[k] + radial[A].r[i] * ang.xyz[j][k];
                partition[(size_t) shell * nang + j] = weightOf(atoms, pd, A, p, s, scratch[t]);
            }
        });
    }

    // 1. Points with weights; each either goes to its atom's sphere or waits for a cube.
    std::vector<GridBatch> spheres(natoms);
    struct Loose { double p[3]; double w; int atom; };
    std::vector<Loose> loose;
    for (int A = 0; A < natoms; A++) {
        const RadialGrid& rad = radial[A];
        const int sphereShells = (int) std::floor(s.sphereShellFraction * s.radialPoints);
        const double cap = s.sphereNeighbourFraction * pd.nearest[A];
        GridBatch& sph = spheres[A];
        sph.sphere = true;
        sph.atom = A;
        sph.center = {atoms[A].xyz[0], atoms[A].xyz[1], atoms[A].xyz[2]};
        for (int i = 0; i < s.radialPoints; i++) {
            const bool inSphere = i < sphereShells && rad.r[i] <= cap;
            if (inSphere)
                sph.radius = std::max(sph.radius, rad.r[i]);
            for (size_t j = 0; j < ang.w.size(); j++) {
                double p[3];
                for (int k = 0; k < 3; k++)
                    p[k] = atoms[A].xyz[k] + rad.r[i] * ang.xyz[j][k];
                const double w = 4 * M_PI * rad.w[i] * ang.w[j] * partition[((size_t) A * s.radialPoints + i) * nang + j];
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
    }
    for (auto& sph : spheres)
        if (sph.size() > 0)
            batches_.push_back(std::move(sph));

    // 2. Remaining points into axis-aligned cubes of edge cubeEdge.
    if (!loose.empty()) {
        double lo[3] = {1e300, 1e300, 1e300};
        for (const Loose& l : loose)
            for (int k = 0; k < 3; k++)
                lo[k] = std::min(lo[k], l.p[k]);
        std::map<std::tuple<long, long, long>, size_t> cubeIndex;
        for (const Loose& l : loose) {
            const auto key = std::make_tuple((long) std::floor((l.p[0] - lo[0]) / s.cubeEdge),
                                             (long) std::floor((l.p[1] - lo[1]) / s.cubeEdge),
                                             (long) std::floor((l.p[2] - lo[2]) / s.cubeEdge));
            auto it = cubeIndex.find(key);
            if (it == cubeIndex.end()) {
                it = cubeIndex.emplace(key, batches_.size()).first;
                GridBatch cube;
                cube.center = {lo[0] + (std::get<0>(key) + 0.5) * s.cubeEdge, lo[1] + (std::get<1>(key) + 0.5) * s.cubeEdge,
                               lo[2] + (std::get<2>(key) + 0.5) * s.cubeEdge};
                cube.radius = 0.5 * std::sqrt(3.0) * s.cubeEdge;
                batches_.push_back(std::move(cube));
            }
            GridBatch& b = batches_[it->second];
            b.x.push_back(l.p[0]);
            b.y.push_back(l.p[1]);
            b.z.push_back(l.p[2]);
            b.w.push_back(l.w);
            b.parentAtom.push_back(l.atom);
        }
    }

    // 3. Significant shells per group (seed 001 eq. 3.1 with the group-to-centre distance).
    for (GridBatch& b : batches_) {
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
        numPoints_ += b.size();
    }
}

double MolecularGrid::averageFunctionsPerPoint() const {
    double sum = 0;
    for (const auto& b : batches_)
        sum += (double) b.size() * b.functions.size();
    return numPoints_ ? sum / numPoints_ : 0.0;
}

} // namespace QM
} // namespace OpenMMDFT
