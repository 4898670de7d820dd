/*
 * The common (Compute API) kernels compiled for CUDA with NVRTC, as OpenMM's CUDA platform does at run
 * time, but here without a GPU: it checks that the device code that only OpenCL (PoCL) runs in CI is
 * also valid CUDA, in every precision. No driver is needed (NVRTC only produces PTX).
 *
 * The preamble (NvrtcCompile.h) defines the Compute API's macros the way OpenMM's CUDA platform does
 * (KERNEL = extern "C" __global__, LOCAL = __shared__, SYNC_THREADS = __syncthreads(), mm_ulong, ATOMIC_ADD, ...).
 * CudaKernelResources compiles the integral kernels and the XC program for sm_90 with ptxas's report and checks
 * properties that the kernels were written for: which of them keep no stack, which keep their occupancy.
 * Standalone programs: least squares, the bond graph, the QM region's device XC, the density-fitting integrals
 * and the host-force accumulation. Kernels that are snippets inserted into OpenMM's own templates (qmmmCoulomb, qmmmPair14,
 * qmmmPositionCheck) are not standalone programs and are not compiled here.
 */
#include "LeastSquaresProgram.h"
#include "NvrtcCompile.h"
#include "CommonMatrixProducts.h"
#include "CommonQMMMKernelSources.h"
#include "ThreeCentreProgram.h"
#include "XCProgram.h"
#include <gtest/gtest.h>
#include <map>
#include <utility>
#include <string>
#include <vector>

using namespace OpenMMDFT;
using namespace std;

namespace {

/** Compile source with the given #defines for compute_90 (PTX only); empty on success, otherwise NVRTC's log. */
string compile(const string& source, const map<string, string>& defines) {
    string log;
    return compileWithNvrtc(source, defines, {"--gpu-architecture=compute_90", "--std=c++17"}, log) ? "" : log;
}

} // namespace

class CudaKernelCompile : public ::testing::TestWithParam<string> {};

TEST_P(CudaKernelCompile, LeastSquares) {
    const string precision = GetParam();
    map<string, string> defines = leastSquaresProgramDefines(precision == "double", precision != "single");
    defines["SQRT"] = (precision == "double" ? "sqrt" : "sqrtf"); // set by OpenMM's CUDA platform
    string log = compile(leastSquaresProgramSource(), defines);
    EXPECT_TRUE(log.empty()) << log;
}

TEST(CudaKernelCompileDouble, MatrixProducts) {
    string log = compile(matrixProductsProgramSource(), leastSquaresProgramDefines(true, true));
    EXPECT_EQ("", log) << log;
}

TEST_P(CudaKernelCompile, BondGraph) {
    string log = compile(CommonQMMMKernelSources::qmmmBondGraph, {{"SQRT", GetParam() == "double" ? "sqrt" : "sqrtf"}});
    EXPECT_TRUE(log.empty()) << log;
}

/** The QM region's device XC (double in every precision) and the host-force accumulation. */
TEST_P(CudaKernelCompile, QMExchangeCorrelation) {
    string log = compile(xcProgramSource(), xcProgramDefines(0));
    EXPECT_TRUE(log.empty()) << log;
}

/** The density-fitting integrals and their gradient, every class of shell pairs up to the largest shells the platforms
 * send there (f, h), and the point-charge gradient (fitting l = 0). */
TEST_P(CudaKernelCompile, ThreeCentreIntegrals) {
    for (const auto& l : {std::make_tuple(2, 4, false), std::make_tuple(3, 5, false), std::make_tuple(3, 0, true)}) {
        string log = compile(threeCentreProgramSource(std::get<0>(l), std::get<1>(l), std::get<2>(l)),
                             threeCentreDefines(std::get<0>(l), std::get<1>(l), std::get<2>(l)));
        EXPECT_TRUE(log.empty()) << log;
    }
}

TEST_P(CudaKernelCompile, AddHostForces) {
    // OpenMM's CUDA platform defines mm_long; the force type follows the device's double support.
    string log = compile("typedef long long mm_long;\n" + string(CommonQMMMKernelSources::qmmmAddForces),
                         {{"HOST_FORCE_TYPE", GetParam() == "single" ? "float" : "double"}});
    EXPECT_TRUE(log.empty()) << log;
}

/** ptxas's resources (sm_90) of every kernel of a program, by kernel name (empty, with a failure, if NVRTC fails). */
static map<string, KernelResources> resourcesByName(const string& source, const map<string, string>& defines) {
    string log;
    map<string, KernelResources> resources;
    if (compileWithNvrtc(source, defines, {"--gpu-architecture=sm_90", "--std=c++17", "--ptxas-options=-v"}, log))
        for (const KernelResources& r : ptxasResources(log))
            resources[r.kernel] = r;
    else
        ADD_FAILURE() << log;
    return resources;
}

/** The resources of the three-centre program for the QM/MM benchmark's bases, DZVP (l <= 2) and def2-universal-jfit
 * (l <= 4); compiled once for the tests that read them. */
static const map<string, KernelResources>& benchmarkProgramResources() {
    static const map<string, KernelResources> byName = resourcesByName(threeCentreProgramSource(2, 4, false), threeCentreDefines(2, 4, false));
    return byName;
}

/** The resources of the XC program (its default defines, VWN5); compiled once for the tests that read them. */
static const map<string, KernelResources>& xcProgramResources() {
    static const map<string, KernelResources> byName = resourcesByName(xcProgramSource(), xcProgramDefines(0));
    return byName;
}

