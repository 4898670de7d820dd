#include "openmmdft/qm/DenseAlgebra.h"
#include "Parallel.h"
#include <openmm/OpenMMException.h>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <dlfcn.h>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c, const int* ldc,
            size_t, size_t);
void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* lda, const double* x,
            const int* incx, const double* beta, double* y, const int* incy, size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
}

namespace OpenMMDFT {
namespace QM {

namespace {

/**
 * OpenBLAS's worker threads keep spinning (sched_yield) for a while after each call. Between the engine's
 * own parallel loops (integrals, grid, XC) those spinning threads take the cores the loops need: on a 2-core
 * machine one QM water's MD step among 1500 MM charges took 0.117 s with OpenBLAS's threads and 0.080 s
 * without. Products and eigensystems too small to gain from threads therefore run on the calling thread;
 * large ones get OpenBLAS's own thread count. Other BLAS libraries are left alone (no such entry points).
 */
class BlasThreadLimit {
public:
    /** threads > 0: at most that many (else by the size of the work: one, or OpenBLAS's own count). */
    explicit BlasThreadLimit(double flops, int threads = 0) {
        static const Control control;
        if (control.set == nullptr)
            return;
        lock_ = std::unique_lock<std::mutex>(control.mutex);
        const int wanted = threads > 0 ? std::min(threads, control.defaultThreads)
                                       : (flops < SERIAL_FLOPS ? 1 : control.defaultThreads);
        if (wanted != control.current) {
            control.set(wanted);
            control.current = wanted;
        }
    }

private:
    /// Below this many floating-point operations (a product of two 250 x 250 matrices) one thread is faster.
    static constexpr double SERIAL_FLOPS = 3.2e7;
    struct Control {
        void (*set)(int) = nullptr;
        int defaultThreads = 1;
        mutable int current = -1;
        mutable std::mutex mutex;
        Control() {
            void* library = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
            void* scope = library != nullptr ? library : RTLD_DEFAULT;
            set = reinterpret_cast<void (*)(int)>(dlsym(scope, "openblas_set_num_threads"));
            auto get = reinterpret_cast<int (*)()>(dlsym(scope, "openblas_get_num_threads"));
            if (set == nullptr || get == nullptr)
                set = nullptr;
            else
                defaultThreads = std::max(1, get());
        }
    };
    // Held for the call: the thread count is global to OpenBLAS, so concurrent engines take turns.
    std::unique_lock<std::mutex> lock_;
};

} // namespace

Eigen::MatrixXd productResult(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB, int& k) {
    const int m = transposeA ? A.cols() : A.rows(), n = transposeB ? B.rows() : B.cols();
    k = transposeA ? A.rows() : A.cols();
    if (k != (transposeB ? B.cols() : B.rows()))
        throw OpenMM::OpenMMException("QM: product of matrices with mismatched inner dimensions (internal error)");
    Eigen::MatrixXd C(m, n);
    if (k == 0)
        C.setZero();
    return C;
}

Eigen::MatrixXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::MatrixXd& B, bool transposeB) {
    int k;
    Eigen::MatrixXd C = productResult(A, transposeA, B, transposeB, k);
    const int m = C.rows(), n = C.cols();
    if (m == 0 || n == 0 || k == 0)
        return C;
    const double one = 1, zero = 0;
    const int lda = std::max<int>(1, A.rows()), ldb = std::max<int>(1, B.rows()), ldc = m;
    BlasThreadLimit limit(2.0 * m * n * k);
    dgemm_(transposeA ? "T" : "N", transposeB ? "T" : "N", &m, &n, &k, &one, A.data(), &lda, B.data(), &ldb, &zero, C.data(), &ldc, 1, 1);
    return C;
}

Eigen::VectorXd product(const Eigen::MatrixXd& A, bool transposeA, const Eigen::VectorXd& x) {
    const int m = A.rows(), n = A.cols();
    if ((transposeA ? m : n) != x.size())
        throw OpenMM::OpenMMException("QM: matrix-vector product with mismatched dimensions (internal error)");
    Eigen::VectorXd y = Eigen::VectorXd::Zero(transposeA ? n : m);
    if (m == 0 || n == 0)
        return y;
    const double one = 1, zero = 0;
    const int lda = m, inc = 1;
    BlasThreadLimit limit(2.0 * m * n);
    dgemv_(transposeA ? "T" : "N", &m, &n, &one, A.data(), &lda, x.data(), &inc, &zero, y.data(), &inc, 1);
    return y;
}

namespace {
/// Threads for a product that reads this many doubles once: below a few MB (in cache) the threads' start costs more
/// than they save.
int streamingThreads(double elements, int threads) {
    return 8.0 * elements < 2.0 * 1048576.0 ? 1 : threads;
}
} // namespace

Eigen::VectorXd streamedTransposeProduct(const Eigen::MatrixXd& A, const Eigen::Ref<const Eigen::VectorXd>& x, int threads) {
    if (A.rows() != x.size())
        throw OpenMM::OpenMMException("QM: matrix-vector product with mismatched dimensions (internal error)");
    Eigen::VectorXd y(A.cols());
    parallelFor((int) A.cols(), streamingThreads((double) A.size(), threads), [&](int j, int) { y[j] = A.col(j).dot(x); });
    return y;
}

namespace {
/// A list member's elements start..start+length as a column of its own scalar type (cast to double where read).
template <class Stored>
Eigen::Map<const Eigen::Matrix<typename Stored::Scalar, Eigen::Dynamic, 1>> column(const Stored* a, Eigen::Index start, Eigen::Index length) {
    return Eigen::Map<const Eigen::Matrix<typename Stored::Scalar, Eigen::Dynamic, 1>>(a->data() + start, length);
}

template <class Stored>
void checkEqualSizes(const std::vector<const Stored*>& A, Eigen::Index size) {
    for (const Stored* a : A)
        if (a->size() != size)
            throw OpenMM::OpenMMException("QM: products of a matrix list with mismatched dimensions (internal error)");
}

/// <a, x> for a in double (Eigen's vectorized dot) and in single precision: sixteen running sums over consecutive
/// elements, which the compiler turns into vector conversions and four independent chains of fused multiply-adds
/// (Eigen's dot of a cast expression ran element by element, slower than reading twice the bytes in double); a fixed
/// order either way.
double dotOf(const double* a, const Eigen::Ref<const Eigen::VectorXd>& x) {
    return Eigen::Map<const Eigen::VectorXd>(a, x.size()).dot(x);
}

double dotOf(const float* a, const Eigen::Ref<const Eigen::VectorXd>& x) {
    const Eigen::Index n = x.size();
    const double* xs = x.data();
    constexpr int kSums = 16;
    double sums[kSums] = {};
    Eigen::Index i = 0;
    for (; i + kSums <= n; i += kSums)
        for (int k = 0; k < kSums; k++)
            sums[k] += (double) a[i + k] * xs[i + k];
    double total = 0;
    for (int k = 0; k < kSums; k++)
        total += sums[k];
    for (; i < n; i++)
        total += (double) a[i] * xs[i];
    return total;
}

/// y += sum_k w[k] a[k] over length elements, for count (at most 4) terms at once: y is read and written once per four
/// terms (a block of it stays in cache, but its loads and stores were half of the traffic).
template <class Scalar>
void addScaled(const double* w, const Scalar* const* a, int count, double* y, Eigen::Index length) {
    switch (count) {
    case 4:
        for (Eigen::Index i = 0; i < length; i++)
            y[i] += (w[0] * (double) a[0][i] + w[1] * (double) a[1][i]) + (w[2] * (double) a[2][i] + w[3] * (double) a[3][i]);
        break;
    case 3:
        for (Eigen::Index i = 0; i < length; i++)
            y[i] += (w[0] * (double) a[0][i] + w[1] * (double) a[1][i]) + w[2] * (double) a[2][i];
        break;
    case 2:
        for (Eigen::Index i = 0; i < length; i++)
            y[i] += w[0] * (double) a[0][i] + w[1] * (double) a[1][i];
        break;
    default:
        for (Eigen::Index i = 0; i < length; i++)
            y[i] += w[0] * (double) a[0][i];
    }
}

template <class Stored>
Eigen::VectorXd dotsOf(const std::vector<const Stored*>& A, const Eigen::Ref<const Eigen::VectorXd>& x, int threads) {
    checkEqualSizes(A, x.size());
    Eigen::VectorXd y(A.size());
    parallelFor((int) A.size(), streamingThreads((double) A.size() * x.size(), threads), [&](int j, int) {
        y[j] = dotOf(A[j]->data(), x);
    });
    return y;
}

template <class Stored>
void addCombinationOf(const std::vector<const Stored*>& A, const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y,
                      int threads) {
    if ((Eigen::Index) A.size() != x.size())
        throw OpenMM::OpenMMException("QM: products of a matrix list with mismatched dimensions (internal error)");
    checkEqualSizes(A, y.size());
    // Rows per block: the output block (64 KiB) stays in cache across the terms.
    constexpr int kRowBlock = 8192;
    const int rows = (int) y.size(), blocks = (rows + kRowBlock - 1) / kRowBlock;
    parallelFor(blocks, threads, [&](int b, int) {
        const int start = b * kRowBlock, length = std::min(kRowBlock, rows - start);
        for (size_t j = 0; j < A.size(); j += 4) {
            const int count = (int) std::min<size_t>(4, A.size() - j);
            const double w[4] = {x[j], count > 1 ? x[j + 1] : 0.0, count > 2 ? x[j + 2] : 0.0, count > 3 ? x[j + 3] : 0.0};
            const typename Stored::Scalar* terms[4];
            for (int k = 0; k < count; k++)
                terms[k] = A[j + k]->data() + start;
            addScaled(w, terms, count, y.data() + start, length);
        }
    });
}

template <class Stored>
Eigen::MatrixXd crossGramOf(const std::vector<const Stored*>& A, const std::vector<const Stored*>& B, int threads) {
    const int m = (int) A.size(), k = (int) B.size();
    if (m == 0 || k == 0)
        return Eigen::MatrixXd(m, k);
    const Eigen::Index rows = A[0]->size();
    checkEqualSizes(A, rows);
    checkEqualSizes(B, rows);
    const bool same = &A == &B;  // a Gram matrix: the gathered block is both sides of one product
    // Row blocks of A gathered side by side (2048 x m, in cache, in double) give the products as a sum of small ones;
    // B's rows are read where they lie (for a Gram matrix grown by a few new matrices, A is those few and B streams
    // once).
    constexpr int kRowBlock = 2048;
    const int blocks = (int) ((rows + kRowBlock - 1) / kRowBlock);
    std::vector<Eigen::MatrixXd> gathered(resolveThreads(threads));
    return parallelChunkedSum<Eigen::MatrixXd>(blocks, threads, Eigen::MatrixXd::Zero(m, k),
                                               [&](int b, Eigen::MatrixXd& sum, int t) {
        const Eigen::Index start = (Eigen::Index) b * kRowBlock, length = std::min<Eigen::Index>(kRowBlock, rows - start);
        Eigen::MatrixXd& block = gathered[t];
        block.resize(length, m);
        for (int j = 0; j < m; j++)
            block.col(j) = column(A[j], start, length).template cast<double>();
        if (same)
            sum.noalias() += block.transpose() * block;
        else
            for (int j = 0; j < k; j++)
                sum.col(j).noalias() += block.transpose() * column(B[j], start, length).template cast<double>();
    });
}
} // namespace

SharedPair packedPair(const Eigen::VectorXd& packed) {
    return std::make_shared<const PackedPair>(packed.cast<float>());
}

Eigen::VectorXd streamedDots(const MatrixList& A, const Eigen::Ref<const Eigen::VectorXd>& x, int threads) {
    return dotsOf(A, x, threads);
}

Eigen::VectorXd streamedDots(const PairList& A, const Eigen::Ref<const Eigen::VectorXd>& x, int threads) {
    return dotsOf(A, x, threads);
}

void addStreamedCombination(const MatrixList& A, const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y,
                            int threads) {
    addCombinationOf(A, x, y, threads);
}

void addStreamedCombination(const PairList& A, const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> y,
                            int threads) {
    addCombinationOf(A, x, y, threads);
}

namespace {
void checkSquare(const Eigen::MatrixXd& A) {
    if (A.rows() != A.cols())
        throw OpenMM::OpenMMException("QM: packing a non-square matrix by its triangle (internal error)");
}
} // namespace

Eigen::VectorXd packSymmetric(const Eigen::MatrixXd& A) {
    checkSquare(A);
    const Eigen::Index n = A.rows();
    Eigen::VectorXd packed(packedSymmetricSize(n));
    for (Eigen::Index j = 0, k = 0; j < n; k += j + 1, j++) {
        packed.segment(k, j) = M_SQRT2 * A.col(j).head(j);
        packed[k + j] = A(j, j);
    }
    return packed;
}

Eigen::VectorXd packAntisymmetric(const Eigen::MatrixXd& A) {
    checkSquare(A);
    const Eigen::Index n = A.rows();
    Eigen::VectorXd packed(packedAntisymmetricSize(n));
    for (Eigen::Index j = 1, k = 0; j < n; k += j, j++)
        packed.segment(k, j) = M_SQRT2 * A.col(j).head(j);
    return packed;
}

void addUnpackedSymmetric(const Eigen::Ref<const Eigen::VectorXd>& packed, Eigen::MatrixXd& A) {
    checkSquare(A);
    const Eigen::Index n = A.rows();
    if (packed.size() != packedSymmetricSize(n))
        throw OpenMM::OpenMMException("QM: a packed symmetric matrix of another size (internal error)");
    for (Eigen::Index j = 0, k = 0; j < n; k += j + 1, j++) {
        for (Eigen::Index i = 0; i < j; i++) {
            const double value = M_SQRT1_2 * packed[k + i];
            A(i, j) += value;
            A(j, i) += value;
        }
        A(j, j) += packed[k + j];
    }
}

Eigen::MatrixXd streamedGram(const MatrixList& A, int threads) {
    return crossGramOf(A, A, threads);
}

Eigen::MatrixXd streamedGram(const PairList& A, int threads) {
    return crossGramOf(A, A, threads);
}

Eigen::MatrixXd streamedCrossGram(const MatrixList& A, const MatrixList& B, int threads) {
    return crossGramOf(A, B, threads);
}

Eigen::MatrixXd streamedCrossGram(const PairList& A, const PairList& B, int threads) {
    return crossGramOf(A, B, threads);
}

Eigen::MatrixXd congruence(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
    return product(B, true, product(A, false, B, false), false);
}

std::string openBLASKernelWarning() {
    static const std::string warning = [] {
        void* library = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
        auto corename = reinterpret_cast<char* (*)()>(dlsym(library != nullptr ? library : RTLD_DEFAULT, "openblas_get_corename"));
        if (corename == nullptr || corename() == nullptr)
            return std::string();
        const std::string core = corename();
        // OpenBLAS's x86 kernel sets without AVX (DYNAMIC_ARCH's fallbacks for a CPU it does not recognise).
        static const char* const withoutAVX[] = {"Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom", "Core2", "Penryn",
                                                 "Dunnington", "Nehalem", "Athlon", "Opteron", "Opteron_SSE3", "Barcelona", "Bobcat", "Nano"};
        if (std::find(std::begin(withoutAVX), std::end(withoutAVX), core) == std::end(withoutAVX))
            return std::string();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        __builtin_cpu_init();
        if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
            return std::string();
        const char* better = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") ? "SkylakeX" : "Haswell";
        return "openmm-dft: OpenBLAS runs its " + core + " kernels on a CPU with AVX2 and FMA (it did not recognise the "
               "CPU model), which makes the QM engine's dense algebra about twice as slow as it could be; set "
               "OPENBLAS_CORETYPE=" + better + " in the environment before the program starts";
#else
        return std::string();
#endif
    }();
    return warning;
}

void withOpenBLASThreads(const std::function<void()>& work, int threads) {
    BlasThreadLimit limit(std::numeric_limits<double>::infinity(), threads);
    work();
}

void symmetricEigensystem(const Eigen::MatrixXd& A, Eigen::VectorXd& values, Eigen::MatrixXd& vectors) {
    const int n = A.rows();
    if (A.cols() != n)
        throw OpenMM::OpenMMException("QM: eigensystem of a non-square matrix (internal error)");
    vectors = A;
    values.resize(n);
    if (n == 0)
        return;
    int info = 0, lwork = -1, liwork = -1, iworkSize = 0;
    double workSize = 0;
    BlasThreadLimit limit(9.0 * n * n * n); // dsyevd with vectors: about 9 n^3 operations
    dsyevd_("V", "L", &n, vectors.data(), &n, values.data(), &workSize, &lwork, &iworkSize, &liwork, &info, 1, 1);
    lwork = (int) workSize;
    liwork = iworkSize;
    std::vector<double> work(std::max(1, lwork));
    std::vector<int> iwork(std::max(1, liwork));
    dsyevd_("V", "L", &n, vectors.data(), &n, values.data(), work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
    if (info != 0)
        throw OpenMM::OpenMMException("QM: the symmetric eigensolver (LAPACK dsyevd) failed with info = " + std::to_string(info) +
                                      (info > 0 ? " (no convergence: are the matrix elements finite?)" : ""));
}

} // namespace QM
} // namespace OpenMMDFT
