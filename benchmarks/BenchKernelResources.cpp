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
#include "NvrtcCompile.h"
#include "ThreeCentreProgram.h"
#include "XCProgram.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace OpenMMDFT;
using namespace std;

namespace {

/** ptxas's report for every kernel of source compiled with defines for arch; exits with NVRTC's log on an error. */
vector<KernelResources> compile(const string& source, const map<string, string>& defines, const string& arch) {
    string log;
    if (!compileWithNvrtc(source, defines, {"--gpu-architecture=" + arch, "--std=c++17", "--ptxas-options=-v"}, log)) {
        fprintf(stderr, "%s\n", log.c_str());
        exit(1);
    }
    return ptxasResources(log);
}

void print(const string& title, const vector<KernelResources>& kernels) {
    printf("%s\n| kernel | registers | stack frame (bytes) | spill stores (bytes) | spill loads (bytes) |\n|---|---|---|---|---|\n",
           title.c_str());
    int stack = 0;
    for (const KernelResources& r : kernels) {
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
