/*
 * Least squares (issue 4) on the OpenCL platform (common Compute API kernels) in single, mixed and
 * double precision; the cases and their tolerances are in platforms/common/tests/GpuLeastSquaresTestCases.h.
 * Skipped (not failed) where no OpenCL device/precision is available.
 */
#include "PluginLoading.h"
#include "../platforms/common/tests/GpuLeastSquaresTestCases.h"
#include "OpenCLQMMMKernelFactory.h"
#include "openmm/Platform.h"
#include <memory>

using namespace OpenMM;
using namespace GpuLeastSquaresTest;
using namespace std;

class OpenCLLeastSquares : public ::testing::TestWithParam<string> {
protected:
    unique_ptr<LeastSquaresSolver> solver;
    void SetUp() override {
        QMMMTest::loadPlatformOnce("libOpenMMOpenCL.so", registerQMMMOpenCLKernelFactories);
        try {
            solver.reset(new LeastSquaresSolver(Platform::getPlatformByName("OpenCL"), {{"Precision", GetParam()}}));
        }
        catch (const OpenMMException& e) {
            GTEST_SKIP() << "OpenCL in " << GetParam() << " precision unavailable: " << e.what();
        }
    }
};

TEST_P(OpenCLLeastSquares, AllMethodsAgainstDgelsd) { testAgainstDgelsd(*solver, "OpenCL", GetParam(), smallCases()); }
TEST_P(OpenCLLeastSquares, Large5000x1000AgainstDgelsd) { testAgainstDgelsd(*solver, "OpenCL", GetParam(), largeCases()); }
TEST_P(OpenCLLeastSquares, GaussSeidel) { testGaussSeidel(*solver, GetParam()); }
TEST_P(OpenCLLeastSquares, ConstrainedAgainstDgglse) { testConstrained(*solver, GetParam()); }
TEST_P(OpenCLLeastSquares, GivenNormalEquations) { testGivenNormalEquations(*solver, GetParam()); }
TEST_P(OpenCLLeastSquares, InverseOfGivenMatrix) { testManyRightHandSides(*solver, GetParam()); }
TEST_P(OpenCLLeastSquares, ErrorsAndUnsupported) { testErrors(*solver); }

INSTANTIATE_TEST_SUITE_P(Precisions, OpenCLLeastSquares, ::testing::Values("single", "mixed", "double"),
                         [](const ::testing::TestParamInfo<string>& info) { return info.param; });
