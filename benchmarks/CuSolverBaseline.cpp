/* cuSOLVER/cuBLAS baselines of BenchLeastSquares (see CuSolverBaseline.h). */
#include "CuSolverBaseline.h"
#include <algorithm>
#include <chrono>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <stdexcept>

using namespace std;

namespace CuSolverBaseline {

namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw runtime_error(string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t e, const char* what) {
    if (e != CUBLAS_STATUS_SUCCESS)
        throw runtime_error(string(what) + ": cuBLAS status " + to_string((int) e));
}
void check(cusolverStatus_t e, const char* what) {
    if (e != CUSOLVER_STATUS_SUCCESS)
        throw runtime_error(string(what) + ": cuSOLVER status " + to_string((int) e));
}

/* The float and double entry points behind one name each. */
cusolverStatus_t geqrfSize(cusolverDnHandle_t h, int m, int n, float* a, int lda, int* lwork) { return cusolverDnSgeqrf_bufferSize(h, m, n, a, lda, lwork); }
cusolverStatus_t geqrfSize(cusolverDnHandle_t h, int m, int n, double* a, int lda, int* lwork) { return cusolverDnDgeqrf_bufferSize(h, m, n, a, lda, lwork); }
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, float* a, int lda, float* tau, float* w, int lw, int* info) { return cusolverDnSgeqrf(h, m, n, a, lda, tau, w, lw, info); }
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, double* a, int lda, double* tau, double* w, int lw, int* info) { return cusolverDnDgeqrf(h, m, n, a, lda, tau, w, lw, info); }
cusolverStatus_t ormqrSize(cusolverDnHandle_t h, int m, int k, const float* a, int lda, const float* tau, const float* c, int* lwork) {
    return cusolverDnSormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, k, a, lda, tau, c, m, lwork);
}
cusolverStatus_t ormqrSize(cusolverDnHandle_t h, int m, int k, const double* a, int lda, const double* tau, const double* c, int* lwork) {
    return cusolverDnDormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, k, a, lda, tau, c, m, lwork);
}
cusolverStatus_t ormqr(cusolverDnHandle_t h, int m, int k, const float* a, int lda, const float* tau, float* c, float* w, int lw, int* info) {
    return cusolverDnSormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, k, a, lda, tau, c, m, w, lw, info);
}
cusolverStatus_t ormqr(cusolverDnHandle_t h, int m, int k, const double* a, int lda, const double* tau, double* c, double* w, int lw, int* info) {
    return cusolverDnDormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, 1, k, a, lda, tau, c, m, w, lw, info);
}
cublasStatus_t trsmUpper(cublasHandle_t h, int n, const float* r, int ldr, float* x) {
    const float one = 1;
    return cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, 1, &one, r, ldr, x, n);
}
cublasStatus_t trsmUpper(cublasHandle_t h, int n, const double* r, int ldr, double* x) {
    const double one = 1;
    return cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, 1, &one, r, ldr, x, n);
}
cublasStatus_t normalMatrix(cublasHandle_t h, bool lowerOnly, int m, int n, const float* a, float* g) {
    const float one = 1, zero = 0;
    return lowerOnly ? cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, m, &one, a, m, &zero, g, n)
                     : cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, m, &one, a, m, a, m, &zero, g, n);
}
cublasStatus_t normalMatrix(cublasHandle_t h, bool lowerOnly, int m, int n, const double* a, double* g) {
    const double one = 1, zero = 0;
    return lowerOnly ? cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, m, &one, a, m, &zero, g, n)
                     : cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, m, &one, a, m, a, m, &zero, g, n);
}
cublasStatus_t normalRhs(cublasHandle_t h, int m, int n, const float* a, const float* b, float* r) {
    const float one = 1, zero = 0;
    return cublasSgemv(h, CUBLAS_OP_T, m, n, &one, a, m, b, 1, &zero, r, 1);
}
cublasStatus_t normalRhs(cublasHandle_t h, int m, int n, const double* a, const double* b, double* r) {
    const double one = 1, zero = 0;
    return cublasDgemv(h, CUBLAS_OP_T, m, n, &one, a, m, b, 1, &zero, r, 1);
}
cusolverStatus_t potrfSize(cusolverDnHandle_t h, int n, float* g, int* lw) { return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, g, n, lw); }
cusolverStatus_t potrfSize(cusolverDnHandle_t h, int n, double* g, int* lw) { return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, g, n, lw); }
cusolverStatus_t potrf(cusolverDnHandle_t h, int n, float* g, float* w, int lw, int* info) { return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, g, n, w, lw, info); }
cusolverStatus_t potrf(cusolverDnHandle_t h, int n, double* g, double* w, int lw, int* info) { return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, g, n, w, lw, info); }
cusolverStatus_t potrs(cusolverDnHandle_t h, int n, const float* g, float* x, int* info) { return cusolverDnSpotrs(h, CUBLAS_FILL_MODE_LOWER, n, 1, g, n, x, n, info); }
cusolverStatus_t potrs(cusolverDnHandle_t h, int n, const double* g, double* x, int* info) { return cusolverDnDpotrs(h, CUBLAS_FILL_MODE_LOWER, n, 1, g, n, x, n, info); }
cusolverStatus_t getrfSize(cusolverDnHandle_t h, int n, float* g, int* lw) { return cusolverDnSgetrf_bufferSize(h, n, n, g, n, lw); }
cusolverStatus_t getrfSize(cusolverDnHandle_t h, int n, double* g, int* lw) { return cusolverDnDgetrf_bufferSize(h, n, n, g, n, lw); }
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, float* g, float* w, int* piv, int* info) { return cusolverDnSgetrf(h, n, n, g, n, w, piv, info); }
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, double* g, double* w, int* piv, int* info) { return cusolverDnDgetrf(h, n, n, g, n, w, piv, info); }
cusolverStatus_t getrs(cusolverDnHandle_t h, int n, const float* g, const int* piv, float* x, int* info) { return cusolverDnSgetrs(h, CUBLAS_OP_N, n, 1, g, n, piv, x, n, info); }
cusolverStatus_t getrs(cusolverDnHandle_t h, int n, const double* g, const int* piv, double* x, int* info) { return cusolverDnDgetrs(h, CUBLAS_OP_N, n, 1, g, n, piv, x, n, info); }

