#ifndef OPENMMDFT_BENCHMARKS_WATERCLUSTER_H_
#define OPENMMDFT_BENCHMARKS_WATERCLUSTER_H_
/* The benchmarks' QM region: (H2O)n on a cubic lattice of 2.9 Å spacing, each water randomly oriented, and the random
 * rotations of the MM waters around it. Shared, so that every benchmark times the same cluster for the same n and
 * random generator state. */
#include "openmm/Vec3.h"
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace BenchWater {

/** The water of the engine's reference tests (qmengine/tests/generate_pyscf_references.py), O, H, H in nm. */
const double QM_WATER_GEOMETRY[3][3] = {{0.0, 0.0, 0.01173}, {0.0, 0.07572, -0.04692}, {0.0, -0.07572, -0.04692}};

/** A uniformly random rotation, from a normalised Gaussian quaternion. */
inline void randomRotation(std::mt19937& rng, double R[3][3]) {
    std::normal_distribution<double> normal;
    double q[4], norm = 0;
    for (double& x : q) {
        x = normal(rng);
        norm += x * x;
    }
    norm = std::sqrt(norm);
    const double a = q[0] / norm, b = q[1] / norm, c = q[2] / norm, d = q[3] / norm;
    const double m[3][3] = {{a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)},
                            {2 * (b * c + a * d), a * a - b * b + c * c - d * d, 2 * (c * d - a * b)},
                            {2 * (b * d - a * c), 2 * (c * d + a * b), a * a - b * b - c * c + d * d}};
    std::memcpy(R, m, sizeof(m));
}

inline OpenMM::Vec3 rotated(const double R[3][3], const double x[3]) {
    return OpenMM::Vec3(R[0][0] * x[0] + R[0][1] * x[1] + R[0][2] * x[2], R[1][0] * x[0] + R[1][1] * x[1] + R[1][2] * x[2],
                        R[2][0] * x[0] + R[2][1] * x[1] + R[2][2] * x[2]);
}

/** (H2O)n's positions (nm), O, H, H per water, drawing its rotations from rng (BenchQMRegion seeds it with 7). */
inline std::vector<OpenMM::Vec3> waterCluster(int n, std::mt19937& rng) {
    std::vector<OpenMM::Vec3> positions;
    const int side = (int) std::ceil(std::cbrt((double) n) - 1e-9);
    for (int k = 0; k < n; k++) {
        const OpenMM::Vec3 centre = OpenMM::Vec3(k % side, (k / side) % side, k / (side * side)) * 0.29;
        double R[3][3];
        randomRotation(rng, R);
        for (int atom = 0; atom < 3; atom++)
            positions.push_back(centre + rotated(R, QM_WATER_GEOMETRY[atom]));
    }
    return positions;
}

} // namespace BenchWater

#endif
