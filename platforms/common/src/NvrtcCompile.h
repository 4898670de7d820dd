#ifndef OPENMMDFT_NVRTCCOMPILE_H_
#define OPENMMDFT_NVRTCCOMPILE_H_
// The common (Compute API) kernels compiled for CUDA with NVRTC, as OpenMM's CUDA platform compiles them at run time,
// without a GPU: for the compile tests and for ptxas's report of each kernel's resources. Header only, for programs
// that link NVRTC (CUDA::nvrtc); the plugin itself compiles through OpenMM.
#include <nvrtc.h>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace OpenMMDFT {

/** The Compute API's macros as OpenMM's CUDA platform defines them (KERNEL = extern "C" __global__, LOCAL = __shared__,
 * SYNC_THREADS = __syncthreads(), mm_ulong, ATOMIC_ADD, ...). */
inline const char* nvrtcComputePreamble() {
    return R"(
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
}

/** Compiles source after the preamble and the defines with NVRTC's options; true on success, with NVRTC's log (its
 * error first on failure) in log. */
inline bool compileWithNvrtc(const std::string& source, const std::map<std::string, std::string>& defines,
                             const std::vector<std::string>& options, std::string& log) {
    std::string text = nvrtcComputePreamble();
    for (const auto& d : defines)
        text += "#define " + d.first + " " + d.second + "\n";
    text += source;
    nvrtcProgram program;
    if (nvrtcCreateProgram(&program, text.c_str(), "openmmdft.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
        log = "nvrtcCreateProgram failed";
        return false;
    }
    std::vector<const char*> optionText;
    for (const std::string& option : options)
        optionText.push_back(option.c_str());
    const nvrtcResult result = nvrtcCompileProgram(program, (int) optionText.size(), optionText.data());
    size_t size;
    nvrtcGetProgramLogSize(program, &size);
    log.assign(size, '\0');
    nvrtcGetProgramLog(program, &log[0]);
    if (!log.empty() && log.back() == '\0')
        log.pop_back();
    nvrtcDestroyProgram(&program);
    if (result != NVRTC_SUCCESS) {
        log = std::string(nvrtcGetErrorString(result)) + "\n" + log;
        return false;
    }
    return true;
}

/** One kernel's resources as ptxas reports them. */
struct KernelResources {
    std::string kernel;
    int registers = 0, stack = 0, spillStores = 0, spillLoads = 0;
};

/** The kernels' resources from the log of a compilation for a real architecture with "--ptxas-options=-v". */
inline std::vector<KernelResources> ptxasResources(const std::string& log) {
    // "Compiling entry function 'name' for 'sm_90'", "Function properties for name", "N bytes stack frame, S bytes
    // spill stores, L bytes spill loads", "Used R registers, ...".
    std::vector<KernelResources> kernels;
    const std::regex entry("Compiling entry function '([^']+)'"), properties("Function properties for ([^ ]+)"),
        frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads"), used("Used ([0-9]+) registers");
    std::istringstream lines(log);
    std::string line;
    bool inEntry = false;
    while (std::getline(lines, line)) {
        std::smatch m;
        if (std::regex_search(line, m, entry)) {
            kernels.push_back(KernelResources());
            kernels.back().kernel = m[1];
            inEntry = true;
        }
        else if (std::regex_search(line, m, properties))
            inEntry = !kernels.empty() && m[1] == kernels.back().kernel;  // a device function's frame is not the kernel's
        else if (inEntry && std::regex_search(line, m, frame)) {
            kernels.back().stack = std::stoi(m[1]);
            kernels.back().spillStores = std::stoi(m[2]);
            kernels.back().spillLoads = std::stoi(m[3]);
        }
        else if (!kernels.empty() && std::regex_search(line, m, used))
            kernels.back().registers = std::stoi(m[1]);
    }
    return kernels;
}

} // namespace OpenMMDFT

#endif
