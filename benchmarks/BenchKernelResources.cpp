/*
 * The CUDA resources of the common kernels, without a GPU: each program is compiled by NVRTC for a real architecture
 * (sm_90 by default, an H100/H200), as OpenMM's CUDA platform compiles it at run time, with ptxas's report (-v), and
 * every kernel's registers, stack frame and spill bytes are printed. A kernel's private arrays that are indexed at run
 * time live in its stack frame, which is in the GPU's slow local memory: the Nsight profiles of the integral kernels
 * showed tens of GB of local-memory traffic per MD step. This is the measure of that which a machine without a GPU can
 * take; what the GPU then does with it only a GPU shows (tools/run-gpu-checks.sh).
 *
 * Usage: BenchKernelResources [--arch sm_90] [--basis-l 2] [--aux-l 4] [--program three-centre|point-charges|xc|all]
 *                             [--dump-source FILE]  (the three-centre program's source with its defines, as compiled)
 */
#include "ThreeCentreProgram.h"
#include "XCProgram.h"
#include <nvrtc.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace OpenMMDFT;
using namespace std;

namespace {

// The Compute API's macros as OpenMM's CUDA platform defines them (the same preamble as tests/TestCudaKernelCompile).
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

struct Resources {
    string kernel;
    int registers = 0, stack = 0, spillStores = 0, spillLoads = 0;
};

/** ptxas's report for every kernel of source compiled with defines for arch; exits with NVRTC's log on an error. */
vector<Resources> compile(const string& source, const map<string, string>& defines, const string& arch) {
    string text = PREAMBLE;
    for (const auto& d : defines)
        text += "#define " + d.first + " " + d.second + "\n";
    text += source;
    nvrtcProgram program;
    if (nvrtcCreateProgram(&program, text.c_str(), "openmmdft.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
        fprintf(stderr, "nvrtcCreateProgram failed\n");
        exit(1);
    }
    const string archOption = "--gpu-architecture=" + arch;
    vector<const char*> options{archOption.c_str(), "--std=c++17", "--ptxas-options=-v"};
    const nvrtcResult result = nvrtcCompileProgram(program, (int) options.size(), options.data());
    size_t size;
    nvrtcGetProgramLogSize(program, &size);
    string log(size, '\0');
    nvrtcGetProgramLog(program, &log[0]);
    nvrtcDestroyProgram(&program);
    if (result != NVRTC_SUCCESS) {
        fprintf(stderr, "%s\n%s\n", nvrtcGetErrorString(result), log.c_str());
        exit(1);
    }
    // ptxas: "Compiling entry function 'name' for 'sm_90'", "Function properties for name", "N bytes stack frame, S
    // bytes spill stores, L bytes spill loads", "Used R registers, ...".
    vector<Resources> kernels;
    const regex entry("Compiling entry function '([^']+)'"), frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads"),
        used("Used ([0-9]+) registers");
    istringstream lines(log);
    string line;
    bool inEntry = false;
    while (getline(lines, line)) {
        smatch m;
        if (regex_search(line, m, entry)) {
            kernels.push_back(Resources());
            kernels.back().kernel = m[1];
            inEntry = true;
        }
        else if (regex_search(line, m, regex("Function properties for ([^ ]+)"))) {
            inEntry = !kernels.empty() && m[1] == kernels.back().kernel;  // a device function's frame is not the kernel's
        }
        else if (inEntry && regex_search(line, m, frame)) {
            kernels.back().stack = stoi(m[1]);
            kernels.back().spillStores = stoi(m[2]);
            kernels.back().spillLoads = stoi(m[3]);
        }
        else if (!kernels.empty() && regex_search(line, m, used)) {
            kernels.back().registers = stoi(m[1]);
        }
    }
    return kernels;
}

void print(const string& title, const vector<Resources>& kernels) {
    printf("%s\n| kernel | registers | stack frame (bytes) | spill stores (bytes) | spill loads (bytes) |\n|---|---|---|---|---|\n",
           title.c_str());
    int stack = 0;
    for (const Resources& r : kernels) {
        printf("| %s | %d | %d | %d | %d |\n", r.kernel.c_str(), r.registers, r.stack, r.spillStores, r.spillLoads);
        stack += r.stack;
    }
    printf("%zu kernels, stack frames %d bytes in all\n\n", kernels.size(), stack);
}

} // namespace

int main(int argc, char** argv) {
    string arch = "sm_90", which = "all", dump;
    int basisL = 2, auxL = 4;
    for (int i = 1; i + 1 < argc; i += 2) {
        const string option = argv[i];
        if (option == "--arch")
            arch = argv[i + 1];
        else if (option == "--basis-l")
            basisL = atoi(argv[i + 1]);
        else if (option == "--aux-l")
            auxL = atoi(argv[i + 1]);
        else if (option == "--program")
            which = argv[i + 1];
        else if (option == "--dump-source")
            dump = argv[i + 1];
        else {
            fprintf(stderr, "unknown option %s\n", option.c_str());
            return 1;
        }
    }
    if (!dump.empty()) {
        FILE* out = fopen(dump.c_str(), "w");
        if (!out) {
            fprintf(stderr, "cannot write %s\n", dump.c_str());
            return 1;
        }
        for (const auto& d : threeCentreDefines(basisL, auxL, false))
            fprintf(out, "#define %s %s\n", d.first.c_str(), d.second.c_str());
        fputs(threeCentreProgramSource(basisL, auxL, false).c_str(), out);
        fclose(out);
    }
    if (which == "all" || which == "three-centre")
        print("three-centre program (density fitting), orbital l <= " + to_string(basisL) + ", fitting l <= " + to_string(auxL) + ", " + arch,
              compile(threeCentreProgramSource(basisL, auxL, false), threeCentreDefines(basisL, auxL, false), arch));
    if (which == "all" || which == "point-charges")
        print("three-centre program (point charges), orbital l <= " + to_string(basisL) + ", " + arch,
              compile(threeCentreProgramSource(basisL, 0, true), threeCentreDefines(basisL, 0, true), arch));
    if (which == "all" || which == "xc")
        print("XC program, " + arch,
              compile(xcProgramSource(), xcProgramDefines(0), arch));
    return 0;
}
