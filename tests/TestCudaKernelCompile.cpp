/*
 * The common (Compute API) kernels compiled for CUDA with NVRTC, as OpenMM's CUDA platform does at run
 * time, but here without a GPU: it checks that the device code that only OpenCL (PoCL) runs in CI is
 * also valid CUDA, in every precision. No driver is needed (NVRTC only produces PTX).
 *
 * The preamble below defines the Compute API's macros the way OpenMM's CUDA platform does
 * (KERNEL = extern "C" __global__, LOCAL = __shared__, SYNC_THREADS = __syncthreads(), mm_ulong, ATOMIC_ADD, ...).
 * Standalone programs: least squares, the bond graph, the QM region's device XC, the density-fitting integrals
 * and the host-force accumulation. Kernels that are snippets inserted into OpenMM's own templates (qmmmCoulomb, qmmmPair14,
 * qmmmPositionCheck) are not standalone programs and are not compiled here.
 */
#include "LeastSquaresProgram.h"
#include "CommonQMMMKernelSources.h"
#include "ThreeCentreProgram.h"
#include "XCProgram.h"
#include <gtest/gtest.h>
#include <nvrtc.h>
#include <map>
#include <utility>
#include <string>
#include <vector>

using namespace OpenMMDFT;
using namespace std;

namespace {

const char* PREAMBLE = R"(
#define KERNEL extern "C" __global__
#define DEVICE __device__
#define LOCAL __shared__
#define LOCAL_ARG
#define GLOBAL
#define RESTRICT __restrict__
#define LOCAL_ID threadIdx.x
#define LOCAL_SIZE blockDim.x
#define GLOBAL_ID (blockIdx.x*blockDim.x+threadIdx.x)
#define GLOBAL_SIZE (blockDim.x*gridDim.x)
#define GROUP_ID blockIdx.x
#define NUM_GROUPS gridDim.x
#define SYNC_THREADS __syncthreads();
#define SYNC_WARPS __syncwarp();
typedef long long mm_long;
typedef unsigned long long mm_ulong;
#define ATOMIC_ADD(dest, value) atomicAdd(dest, value)
)";

/** Compile source with the given #defines; empty on success, otherwise NVRTC's log. */
string compile(const string& source, const map<string, string>& defines) {
    string text = PREAMBLE;
    for (const auto& d : defines)
        text += "#define " + d.first + " " + d.second + "\n";
    text += source;
    nvrtcProgram program;
    if (nvrtcCreateProgram(&program, text.c_str(), "openmmdft.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
        return "nvrtcCreateProgram failed";
    vector<const char*> options{"--gpu-architecture=compute_90", "--std=c++17"};
    nvrtcResult result = nvrtcCompileProgram(program, (int) options.size(), options.data());
    string log;
    if (result != NVRTC_SUCCESS) {
        size_t size;
        nvrtcGetProgramLogSize(program, &size);
        log.resize(size);
        nvrtcGetProgramLog(program, &log[0]);
        if (!log.empty() && log.back() == '\0')
            log.pop_back();
        log = string(nvrtcGetErrorString(result)) + "\n" + log;
    }
    nvrtcDestroyProgram(&program);
    return log;
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
    string log = compile(matrixProductProgramSource(), leastSquaresProgramDefines(true, true));
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
        // Both gradient variants: with the pair table of derivative densities and (in one precision: the program is
        // double throughout) with them formed per work item.
        for (const char* table : {"1", "0"}) {
            if (table[0] == '0' && GetParam() != "double")
                continue;
            std::map<string, string> defines = threeCentreDefines(std::get<0>(l), std::get<1>(l), std::get<2>(l));
            defines["PAIR_TABLE"] = table;
            string log = compile(threeCentreProgramSource(std::get<0>(l), std::get<1>(l), std::get<2>(l)), defines);
            EXPECT_TRUE(log.empty()) << "PAIR_TABLE " << table << ": " << log;
        }
    }
}

TEST_P(CudaKernelCompile, AddHostForces) {
    // OpenMM's CUDA platform defines mm_long; the force type follows the device's double support.
    string log = compile("typedef long long mm_long;\n" + string(CommonQMMMKernelSources::qmmmAddForces),
                         {{"HOST_FORCE_TYPE", GetParam() == "single" ? "float" : "double"}});
    EXPECT_TRUE(log.empty()) << log;
}

/** The check itself must be able to fail: a kernel with an error is reported. */
TEST(CudaKernelCompileCheck, ReportsErrors) {
    string log = compile("KERNEL void broken(GLOBAL float* x) { x[0] = undefinedName; }", {});
    EXPECT_NE(string::npos, log.find("undefinedName")) << log;
}

INSTANTIATE_TEST_SUITE_P(Precisions, CudaKernelCompile, ::testing::Values("single", "mixed", "double"),
                         [](const ::testing::TestParamInfo<string>& info) { return info.param; });
