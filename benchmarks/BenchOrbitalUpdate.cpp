/* The SCF's orbital update for a Fock matrix near the last one: the eigensolver path (X^T F X, LAPACK dsyevd,
 * C = X V) against the rotation of the last orbitals (qmengine/src/OrbitalRotation.h: matrix products and an
 * occupied-sized eigensystem), on the same machine in one run, with the difference of the two densities.
 *   BenchOrbitalUpdate [--sizes 152/40,456/120] [--change 1e-3] [--repeat 5]
 * A size is basis functions / occupied orbitals: 152/40 and 456/120 are 8 and 24 waters in DZVP. The matrices are
 * synthetic with an SCF's structure: an overlap metric S = 1 + small symmetric, a Fock matrix with orbital energies
 * from -20 to 5 Eh and a gap of 0.3 Eh at the Fermi level, and the next Fock matrix that many hartree away (a random
 * symmetric change). The OpenBLAS thread count is OpenBLAS's own (OPENBLAS_NUM_THREADS). */
#include "../qmengine/src/OrbitalRotation.h"
#include "BasisOccupiedSizes.h"
#include "MedianTime.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace OpenMMDFT::QM;
using BenchTime::median;
using BenchTime::seconds;

namespace {

Eigen::MatrixXd randomSymmetric(int n, std::mt19937& rng) {
    std::normal_distribution<double> normal;
    Eigen::MatrixXd a(n, n);
    for (int i = 0; i < a.size(); i++)
        a.data()[i] = normal(rng);
    return 0.5 * (a + a.transpose());
}

struct Problem {
    Eigen::MatrixXd S, X, F, next;
    Problem(int n, int nocc, double change, unsigned seed) {
        std::mt19937 rng(seed);
        S = Eigen::MatrixXd::Identity(n, n) + (0.3 / std::sqrt((double) n)) * randomSymmetric(n, rng);
        Eigen::VectorXd s;
        Eigen::MatrixXd U;
        symmetricEigensystem(S, s, U);
        X = U * s.cwiseSqrt().cwiseInverse().asDiagonal() * U.transpose();  // S^-1/2
        // F = S W diag(e) W^T S for W = X Q (orthonormal in S): its orbitals are W, its energies e.
        Eigen::VectorXd e(n);
        for (int i = 0; i < n; i++)
            e[i] = i < nocc ? -20.0 + 19.7 * i / std::max(1, nocc - 1) : -0.0 + 5.0 * (i - nocc) / std::max(1, n - nocc - 1);
        const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(randomSymmetric(n, rng)).householderQ();
        const Eigen::MatrixXd SW = S * X * Q;
        F = SW * e.asDiagonal() * SW.transpose();
        next = F + (change / std::sqrt((double) n)) * randomSymmetric(n, rng);
    }
};

/** The eigensolver path of the SCF (SCFIterations.cpp): orbitals of F in the metric through X. */
Eigen::MatrixXd eigensolverOrbitals(const Eigen::MatrixXd& F, const Eigen::MatrixXd& X) {
    Eigen::VectorXd eps;
    Eigen::MatrixXd V;
    symmetricEigensystem(congruence(F, X), eps, V);
    return product(X, false, V, false);
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::pair<int, int>> sizes = {{152, 40}, {456, 120}};
    double change = 1e-3;
    int repeat = 5;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "%s needs a value\n", a.c_str());
            return 2;
        }
        const std::string value = argv[++i];
        if (a == "--sizes") {
            if (!parseBasisOccupiedSizes(value, sizes))
                return 2;
        }
        else if (a == "--change")
            change = std::stod(value);
        else if (a == "--repeat")
            repeat = std::max(1, std::stoi(value));
        else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    std::printf("BenchOrbitalUpdate: the next Fock matrix %.0e Eh from the last, median of %d runs\n", change, repeat);
    std::printf("| basis | occupied | eigensolver (ms) | rotation (ms) | eigensolver / rotation | Riccati steps | density difference |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const auto& size : sizes) {
        const int n = size.first, nocc = size.second;
        const Problem p(n, nocc, change, 7);
        const Eigen::MatrixXd C = eigensolverOrbitals(p.F, p.X);
        std::vector<double> eigensolver, rotation;
        Eigen::MatrixXd exact;
        BlockDiagonalization rotated;
        bool ok = true;
        for (int r = 0; r < repeat + 1; r++) {  // the first run of each warms caches and OpenBLAS's threads
            double t = seconds();
            exact = eigensolverOrbitals(p.next, p.X);
            if (r > 0)
                eigensolver.push_back(seconds() - t);
            t = seconds();
            ok = blockDiagonalize(p.next, C, nocc, 1e-10, 0.2, rotated) && ok;
            if (r > 0)
                rotation.push_back(seconds() - t);
        }
        if (!ok) {
            std::printf("| %d | %d | %.2f | refused | - | - | - |\n", n, nocc, 1e3 * median(eigensolver));
            continue;
        }
        const Eigen::MatrixXd Co = exact.leftCols(nocc), Cr = rotated.orbitals.leftCols(nocc);
        const double difference = (Co * Co.transpose() - Cr * Cr.transpose()).cwiseAbs().maxCoeff();
        std::printf("| %d | %d | %.2f | %.2f | %.2f | %d | %.1e |\n", n, nocc, 1e3 * median(eigensolver), 1e3 * median(rotation),
                    median(eigensolver) / median(rotation), rotated.steps, difference);
    }
    return 0;
}