/**
 * The integral kernels compiled for one fitting l (the tensor's and the gradient's s-s and p-s classes) exist so that
 * their private arrays stay in registers on a GPU: ptxas (sm_90, an H100/H200, as OpenMM's CUDA platform builds for
 * one) must give them no stack frame, where the kernels for any l keep hundreds of bytes there. A change that puts
 * their arrays back in local memory fails here. Bases as the QM/MM benchmark's: DZVP (l <= 2), def2-universal-jfit
 * (l <= 4).
 */
TEST(CudaKernelResources, IntegralKernelsForOneFittingLKeepNoStack) {
    map<string, KernelResources> byName = benchmarkProgramResources();
    ASSERT_FALSE(byName.empty());
    for (const string& kernel : {"threeCentreTensor_0_0_0", "threeCentreTensor_0_0_1", "threeCentreTensor_0_0_2", "threeCentreTensor_1_0_0",
                                 "threeCentreGradient_0_0_0", "threeCentreGradient_0_0_1", "threeCentreGradient_0_0_2"}) {
        ASSERT_EQ(1u, byName.count(kernel)) << kernel << " not in ptxas's report";
        EXPECT_EQ(0, byName[kernel].stack) << kernel << ": " << byName[kernel].stack << " bytes of stack";
        EXPECT_LE(byName[kernel].registers, 128) << kernel;
    }
    // The measure itself: the kernel for any l keeps its arrays on the stack.
    EXPECT_GT(byName["threeCentreTensor_0_0"].stack, 0);
}

/** The gradient kernels of the general classes (p-p, d-s, d-p, d-d) for one fitting l keep a fraction of the stack of
 * their class's kernel for any l: their arrays are sized for that l and mostly in registers. */
TEST(CudaKernelResources, GeneralGradientKernelsForOneFittingLKeepLessStack) {
    map<string, KernelResources> byName = benchmarkProgramResources();
    ASSERT_FALSE(byName.empty());
    int compilations = 0;
    for (int la = 1; la <= 2; la++)
        for (int lb = (la == 1 ? 1 : 0); lb <= la; lb++)
            for (int lq = 0; lq <= 4; lq++) {
                if (!gradientUnrolled(la, lb, lq))
                    continue;
                const string kernel = gradientKernelName(la, lb, lq), general = classKernelName("threeCentreGradient", la, lb);
                ASSERT_EQ(1u, byName.count(kernel)) << kernel << " not in ptxas's report";
                ASSERT_EQ(1u, byName.count(general)) << general << " not in ptxas's report";
                EXPECT_LE(byName[kernel].registers, 128) << kernel;
                EXPECT_LT(4 * byName[kernel].stack, 3 * byName[general].stack)
                    << kernel << ": " << byName[kernel].stack << " bytes against " << byName[general].stack;
                compilations++;
            }
    EXPECT_GE(compilations, 6);  // p-p and d-s with fitting s, p, d; d-p with s, p; d-d with s
    // With fitting s alone the p-p kernel's values fit in its registers.
    EXPECT_LE(byName["threeCentreGradient_1_1_0"].stack, 64);
}

/**
 * The XC program's tiled kernels (the density on the points and the XC matrix, every SCF iteration) skip the parts of
 * their tiles that hold no work, and the predicates cost registers: each is bounded (__launch_bounds__) to the work
 * groups per multiprocessor it had without them, and must keep that without spilling. ptxas, sm_90: densityBlocks at
 * most 64 registers (four groups of 256), matrixTiles at most 80 (three), neither with stack or spills.
 */
TEST(CudaKernelResources, XCTiledKernelsKeepTheirOccupancy) {
    map<string, KernelResources> byName = xcProgramResources();
    ASSERT_FALSE(byName.empty());
    for (const auto& bound : {std::make_pair(string("densityBlocks"), 64), std::make_pair(string("matrixTiles"), 80)}) {
        ASSERT_EQ(1u, byName.count(bound.first)) << bound.first << " not in ptxas's report";
        const KernelResources& r = byName[bound.first];
        EXPECT_LE(r.registers, bound.second) << bound.first;
        EXPECT_GT(r.registers, 0) << bound.first;
        EXPECT_EQ(0, r.stack) << bound.first;
        EXPECT_EQ(0, r.spillStores + r.spillLoads) << bound.first;
    }
}

/**
 * The partition-weight derivatives' kernel sums its work group's gradient in local memory (fixed point, atomics): no
 * work item keeps a gradient over the atoms (3 KB of stack, in slow local memory on a GPU), its kept cells' products or
 * their bit set in private memory. ptxas, sm_90: no stack, no spills.
 */
TEST(CudaKernelResources, PartitionWeightGradientKeepsNoPrivateArrays) {
    map<string, KernelResources> byName = xcProgramResources();
    ASSERT_EQ(1u, byName.count("partitionWeightGradient"));
    const KernelResources& r = byName["partitionWeightGradient"];
    EXPECT_GT(r.registers, 0);
    EXPECT_EQ(0, r.stack);
    EXPECT_EQ(0, r.spillStores + r.spillLoads);
}

/** The check itself must be able to fail: a kernel with an error is reported. */
TEST(CudaKernelCompileCheck, ReportsErrors) {
    string log = compile("KERNEL void broken(GLOBAL float* x) { x[0] = undefinedName; }", {});
    EXPECT_NE(string::npos, log.find("undefinedName")) << log;
}

INSTANTIATE_TEST_SUITE_P(Precisions, CudaKernelCompile, ::testing::Values("single", "mixed", "double"),
                         [](const ::testing::TestParamInfo<string>& info) { return info.param; });
