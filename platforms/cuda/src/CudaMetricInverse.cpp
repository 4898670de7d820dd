#include "CudaMetricInverse.h"
#include "openmm/common/ContextSelector.h"
#include <cuda.h>
#include <cusolverDn.h>
#include <algorithm>
#include <dlfcn.h>
#include <type_traits>

using namespace OpenMM;

namespace OpenMMDFT {

namespace {

/** cuSOLVER's dense entry points that the inverse uses, from the library loaded at run time (none where it is absent). */
struct CuSolver {
    decltype(&cusolverDnCreate) create = nullptr;
    decltype(&cusolverDnDestroy) destroy = nullptr;
    decltype(&cusolverDnSetStream) setStream = nullptr;
    decltype(&cusolverDnDpotrf_bufferSize) potrfSize = nullptr;
    decltype(&cusolverDnDpotrf) potrf = nullptr;
    decltype(&cusolverDnDpotri_bufferSize) potriSize = nullptr;
    decltype(&cusolverDnDpotri) potri = nullptr;
    bool loaded = false;
    CuSolver() {
        void* library = dlopen("libcusolver.so.12", RTLD_LAZY | RTLD_LOCAL);
        if (library == nullptr)
            return;
        auto find = [&](auto& entry, const char* name) {
            entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(dlsym(library, name));
            return entry != nullptr;
        };
        loaded = find(create, "cusolverDnCreate") && find(destroy, "cusolverDnDestroy") && find(setStream, "cusolverDnSetStream") &&
                 find(potrfSize, "cusolverDnDpotrf_bufferSize") && find(potrf, "cusolverDnDpotrf") &&
                 find(potriSize, "cusolverDnDpotri_bufferSize") && find(potri, "cusolverDnDpotri");
    }
};

/** Device memory and a stream and a cuSOLVER handle for one inverse, released whatever happens. */
struct Resources {
    const CuSolver& solver;
    CUstream stream = nullptr;
    cusolverDnHandle_t handle = nullptr;
    CUdeviceptr matrix = 0, work = 0, info = 0;
    explicit Resources(const CuSolver& solver) : solver(solver) {}
    ~Resources() {
        if (stream != nullptr)
            cuStreamSynchronize(stream);
        if (handle != nullptr)
            solver.destroy(handle);
        for (CUdeviceptr p : {matrix, work, info})
            if (p != 0)
                cuMemFree(p);
        if (stream != nullptr)
            cuStreamDestroy(stream);
    }
};

} // namespace

bool cudaSymmetricPositiveDefiniteInverse(ComputeContext& cc, const Eigen::MatrixXd& A, Eigen::MatrixXd& inverse) {
    static const CuSolver solver;
    const int n = (int) A.rows();
    if (!solver.loaded || n == 0 || A.cols() != n)
        return false;
    ContextSelector selector(cc);
    Resources r(solver);
    const size_t bytes = (size_t) n * n * sizeof(double);
    if (cuStreamCreate(&r.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS || cuMemAlloc(&r.matrix, bytes) != CUDA_SUCCESS ||
        cuMemAlloc(&r.info, sizeof(int)) != CUDA_SUCCESS)
        return false;
    if (solver.create(&r.handle) != CUSOLVER_STATUS_SUCCESS || solver.setStream(r.handle, (cudaStream_t) r.stream) != CUSOLVER_STATUS_SUCCESS)
        return false;
    // Only the lower triangle is read (and overwritten by L, then by the inverse's lower triangle).
    double* a = reinterpret_cast<double*>(r.matrix);
    int potrfWork = 0, potriWork = 0;
    if (solver.potrfSize(r.handle, CUBLAS_FILL_MODE_LOWER, n, a, n, &potrfWork) != CUSOLVER_STATUS_SUCCESS ||
        solver.potriSize(r.handle, CUBLAS_FILL_MODE_LOWER, n, a, n, &potriWork) != CUSOLVER_STATUS_SUCCESS)
        return false;
    const int workSize = std::max(1, std::max(potrfWork, potriWork));
    if (cuMemAlloc(&r.work, (size_t) workSize * sizeof(double)) != CUDA_SUCCESS)
        return false;
    double* work = reinterpret_cast<double*>(r.work);
    int* info = reinterpret_cast<int*>(r.info);
    int factored = -1, inverted = -1;
    if (cuMemcpyHtoDAsync(r.matrix, A.data(), bytes, r.stream) != CUDA_SUCCESS ||
        solver.potrf(r.handle, CUBLAS_FILL_MODE_LOWER, n, a, n, work, workSize, info) != CUSOLVER_STATUS_SUCCESS ||
        cuMemcpyDtoHAsync(&factored, r.info, sizeof(int), r.stream) != CUDA_SUCCESS || cuStreamSynchronize(r.stream) != CUDA_SUCCESS ||
        factored != 0)
        return false;  // factored > 0: not positive definite
    Eigen::MatrixXd result(n, n);
    if (solver.potri(r.handle, CUBLAS_FILL_MODE_LOWER, n, a, n, work, workSize, info) != CUSOLVER_STATUS_SUCCESS ||
        cuMemcpyDtoHAsync(&inverted, r.info, sizeof(int), r.stream) != CUDA_SUCCESS ||
        cuMemcpyDtoHAsync(result.data(), r.matrix, bytes, r.stream) != CUDA_SUCCESS || cuStreamSynchronize(r.stream) != CUDA_SUCCESS ||
        inverted != 0)
        return false;
    // The lower triangle holds the inverse; the upper one is what the input left there. Mirrored in 64 x 64 blocks, so
    // that the strided reads of a block's rows stay in cache (the metric of 24 waters is 1704 x 1704, 23 MB).
    const int block = 64;
    for (int jb = 0; jb < n; jb += block)
        for (int ib = 0; ib <= jb; ib += block)
            for (int j = jb; j < std::min(jb + block, n); j++)
                for (int i = ib; i < std::min(ib + block, j); i++)
                    result(i, j) = result(j, i);
    inverse = std::move(result);
    return true;
}

} // namespace OpenMMDFT
