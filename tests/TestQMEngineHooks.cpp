/* The solver through which the plugin routes the QM engine's density-fitting solve into its least-squares kernel:
 * given to SymmetricPositiveDefiniteSolver or to KohnShamLDA it is used (once per metric), and agrees with Eigen's
 * Cholesky, which is used without it. */
#include "openmmdft/qm/KohnShamLDA.h"
#include "openmmdft/qm/LinearSolve.h"
#include <gtest/gtest.h>

using namespace OpenMMDFT::QM;

TEST(NormalEquationSolver, GivenSolverIsUsedAndAgreesWithCholesky) {
    const int n = 30;
    Eigen::MatrixXd M = Eigen::MatrixXd::Random(n + 10, n);
    Eigen::MatrixXd A = M.transpose() * M + Eigen::MatrixXd::Identity(n, n);
    Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    Eigen::VectorXd plain = SymmetricPositiveDefiniteSolver(A).solve(b);
    EXPECT_LT((A * plain - b).norm(), 1e-10 * b.norm());
    int calls = 0;
    const NormalEquationSolver counting = [&](const Eigen::MatrixXd& a, Eigen::MatrixXd& rhs) {
        calls++;
        rhs = a.ldlt().solve(rhs);
    };
    SymmetricPositiveDefiniteSolver routed(A, counting);
    EXPECT_EQ(calls, 1);
    Eigen::VectorXd x = routed.solve(b);
    EXPECT_LT((x - plain).norm(), 1e-10 * plain.norm());
    EXPECT_EQ(calls, 1);  // the factorization (an inverse) is reused for every right-hand side
    SymmetricPositiveDefiniteSolver unrouted(A);
    EXPECT_EQ(calls, 1);
}

/* A metric large enough (600 x 600, 2.9 MB) that the refined products with its inverse go over threads: the same
 * bits on one thread and on three (each product's sums run in order), and Cholesky's solution to 1e-10. */
TEST(NormalEquationSolver, ThreadedProductsWithTheInverseAreExact) {
    const int n = 600;
    Eigen::MatrixXd M = Eigen::MatrixXd::Random(n + 10, n);
    Eigen::MatrixXd A = M.transpose() * M + Eigen::MatrixXd::Identity(n, n);
    Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    const NormalEquationSolver inverse = [](const Eigen::MatrixXd& a, Eigen::MatrixXd& rhs) { rhs = a.ldlt().solve(rhs); };
    const Eigen::VectorXd one = SymmetricPositiveDefiniteSolver(A, inverse, 1).solve(b);
    const Eigen::VectorXd three = SymmetricPositiveDefiniteSolver(A, inverse, 3).solve(b);
    EXPECT_EQ(0.0, (one - three).cwiseAbs().maxCoeff());
    const Eigen::VectorXd plain = SymmetricPositiveDefiniteSolver(A).solve(b);
    EXPECT_LT((one - plain).norm(), 1e-10 * plain.norm());
}

TEST(NormalEquationSolver, KohnShamLDASolvesTheMetricThroughIt) {
    const std::vector<QMAtom> water = {{8, {0, 0, 0.2217}}, {1, {0, 1.4309, -0.8867}}, {1, {0, -1.4309, -0.8867}}};
    QMSettings s;
    s.basisSet = "6-31G*";
    s.grid.radialPoints = 30;
    s.grid.angularPoints = 110;
    s.threads = 1;
    int calls = 0;
    KohnShamLDA routed(s, nullptr, [&](const Eigen::MatrixXd& a, Eigen::MatrixXd& rhs) {
        calls++;
        rhs = a.ldlt().solve(rhs);
    });
    KohnShamLDA plain(s);
    const double e = routed.compute(water, 0, {}).total;
    EXPECT_EQ(calls, 1);  // one metric per geometry
    EXPECT_NEAR(e, plain.compute(water, 0, {}).total, 1e-10);
}
