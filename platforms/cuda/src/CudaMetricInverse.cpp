#include "CudaMetricInverse.h"
#include "openmm/common/ContextSelector.h"
#include <cuda.h>
#include <cusolverDn.h>
#include <algorithm>
#include <dlfcn.h>
#include <memory>
#include <mutex>
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

/**
 * A stream, a cuSOLVER handle and device memory for the inverses of one Context, kept from one geometry to the next:
 * made per inverse, the handle's creation and cuMemFree (which waits for the whole device, the three-centre integrals
 * queued beside it included) cost more than the factorization (an H200 spent 0.145 s per inverse of 1704 x 1704).
 */
class CudaInverse {
public:
    CudaInverse(ComputeContext& cc, const CuSolver& solver) : cc(cc), solver(solver) {}
    ~CudaInverse() {
        ContextSelector selector(cc);
        release();
        if (handle != nullptr)
            solver.destroy(handle);
        if (info != 0)
            cuMemFree(info);
        if (stream != nullptr)
            cuStreamDestroy(stream);
    }
    bool invert(const Eigen::MatrixXd& A, Eigen::MatrixXd& inverse) {
        const int n = (int) A.rows();
        if (n == 0 || A.cols() != n)
            return false;
        std::lock_guard<std::mutex> lock(busy);
        ContextSelector selector(cc);
        if (!ready(n))
            return false;
        const size_t bytes = (size_t) n * n * sizeof(double);
        // Only the lower triangle is read (and overwritten by L, then by the inverse's lower triangle).
        double* a = reinterpret_cast<double*>(matrix);
        double* workspace = reinterpret_cast<double*>(work);
        int* status = reinterpret_cast<int*>(info);
        int factored = -1, inverted = -1;
        if (cuMemcpyHtoDAsync(matrix, A.data(), bytes, stream) != CUDA_SUCCESS ||
            solver.potrf(handle, CUBLAS_FILL_MODE_LOWER, n, a, n, workspace, workSize, status) != CUSOLVER_STATUS_SUCCESS ||
            cuMemcpyDtoHAsync(&factored, info, sizeof(int), stream) != CUDA_SUCCESS || cuStreamSynchronize(stream) != CUDA_SUCCESS ||
            factored != 0)
            return false;  // factored > 0: not positive definite
        Eigen::MatrixXd result(n, n);
        if (solver.potri(handle, CUBLAS_FILL_MODE_LOWER, n, a, n, workspace, workSize, status) != CUSOLVER_STATUS_SUCCESS ||
            cuMemcpyDtoHAsync(&inverted, info, sizeof(int), stream) != CUDA_SUCCESS ||
            cuMemcpyDtoHAsync(result.data(), matrix, bytes, stream) != CUDA_SUCCESS || cuStreamSynchronize(stream) != CUDA_SUCCESS ||
            inverted != 0)
            return false;
        // The lower triangle holds the inverse; the upper one is what the input left there. Mirrored in 64 x 64 blocks,
        // so that the strided reads of a block's rows stay in cache (the metric of 24 waters is 1704 x 1704, 23 MB).
        const int block = 64;
        for (int jb = 0; jb < n; jb += block)
            for (int ib = 0; ib <= jb; ib += block)
                for (int j = jb; j < std::min(jb + block, n); j++)
                    for (int i = ib; i < std::min(ib + block, j); i++)
                        result(i, j) = result(j, i);
        inverse = std::move(result);
        return true;
    }
private:
    /** The stream and handle (once), and memory for an n x n matrix (grown, never shrunk). */
    bool ready(int n) {
        if (stream == nullptr && cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
            stream = nullptr;
            return false;
        }
        if (info == 0 && cuMemAlloc(&info, sizeof(int)) != CUDA_SUCCESS) {
            info = 0;
            return false;
        }
        if (handle == nullptr) {
            if (solver.create(&handle) != CUSOLVER_STATUS_SUCCESS) {
                handle = nullptr;
                return false;
            }
            if (solver.setStream(handle, (cudaStream_t) stream) != CUSOLVER_STATUS_SUCCESS) {
                solver.destroy(handle);
                handle = nullptr;
                return false;
            }
        }
        if (n <= size)
            return true;
        release();
        double* a = nullptr;
        int potrfWork = 0, potriWork = 0;
        if (cuMemAlloc(&matrix, (size_t) n * n * sizeof(double)) != CUDA_SUCCESS) {
            matrix = 0;
            return false;
        }
        a = reinterpret_cast<double*>(matrix);
        if (solver.potrfSize(handle, CUBLAS_FILL_MODE_LOWER, n, a, n, &potrfWork) != CUSOLVER_STATUS_SUCCESS ||
            solver.potriSize(handle, CUBLAS_FILL_MODE_LOWER, n, a, n, &potriWork) != CUSOLVER_STATUS_SUCCESS)
            return false;
        workSize = std::max(1, std::max(potrfWork, potriWork));
        if (cuMemAlloc(&work, (size_t) workSize * sizeof(double)) != CUDA_SUCCESS) {
            work = 0;
            return false;
        }
        size = n;
        return true;
    }
    /** The matrix and workspace (after this stream's work). */
    void release() {
        if (stream != nullptr)
            cuStreamSynchronize(stream);
        for (CUdeviceptr* p : {&matrix, &work})
            if (*p != 0) {
                cuMemFree(*p);
                *p = 0;
            }
        size = 0;
        workSize = 0;
    }
    ComputeContext& cc;
    const CuSolver& solver;
    std::mutex busy;  // the set-up's threads of two QM regions may share a Context
    CUstream stream = nullptr;
    cusolverDnHandle_t handle = nullptr;
    CUdeviceptr matrix = 0, work = 0, info = 0;
    int size = 0, workSize = 0;  // of the matrix memory, and of the workspace in doubles
};

} // namespace

SymmetricInverse cudaSymmetricPositiveDefiniteInverse(ComputeContext& cc) {
    static const CuSolver solver;
    if (!solver.loaded)
        return nullptr;
    std::shared_ptr<CudaInverse> inverse = std::make_shared<CudaInverse>(cc, solver);
    return [inverse](const Eigen::MatrixXd& A, Eigen::MatrixXd& result) { return inverse->invert(A, result); };
}

} // namespace OpenMMDFT
