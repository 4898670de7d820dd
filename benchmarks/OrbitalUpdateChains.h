/* BenchMatrixProducts's second table: the SCF's error from the occupied factor (SCFIterations.h's orbitalGradient,
 * its X and X^T S held once per SCF) and orbital updates (OrbitalRotation.h's block diagonalization with its
 * rotation, CoulombResponse.h's response step) with their products on the host, on the device one product at a time
 * (each product's matrices up and its result down: the route before held matrices), and on the device as chains of
 * held matrices (the orbitals up once, intermediates kept there), with the bytes that cross between host and device
 * per update and the largest difference from the host's orbitals. The Fock matrix is synthetic (orbital energies from
 * -20 to 5 Eh, a gap of 0.3 Eh, the next iteration's F 1e-3 Eh away), the Coulomb operator a scaling of the density
 * (linear, symmetric, positive: all the response needs, at no cost of its own on the host; on held densities two
 * products with a held identity, as a device's Coulomb build beside the held density would take them). */
#pragma once
#include "../qmengine/src/CoulombResponse.h"
#include "../qmengine/src/OrbitalRotation.h"
#include "../qmengine/src/SCFIterations.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmmdft/qm/MatrixProducts.h"
#include <cstdio>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>

namespace OrbitalUpdateBench {

using namespace OpenMMDFT::QM;

/** Another MatrixProducts's products, every chain there (no lower size limit), counting the bytes that cross. With
 *  oneAtATime, each held product is that MatrixProducts's product() of host matrices (up, multiply, down). */
class CountingProducts : public ForwardedMatrixProducts {
public:
    CountingProducts(const MatrixProducts& there, bool oneAtATime) : ForwardedMatrixProducts(there), oneAtATime(oneAtATime) {}
    mutable double bytes = 0;
    Eigen::MatrixXd product(const Eigen::MatrixXd& A, bool tA, const Eigen::MatrixXd& B, bool tB) const override {
        Eigen::MatrixXd C = there.product(A, tA, B, tB);
        bytes += 8.0 * (A.size() + B.size() + C.size());
        return C;
    }
    double minimumFlops() const override {
        return 0;
    }
    Held hold(const Eigen::MatrixXd& A) const override {
        if (oneAtATime)
            return MatrixProducts::hold(A);
        bytes += 8.0 * A.size();
        return there.hold(A);
    }
    Held block(const Held& A, int row, int col, int rows, int cols) const override {
        return oneAtATime ? MatrixProducts::block(A, row, col, rows, cols) : there.block(A, row, col, rows, cols);
    }
    Held multiply(const Held& A, bool tA, const Held& B, bool tB, const Held& added, bool subtract) const override {
        if (!oneAtATime)
            return there.multiply(A, tA, B, tB, added, subtract);
        Eigen::MatrixXd C = product(MatrixProducts::fetch(A), tA, MatrixProducts::fetch(B), tB);
        if (added)
            C = subtract ? Eigen::MatrixXd(MatrixProducts::fetch(added) - C) : Eigen::MatrixXd(MatrixProducts::fetch(added) + C);
        return MatrixProducts::hold(C);
    }
    Eigen::MatrixXd fetch(const Held& A) const override {
        if (oneAtATime)
            return MatrixProducts::fetch(A);
        Eigen::MatrixXd value = there.fetch(A);
        bytes += 8.0 * value.size();
        return value;
    }
    /** Where the products run, uncounted. */
    const MatrixProducts& uncounted() const {
        return there;
    }
private:
    const bool oneAtATime;
};

/** Orthonormal orbitals C (n x n) of a Fock matrix F with a gap at no, and the next iteration's F. */
struct OrbitalProblem {
    Eigen::MatrixXd C, F, next;
    Eigen::VectorXd eps;
    OrbitalProblem(int n, int no) {
        std::mt19937 rng(3);
        std::normal_distribution<double> normal;
        Eigen::MatrixXd a(n, n);
        for (int i = 0; i < a.size(); i++)
            a.data()[i] = normal(rng);
        C = Eigen::HouseholderQR<Eigen::MatrixXd>(a).householderQ();
        eps.resize(n);
        for (int i = 0; i < n; i++)
            eps[i] = i < no ? -20.0 + 19.7 * i / std::max(1, no - 1) : 0.0 + 5.0 * (i - no) / std::max(1, n - no - 1);
        F = C * eps.asDiagonal() * C.transpose();
        Eigen::MatrixXd change(n, n);
        for (int i = 0; i < change.size(); i++)
            change.data()[i] = normal(rng);
        next = F + 1e-3 / std::sqrt((double) n) * (change + change.transpose());
    }
};

/** Prints the table's rows for one size: median seconds of `repeat` runs by `median` (which runs the work once more,
 *  untimed, first). */
inline void printOrbitalUpdates(int n, int no, const MatrixProducts& device, int repeat,
                                double (*median)(const std::function<void()>&, int)) {
    const OrbitalProblem p(n, no);
    auto coulomb = [](const Eigen::MatrixXd& D) { return Eigen::MatrixXd(0.1 * D); };
    const Eigen::MatrixXd mismatch = 1e-3 * (p.next - p.F);
    const CountingProducts one(device, true), held(device, false);
    struct Route {
        const char* name;
        const CountingProducts* products;  // null: the host
        bool heldBuilds;                   // the response's Coulomb builds from its held densities
    };
    const Route routes[] = {{"host", nullptr, false},
                            {"device, one product at a time", &one, false},
                            {"device, held chains", &held, false},
                            {"device, held chains and Coulomb builds", &held, true}};
    // The same Coulomb model on held densities, as a device's build beside them: 0.1 scale (H + H^T) / 2 as two products
    // with a held multiple of the identity (held once per scale, not counted: a device build's tables are its own).
    std::map<double, Held> identities;
    auto heldModel = [&](const MatrixProducts& m, const Held& H, double scale) {
        Held& I = identities[scale];
        if (!I)
            I = held.uncounted().hold(0.05 * scale * Eigen::MatrixXd::Identity(H->rows(), H->rows()));
        return m.multiply(H, true, I, false, m.multiply(H, false, I, false));
    };
    Eigen::MatrixXd hostRotated, hostResponse, hostError;
    // A non-orthogonal basis change X and X^T S of the same sizes as an SCF's (their values do not matter here).
    const Eigen::MatrixXd X = p.C + 0.01 * p.F, XS = X.transpose() * (X * X.transpose());
    const Eigen::MatrixXd factor = std::sqrt(2.0) * p.C.leftCols(no);
    for (const Route& r : routes) {
        // Median seconds of an update and the MB that crossed per run of it (median() runs it repeat + 1 times).
        auto measured = [&](const std::function<void()>& update, double& megabytes) {
            if (r.products)
                r.products->bytes = 0;
            const double seconds = median(update, repeat);
            megabytes = r.products ? r.products->bytes / (repeat + 1) / 1e6 : 0.0;
            return seconds;
        };
        const MatrixProducts& m = r.products ? *r.products : hostMatrixProducts();
        const Held heldX = m.hold(X), heldXS = m.hold(XS);  // once per SCF: not counted per iteration
        Eigen::MatrixXd error;
        BlockDiagonalization out;
        CoulombResponseStep step;
        double errorMB, rotationMB, responseMB;
        const double errorSeconds = measured([&] { error = orbitalGradient(m, p.next, heldX, heldXS, factor); }, errorMB);
        const double rotation = measured([&] { blockDiagonalize(p.next, p.C, no, 1e-11, 0.2, out, r.products); }, rotationMB);
        const double response =
            measured([&] { step = coulombResponse(p.C, p.eps, no, mismatch, coulomb, 2, 0.05, r.products,
                                                  r.heldBuilds ? HeldCoulomb(heldModel) : HeldCoulomb()); }, responseMB);
        if (r.products == nullptr) {
            hostRotated = out.orbitals;
            hostResponse = step.orbitals;
            hostError = error;
        }
        std::printf("| %d | %d | %s | %.3f | %.1f | %.3f | %.1f | %.3f | %.1f | %.1e |\n", n, no, r.name, 1e3 * errorSeconds, errorMB,
                    1e3 * rotation, rotationMB, 1e3 * response, responseMB,
                    std::max({(out.orbitals - hostRotated).cwiseAbs().maxCoeff(), (step.orbitals - hostResponse).cwiseAbs().maxCoeff(),
                              (error - hostError).cwiseAbs().maxCoeff() / hostError.cwiseAbs().maxCoeff()}));
    }
}

} // namespace OrbitalUpdateBench
