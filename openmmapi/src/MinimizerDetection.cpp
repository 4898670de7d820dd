#include "openmmdft/internal/MinimizerDetection.h"
#include <dlfcn.h>
#include <execinfo.h>
#include <cstring>

using namespace OpenMMDFT;

bool OpenMMDFT::insideEnergyMinimization() {
    // Functions of OpenMM's minimizer, as mangled prefixes (any signature). Tail calls can drop some
    // frames (LocalEnergyMinimizer::minimize -> ContextImpl::minimize -> the platform's kernel), so every
    // level is listed: the platform's L-BFGS driver is always a real frame, since it calls lbfgs() and
    // continues afterwards.
    static const char* const minimizerFunctions[] = {
        "_ZN6OpenMM20LocalEnergyMinimizer8minimize",
        "_ZN6OpenMM11ContextImpl8minimize",
        "_ZN6OpenMM17ReferenceMinimize8minimize",         // Reference and CPU platforms
        "_ZN6OpenMM23ReferenceMinimizeKernel7execute",
        "_ZN6OpenMM20CommonMinimizeKernel7execute",       // OpenCL, CUDA, HIP
    };
    void* frames[128];
    const int depth = backtrace(frames, 128);
    for (int i = 0; i < depth; i++) {
        // dladdr names a frame only when its address lies inside an exported symbol (glibc checks the size).
        Dl_info info;
        if (dladdr(frames[i], &info) == 0 || info.dli_sname == nullptr)
            continue;
        for (const char* prefix : minimizerFunctions)
            if (strncmp(info.dli_sname, prefix, strlen(prefix)) == 0)
                return true;
    }
    return false;
}