/** Device buffer of T, freed on scope exit. */
template <class T>
struct Buffer {
    T* p = nullptr;
    explicit Buffer(size_t count) { check(cudaMalloc(&p, max<size_t>(1, count) * sizeof(T)), "cudaMalloc"); }
    ~Buffer() { cudaFree(p); }
};

template <class T>
double solveIn(const string& method, int m, int n, const vector<double>& Acm, const vector<double>& b, vector<double>& x) {
    cusolverDnHandle_t solver;
    cublasHandle_t blas;
    check(cusolverDnCreate(&solver), "cusolverDnCreate");
    check(cublasCreate(&blas), "cublasCreate");
    vector<T> a(Acm.begin(), Acm.end()), bb(b.begin(), b.end()), xt(n);
    Buffer<T> A((size_t) m * n), B(m);
    Buffer<int> info(1);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    auto t0 = chrono::steady_clock::now();
    check(cudaMemcpy(A.p, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice), "upload A");
    check(cudaMemcpy(B.p, bb.data(), bb.size() * sizeof(T), cudaMemcpyHostToDevice), "upload b");
    if (method == "QR") {
        Buffer<T> tau(n);
        int lw1, lw2;
        check(geqrfSize(solver, m, n, A.p, m, &lw1), "geqrf_bufferSize");
        check(ormqrSize(solver, m, n, A.p, m, tau.p, B.p, &lw2), "ormqr_bufferSize");
        Buffer<T> work(max(lw1, lw2));
        check(geqrf(solver, m, n, A.p, m, tau.p, work.p, max(lw1, lw2), info.p), "geqrf");
        check(ormqr(solver, m, n, A.p, m, tau.p, B.p, work.p, max(lw1, lw2), info.p), "ormqr");
        check(trsmUpper(blas, n, A.p, m, B.p), "trsm");
        check(cudaMemcpy(xt.data(), B.p, n * sizeof(T), cudaMemcpyDeviceToHost), "download x");
    }
    else {
        const bool cholesky = (method == "Cholesky");
        Buffer<T> G((size_t) n * n), H(n);
        check(normalMatrix(blas, cholesky, m, n, A.p, G.p), "A^T A");
        check(normalRhs(blas, m, n, A.p, B.p, H.p), "A^T b");
        int lw;
        if (cholesky) {
            check(potrfSize(solver, n, G.p, &lw), "potrf_bufferSize");
            Buffer<T> work(lw);
            check(potrf(solver, n, G.p, work.p, lw, info.p), "potrf");
            check(potrs(solver, n, G.p, H.p, info.p), "potrs");
        }
        else {
            check(getrfSize(solver, n, G.p, &lw), "getrf_bufferSize");
            Buffer<T> work(lw);
            Buffer<int> piv(n);
            check(getrf(solver, n, G.p, work.p, piv.p, info.p), "getrf");
            check(getrs(solver, n, G.p, piv.p, H.p, info.p), "getrs");
        }
        check(cudaMemcpy(xt.data(), H.p, n * sizeof(T), cudaMemcpyDeviceToHost), "download x");
    }
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const double seconds = chrono::duration<double>(chrono::steady_clock::now() - t0).count();
    int status;
    check(cudaMemcpy(&status, info.p, sizeof(int), cudaMemcpyDeviceToHost), "download info");
    cublasDestroy(blas);
    cusolverDnDestroy(solver);
    if (status != 0)
        throw runtime_error("cuSOLVER " + method + " failed (info " + to_string(status) + ")");
    x.assign(xt.begin(), xt.end());
    return seconds;
}

} // namespace

string unavailableReason() {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return cudaGetErrorString(e);
    return count > 0 ? "" : "no CUDA device";
}

double solve(const string& method, bool useFloat, int m, int n, const vector<double>& Acm, const vector<double>& b, vector<double>& x) {
    return useFloat ? solveIn<float>(method, m, n, Acm, b, x) : solveIn<double>(method, m, n, Acm, b, x);
}

} // namespace CuSolverBaseline
