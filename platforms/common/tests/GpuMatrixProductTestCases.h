/* The SCF's products of basis-sized matrices on the device (the factory's MatrixProducts) against the host's BLAS:
 * every transposition of op(A) op(B) for odd shapes, a congruence B^T A B, the routing of small products to the host
 * (productOn), and an SCF (orbital rotations and Coulomb-response steps included) with every product on the device
 * against the same SCF with them on the host (and the next geometry's, with its recycled DIIS pairs); the metric's
 * inverse on the device; and the final Fock matrix's orbitals made beside the gradient. One body
 * for every GPU platform: the platform's test supplies the factory. Bounds: products 1e-13 k (entries in [-1, 1]: k terms, each rounded at 1e-16, in another order), SCF
 * energies 1e-10 Eh and gradients 1e-9 Eh/bohr (the same arithmetic, another summation order in the products). */
#pragma once
#include "GpuXCBackendTestCases.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmmdft/qm/MatrixProducts.h"
#include <openmm/OpenMMException.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>

namespace GpuXCTest {

/** The products of another MatrixProducts with no lower size limit: every product of the SCF runs there. */
class EveryProductThere : public ForwardedMatrixProducts {
public:
    explicit EveryProductThere(const MatrixProducts& there) : ForwardedMatrixProducts(there) {}
    double minimumFlops() const override {
        return 0;
    }
};

/** A device factory with its matrix products replaced: every one on the device (products given) or none (null). */
class ProductsFactory : public XCBackendFactory {
public:
    ProductsFactory(std::shared_ptr<const XCBackendFactory> device, const MatrixProducts* products)
        : device(std::move(device)), products(products) {}
    std::unique_ptr<XCBackend> create(const XCGeometry& geometry) const override {
        return device->create(geometry);
    }
    const PartitionWeightEvaluator* partitionWeights() const override {
        return device->partitionWeights();
    }
    const PointChargeEvaluator* pointCharges() const override {
        return device->pointCharges();
    }
    std::unique_ptr<DensityFittingContractions> densityFittingContractions() const override {
        return device->densityFittingContractions();
    }
    const MatrixProducts* matrixProducts() const override {
        return products;
    }
private:
    std::shared_ptr<const XCBackendFactory> device;
    const MatrixProducts* products;
};

inline void testDeviceMatrixProductsMatchHost(const std::shared_ptr<const XCBackendFactory>& factory) {
    const MatrixProducts* products = factory->matrixProducts();
    ASSERT_TRUE(products != nullptr);
    EXPECT_STREQ(products->name(), "device");
    EXPECT_GT(products->minimumFlops(), 0);
    std::srand(7);
    long long expectedRuns = products->productsRun();
    size_t largest = 0;
    // (m, k, n): odd sizes across tile edges, a single row or column, an inner dimension of one.
    const int shapes[][3] = {{37, 53, 91}, {130, 70, 65}, {64, 64, 64}, {1, 200, 3}, {150, 1, 7}};
    for (const auto& shape : shapes)
        for (int tA = 0; tA < 2; tA++)
            for (int tB = 0; tB < 2; tB++) {
                const int m = shape[0], k = shape[1], n = shape[2];
                const Eigen::MatrixXd A = tA ? Eigen::MatrixXd::Random(k, m) : Eigen::MatrixXd::Random(m, k);
                const Eigen::MatrixXd B = tB ? Eigen::MatrixXd::Random(n, k) : Eigen::MatrixXd::Random(k, n);
                const Eigen::MatrixXd device = products->product(A, tA, B, tB), host = product(A, tA, B, tB);
                ASSERT_EQ(device.rows(), m);
                ASSERT_EQ(device.cols(), n);
                EXPECT_LT((device - host).cwiseAbs().maxCoeff(), 1e-13 * k) << m << " x " << k << " x " << n << ", " << tA << tB;
                expectedRuns++;
                largest = std::max({largest, (size_t) A.size(), (size_t) B.size(), (size_t) m * n});
            }
    EXPECT_EQ(products->productsRun(), expectedRuns);
    // A congruence: B^T A B with A symmetric (a Fock matrix) and B rectangular (orbitals), two products on the device.
    Eigen::MatrixXd A = Eigen::MatrixXd::Random(90, 90);
    A = (A + A.transpose()).eval();
    const Eigen::MatrixXd B = Eigen::MatrixXd::Random(90, 41);
    EXPECT_LT((products->congruence(A, B) - congruence(A, B)).cwiseAbs().maxCoeff(), 1e-13 * 90 * 90);
    expectedRuns += 2;
    EXPECT_EQ(products->productsRun(), expectedRuns);
    // An empty inner dimension gives zeros, as the BLAS route does; nothing runs.
    const Eigen::MatrixXd zero = products->product(Eigen::MatrixXd(4, 0), false, Eigen::MatrixXd(0, 5), false);
    EXPECT_EQ(zero.rows(), 4);
    EXPECT_EQ(zero.cols(), 5);
    EXPECT_EQ(zero.cwiseAbs().maxCoeff(), 0.0);
    EXPECT_EQ(products->productsRun(), expectedRuns);
    // productOn leaves a product below the size limit to the host, and sends one above it there.
    const Eigen::MatrixXd small = Eigen::MatrixXd::Random(8, 8);
    EXPECT_LT((productOn(products, small, false, small, true) - product(small, false, small, true)).cwiseAbs().maxCoeff(), 1e-15);
    EXPECT_EQ(products->productsRun(), expectedRuns);
    const Eigen::MatrixXd big = Eigen::MatrixXd::Random(200, 200);
    productOn(products, big, false, big, false);
    EXPECT_EQ(products->productsRun(), expectedRuns + 1);
    // Memory: the inputs' and the intermediate's arrays at most the largest operand each, one array per result size.
    EXPECT_GT(products->storedBytes(), 0u);
    EXPECT_LE(products->storedBytes(), (3 + 16) * sizeof(double) * std::max(largest, (size_t) big.size()));
}

/**
 * Chains of products on matrices held on the device against the host's: blocks of a held matrix (views, offsets and
 * leading dimensions) in every transposition, sums and differences with an added matrix (itself a block), a product
 * of products, blocks fetched, empty inner dimensions; the held matrices' arrays reused once given back; a held matrix
 * of another MatrixProducts refused.
 */
inline void testDeviceHeldMatricesMatchHost(const std::shared_ptr<const XCBackendFactory>& factory) {
    const MatrixProducts* products = factory->matrixProducts();
    ASSERT_TRUE(products != nullptr);
    const MatrixProducts& host = hostMatrixProducts();
    EXPECT_STREQ(host.name(), "host");
    std::srand(11);
    const Eigen::MatrixXd C = Eigen::MatrixXd::Random(97, 83), T = Eigen::MatrixXd::Random(53, 30);
    const Held c = products->hold(C), t = products->hold(T);
    const Held hc = host.hold(C), ht = host.hold(T);
    EXPECT_EQ(products->fetch(c), C);
    // Blocks: C_o = C[:, 0:30], C_v = C[:, 30:83], and an inner block fetched (made whole on the device first).
    const Held occupied = products->block(c, 0, 0, 97, 30), virtuals = products->block(c, 0, 30, 97, 53);
    const Held hostOccupied = host.block(hc, 0, 0, 97, 30), hostVirtuals = host.block(hc, 0, 30, 97, 53);
    EXPECT_EQ(products->fetch(products->block(c, 5, 7, 40, 20)), C.block(5, 7, 40, 20));
    auto near = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, double bound) {
        return a.rows() == b.rows() && a.cols() == b.cols() && (a - b).cwiseAbs().maxCoeff() <= bound;
    };
    // C_o + C_v t, C_v - C_o t^T: every transposition of a block operand.
    EXPECT_TRUE(near(products->fetch(products->multiply(virtuals, false, t, false, occupied)),
                     host.fetch(host.multiply(hostVirtuals, false, ht, false, hostOccupied)), 1e-13 * 53));
    EXPECT_TRUE(near(products->fetch(products->multiply(occupied, false, t, true, virtuals, true)),
                     host.fetch(host.multiply(hostOccupied, false, ht, true, hostVirtuals, true)), 1e-13 * 30));
    EXPECT_TRUE(near(products->fetch(products->multiply(virtuals, true, occupied, false)),
                     host.fetch(host.multiply(hostVirtuals, true, hostOccupied, false)), 1e-13 * 97));
    EXPECT_TRUE(near(products->fetch(products->multiply(t, true, virtuals, true)), host.fetch(host.multiply(ht, true, hostVirtuals, true)),
                     1e-13 * 53));
    // A product of products with a block of one as the added matrix: G_vv t + G_vo for G = C^T C.
    const Held G = products->multiply(c, true, c, false), hostG = host.multiply(hc, true, hc, false);
    const Held vv = products->block(G, 30, 30, 53, 53), vo = products->block(G, 30, 0, 53, 30);
    const Eigen::MatrixXd expected = host.fetch(host.multiply(host.block(hostG, 30, 30, 53, 53), false, ht, false,
                                                              host.block(hostG, 30, 0, 53, 30)));
    EXPECT_TRUE(near(products->fetch(products->multiply(vv, false, t, false, vo)), expected, 1e-12 * 97 * 53));
    // An empty inner dimension: the added matrix alone, or zeros.
    const Held empty = products->hold(Eigen::MatrixXd(4, 0)), emptyRight = products->hold(Eigen::MatrixXd(0, 5));
    EXPECT_EQ(products->fetch(products->multiply(empty, false, emptyRight, false)), Eigen::MatrixXd::Zero(4, 5));
    const Eigen::MatrixXd A = Eigen::MatrixXd::Random(4, 5);
    EXPECT_EQ(products->fetch(products->multiply(empty, false, emptyRight, false, products->hold(A), true)), A);
    // Arrays given back are taken again: a second chain of the same shapes adds no memory.
    const size_t before = products->storedBytes();
    products->fetch(products->multiply(virtuals, false, t, false, occupied));
    EXPECT_EQ(products->storedBytes(), before);
    EXPECT_THROW(products->multiply(hc, false, t, false), OpenMM::OpenMMException);
    EXPECT_THROW(host.fetch(c), OpenMM::OpenMMException);
    EXPECT_THROW(products->block(c, 90, 0, 10, 5), OpenMM::OpenMMException);
}

