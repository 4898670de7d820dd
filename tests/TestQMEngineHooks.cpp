/* The hook through which the plugin routes the QM engine's density-fitting solve into its
 * least-squares kernel: installed, it is used; removed, Eigen's Cholesky is; both agree. */
#include "openmmdft/qm/LinearSolve.h"
#include <gtest/gtest.h>

using namespace OpenMMDFT::QM;

TEST(NormalEquationSolverHook, InstalledSolverIsUsedAndAgreesWithCholesky) {
    const int n = 30;
    Eigen::MatrixXd M = Eigen::MatrixXd::Random(n + 10, n);
    Eigen::MatrixXd A = M.transpose() * M + Eigen::MatrixXd::Identity(n, n);
    Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    Eigen::VectorXd plain = SymmetricPositiveDefiniteSolver(A).solve(b);
    EXPECT_LT((A * plain - b).norm(), 1e-10 * b.norm());
    int calls = 0;
    {
        ScopedNormalEquationSolver hook([&](const Eigen::MatrixXd& a, Eigen::MatrixXd& rhs) {
            calls++;
            rhs = a.ldlt().solve(rhs);
        });
        EXPECT_TRUE((bool) ScopedNormalEquationSolver::current());
        SymmetricPositiveDefiniteSolver routed(A);
        EXPECT_EQ(calls, 1);
        Eigen::VectorXd x = routed.solve(b);
        EXPECT_LT((x - plain).norm(), 1e-10 * plain.norm());
        EXPECT_EQ(calls, 1);  // the factorization (an inverse) is reused for every right-hand side
    }
    EXPECT_FALSE((bool) ScopedNormalEquationSolver::current());
    SymmetricPositiveDefiniteSolver unrouted(A);
    EXPECT_EQ(calls, 1);
}