/** An SCF of methanol with every product of basis-sized matrices on the device against the same with none there. */
inline void testDeviceSCFProductsMatchHost(const std::shared_ptr<const XCBackendFactory>& factory) {
    ASSERT_TRUE(factory->matrixProducts() != nullptr);
    const EveryProductThere everyProduct(*factory->matrixProducts());
    QMSettings s;
    s.basisSet = "6-31G*";
    s.grid.radialPoints = 30;
    s.grid.angularPoints = 110;
    s.convergence = 1e-9;
    const std::vector<QMAtom> atoms = methanol();
    const std::vector<PointCharge> mm = {{{5.0, 0.5, 9.0}, -0.8}, {{-4.0, 3.0, 1.0}, 0.4}};
    KohnShamLDA onHost(s, std::make_shared<ProductsFactory>(factory, nullptr)),
        onDevice(s, std::make_shared<ProductsFactory>(factory, &everyProduct));
    const long long before = everyProduct.productsRun();
    const QMResult h = onHost.compute(atoms, 0, mm), d = onDevice.compute(atoms, 0, mm);
    EXPECT_EQ(h.scfProducts, "host");
    EXPECT_EQ(h.scfProductBytes, 0u);
    EXPECT_EQ(d.scfProducts, "device");
    EXPECT_GT(d.scfProductBytes, 0u);
    // Every kind of product ran: the error, the rotations, the response, the diagonalizations' basis changes.
    EXPECT_GT(d.orbitalRotations, 0);
    EXPECT_GT(d.coulombResponseBuilds, 0);
    EXPECT_GT(everyProduct.productsRun() - before, 10 * d.iterations);
    EXPECT_EQ(d.iterations, h.iterations);
    EXPECT_NEAR(d.total, h.total, 1e-10);
    const QMGradient gh = onHost.gradient(h), gd = onDevice.gradient(d);
    EXPECT_LT((gd.atoms - gh.atoms).cwiseAbs().maxCoeff(), 1e-9);
    EXPECT_LT((gd.mm - gh.mm).cwiseAbs().maxCoeff(), 1e-9);
    ASSERT_EQ(d.orbitalEnergies.size(), h.orbitalEnergies.size());
    for (size_t i = 0; i < h.orbitalEnergies.size(); i++)
        EXPECT_NEAR(d.orbitalEnergies[i], h.orbitalEnergies[i], 1e-9);
    // The next MD step: atoms moved a little, the SCF started from the last density with its DIIS pairs recycled.
    std::vector<QMAtom> moved = atoms;
    for (size_t i = 0; i < moved.size(); i++)
        moved[i].xyz[i % 3] += 0.01;
    const DensityGuess guessHost = h.guess(), guessDevice = d.guess();
    ASSERT_FALSE(guessDevice.fockChanges.empty());
    const QMResult h2 = onHost.compute(moved, 0, mm, &guessHost), d2 = onDevice.compute(moved, 0, mm, &guessDevice);
    EXPECT_GT(d2.recycledPairs, 0);
    EXPECT_EQ(d2.recycledPairs, h2.recycledPairs);
    EXPECT_EQ(d2.iterations, h2.iterations);
    EXPECT_NEAR(d2.total, h2.total, 1e-10);
}

/**
 * The density fitting's metric inverted on the device where the platform has its own inverse (CUDA: cuSOLVER, loaded at
 * run time; the tests' factory uses it whatever the temporary switch says): A A^-1 within 1e-10 of the identity for a
 * metric-sized positive definite matrix of condition about 1e4, the result exactly symmetric, an indefinite matrix
 * refused with the output untouched. Where the platform has none (OpenCL), nothing is made.
 */
inline void testDeviceMetricInverse(const std::shared_ptr<const XCBackendFactory>& factory, bool platformHasOne) {
    const int n = 600;
    std::srand(5);
    const Eigen::MatrixXd M = Eigen::MatrixXd::Random(n, n);
    Eigen::MatrixXd A = M * M.transpose() / n + 1e-3 * Eigen::MatrixXd::Identity(n, n);
    A = (0.5 * (A + A.transpose())).eval();
    Eigen::MatrixXd inverse = Eigen::MatrixXd::Constant(n, n, 7.0);
    EXPECT_EQ(factory->invertsSymmetricPositiveDefinite(), platformHasOne);
    const bool made = factory->invertSymmetricPositiveDefinite(A, inverse);
    if (!platformHasOne) {
        EXPECT_FALSE(made);
        EXPECT_EQ(inverse(0, 0), 7.0);
        return;
    }
    if (!made)
        GTEST_SKIP() << "the platform's inverse could not run here (cuSOLVER, libcusolver.so.12, not found?)";
    EXPECT_LT((A * inverse - Eigen::MatrixXd::Identity(n, n)).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_EQ((inverse - inverse.transpose()).cwiseAbs().maxCoeff(), 0.0);
    Eigen::MatrixXd indefinite = A;
    indefinite(n / 2, n / 2) = -1.0;
    Eigen::MatrixXd untouched = Eigen::MatrixXd::Constant(n, n, 7.0);
    EXPECT_FALSE(factory->invertSymmetricPositiveDefinite(indefinite, untouched));
    EXPECT_EQ(untouched(0, 0), 7.0);
}

/**
 * The final Fock matrix's orbitals beside the gradient (KohnShamLDA::compute with deferOrbitals on a device): absent
 * from the result until completeOrbitals(), the gradient without them the same as with them, and then the same
 * orbitals, energies and next-step orbitals as an SCF that made them in order. A host factory makes them in order.
 */
inline void testDeviceFinalOrbitalsBesideTheGradient(const std::shared_ptr<const XCBackendFactory>& factory) {
    QMSettings s;
    s.basisSet = "6-31G*";
    s.grid.radialPoints = 30;
    s.grid.angularPoints = 110;
    const std::vector<QMAtom> atoms = methanol();
    const std::vector<PointCharge> mm = {{{5.0, 0.5, 9.0}, -0.8}};
    KohnShamLDA inOrder(s, factory), beside(s, factory), host(s);
    const QMResult a = inOrder.compute(atoms, 0, mm);
    QMResult b = beside.compute(atoms, 0, mm, nullptr, nullptr, true);
    EXPECT_EQ(b.orbitals.size(), 0) << "made beside the gradient, not yet there";
    EXPECT_TRUE(b.orbitalEnergies.empty());
    EXPECT_FALSE(b.lowdinOrbitals);
    const QMGradient ga = inOrder.gradient(a), gb = beside.gradient(b);
    EXPECT_LT((gb.atoms - ga.atoms).cwiseAbs().maxCoeff(), 1e-12);
    beside.completeOrbitals(b);
    EXPECT_EQ(b.timings.count("scf.finalOrbitalsWait"), 1u);
    ASSERT_EQ(b.orbitals.rows(), a.orbitals.rows());
    ASSERT_EQ(b.orbitalEnergies.size(), a.orbitalEnergies.size());
    for (size_t i = 0; i < a.orbitalEnergies.size(); i++)
        EXPECT_NEAR(b.orbitalEnergies[i], a.orbitalEnergies[i], 1e-12);
    EXPECT_NEAR(b.homoLumoGap, a.homoLumoGap, 1e-12);
    ASSERT_TRUE(b.lowdinOrbitals && a.lowdinOrbitals);
    // Eigenvectors up to sign: the occupied densities agree.
    const Eigen::MatrixXd Ca = a.orbitals.leftCols(a.occupiedOrbitals), Cb = b.orbitals.leftCols(b.occupiedOrbitals);
    EXPECT_LT((Ca * Ca.transpose() - Cb * Cb.transpose()).cwiseAbs().maxCoeff(), 1e-10);
    beside.completeOrbitals(b);  // nothing left to wait for: unchanged
    EXPECT_EQ(b.orbitalEnergies.size(), a.orbitalEnergies.size());
    // Without a device the orbitals are made in order, deferOrbitals or not.
    const QMResult h = host.compute(atoms, 0, mm, nullptr, nullptr, true);
    EXPECT_EQ(h.orbitalEnergies.size(), a.orbitalEnergies.size());
    EXPECT_EQ(h.timings.count("scf.finalOrbitals"), 1u);
}

} // namespace GpuXCTest
