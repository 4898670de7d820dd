/*
 * Least-squares benchmark: each method of openmm-dft's SolveLeastSquares kernel
 * against LAPACK on the same machine, in the same run, on the same data.
 *
 *   BenchLeastSquares [--sizes 1000,2000,3000,4000,5000] [--rows-per-column 2] [--repeat 1]
 *                     [--platforms Reference,OpenCL] [--precisions double,mixed,single] [--markdown out.md]
 *                     [--metric-inverse]
 *
 * --metric-inverse: instead, the inverse of an N x N symmetric positive definite matrix as the density fitting asks
 * for it (normalEquationsGiven, Cholesky, the identity as N right-hand sides, no residual norms), per platform with
 * the seconds of each phase of the solve (LeastSquaresOptions::timePhases), against LAPACK dpotrf + dpotri.
 *
 * Problem for each N: A is m x N with m = 2N (default) and independent standard normal entries,
 * b = A x_true with x_true standard normal (a consistent system, so the optimal residual is 0 and
 * ||A x - b|| measures the error of the method, as in Table 1 of the seed paper).
 * Baselines (OpenBLAS/LAPACK, column-major data prepared outside the timing):
 *   dgels                       for QR
 *   dsyrk + dgemm + dposv       for Cholesky (normal equations)
 *   dsyrk + dgemm + dgesv       for Gauss (normal equations)
 * Our timings include the whole public entry point (validation, layout conversion from row-major,
 * residual norms recomputed in double on the host). Gauss-Seidel has no LAPACK counterpart; it is
 * shown against dposv.
 * With --platforms CUDA (built where the CUDA toolkit is), the CUDA rows are compared with cuSOLVER in
 * the same precision instead (CuSolverBaseline.h; double for mixed): geqrf/ormqr/trsm for QR,
 * syrk/potrf/potrs for Cholesky and Gauss-Seidel, gemm/getrf/getrs for Gauss.
 */
#include "../tests/PluginLoading.h"
#include "CommaList.h"
#include "openmmdft/LeastSquares.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

extern "C" void registerQMMMReferenceKernelFactories();
#ifdef OPENMMDFT_BENCH_CUDA
#include "CuSolverBaseline.h"
#endif
extern "C" {
void dgels_(const char* trans, const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
            double* work, const int* lwork, int* info, size_t);
void dposv_(const char* uplo, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb, int* info, size_t);
void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b, const int* ldb, int* info);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha, const double* a, const int* lda,
            const double* beta, double* c, const int* ldc, size_t, size_t);
void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* lda, const double* x,
            const int* incx, const double* beta, double* y, const int* incy, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
}

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

static double now() {
    return chrono::duration<double>(chrono::steady_clock::now().time_since_epoch()).count();
}

/* The cuSOLVER baseline of a method in a precision (mixed is compared with double). */
static string gpuBaselineName(const string& method, const string& precision) {
    return "cuSOLVER " + string(precision == "single" ? "S" : "D") + (method == "QR" ? "geqrf" : method == "Gauss" ? "getrf" : "potrf");
}

struct Row {
    int n;
    string method, platform, precision;
    double residual, relResidual, relError, seconds, lapackSeconds;
    string lapackName, note;
};

/* ||A x - b|| and ||x - xTrue||/||xTrue|| for a column-major solution. */
static void measure(int m, int n, const vector<double>& Arm, const vector<double>& b, const vector<double>& x, const vector<double>& xTrue,
                    double& res, double& relErr) {
    double r2 = 0;
    for (int i = 0; i < m; i++) {
        double r = -b[i];
        const double* row = &Arm[(size_t) i * n];
        for (int j = 0; j < n; j++)
            r += row[j] * x[j];
        r2 += r * r;
    }
    res = sqrt(r2);
    double e = 0, t = 0;
    for (int j = 0; j < n; j++) {
        e += (x[j] - xTrue[j]) * (x[j] - xTrue[j]);
        t += xTrue[j] * xTrue[j];
    }
    relErr = sqrt(e / t);
}

/* The density fitting's use of the kernel: the inverse of a well-conditioned SPD matrix (G = A^T A / m + I/10 of a
 * random 2N x N A), best of `repeat` runs per configuration, with the phases of the best run. */
static void metricInverse(const vector<int>& sizes, int repeat, const vector<string>& platforms, const vector<string>& precisions) {
    for (int n : sizes) {
        const int m = 2 * n;
        mt19937_64 rng(777 + n);
        normal_distribution<double> g;
        vector<double> A((size_t) m * n);
        for (double& v : A)
            v = g(rng);
        vector<double> G((size_t) n * n, 0.0);
        const double one = 1.0 / m, zero = 0.0;
        dsyrk_("U", "T", &n, &m, &one, A.data(), &m, &zero, G.data(), &n, 1, 1);
        for (int j = 0; j < n; j++) {
            G[j + (size_t) j * n] += 0.1;
            for (int i = j + 1; i < n; i++)
                G[i + (size_t) j * n] = G[j + (size_t) i * n];
        }
        vector<double> identity((size_t) n * n, 0.0);
        for (int j = 0; j < n; j++)
            identity[j + (size_t) j * n] = 1.0;
        double lapack = 1e300;
        vector<double> reference;
        for (int r = 0; r < repeat; r++) {
            vector<double> work(G);
            int info;
            const double t0 = now();
            dpotrf_("U", &n, work.data(), &n, &info, 1);
            dpotri_("U", &n, work.data(), &n, &info, 1);
            lapack = min(lapack, now() - t0);
            reference = work;
        }
        printf("metric inverse N = %d: LAPACK dpotrf + dpotri %.4f s\n", n, lapack);
        for (const string& platform : platforms)
            for (const string& precision : (platform == "Reference" || platform == "CPU" ? vector<string>{"double"} : precisions)) {
                map<string, string> props;
                if (platform != "Reference" && platform != "CPU")
                    props["Precision"] = precision;
                try {
                    LeastSquaresSolver solver(Platform::getPlatformByName(platform), props);
                    LeastSquaresOptions o;
                    o.method = LeastSquaresMethod::Cholesky;
                    o.normalEquationsGiven = true;
                    o.computeResidualNorms = false;
                    o.timePhases = true;
                    double best = 1e300;
                    LeastSquaresResult kept;
                    for (int r = 0; r < repeat + 1; r++) {  // the first run compiles the kernels
                        const double t0 = now();
                        LeastSquaresResult result = solver.solve(n, n, n, G, identity, o);
                        const double t = now() - t0;
                        if (r > 0 && t < best) {
                            best = t;
                            kept = result;
                        }
                    }
                    double error = 0, norm = 0;  // against LAPACK's upper triangle
                    for (int j = 0; j < n; j++)
                        for (int i = 0; i <= j; i++) {
                            const double d = kept.x[(size_t) i * n + j] - reference[i + (size_t) j * n];
                            error = max(error, fabs(d));
                            norm = max(norm, fabs(reference[i + (size_t) j * n]));
                        }
                    printf("  %s (%s): %.4f s (%.1fx LAPACK), max error %.1e relative;", platform.c_str(), precision.c_str(), best,
                           best / lapack, error / norm);
                    for (const auto& phase : kept.phaseSeconds)
                        printf(" %s %.4f", phase.first.c_str(), phase.second);
                    printf("\n");
                    // The same inverse through invertSymmetricPositiveDefinite (no right-hand sides to pass over).
                    double bestInverse = 1e300;
                    for (int r = 0; r < repeat; r++) {
                        const double t0 = now();
                        solver.invertSymmetricPositiveDefinite(n, G, o);
                        bestInverse = min(bestInverse, now() - t0);
                    }
                    printf("  %s (%s) invertSymmetricPositiveDefinite: %.4f s (%.1fx LAPACK)\n", platform.c_str(), precision.c_str(),
                           bestInverse, bestInverse / lapack);
                }
                catch (const exception& e) {
                    printf("  %s (%s): %s\n", platform.c_str(), precision.c_str(), e.what());
                }
                fflush(stdout);
            }
    }
}

int main(int argc, char** argv) {
    vector<int> sizes{1000, 2000, 3000, 4000, 5000};
    double rowsPerColumn = 2.0;
    int repeat = 1;
    vector<string> platformNames{"Reference"};
    vector<string> precisions{"double", "mixed", "single"}; // of the OpenCL/CUDA platforms
    string markdown;
    bool inverse = false;
    for (int i = 1; i < argc; i++) {
        string a = argv[i];
        auto next = [&]() -> string {
            if (i + 1 >= argc) {
                fprintf(stderr, "missing value after %s\n", a.c_str());
                exit(2);
            }
            return argv[++i];
        };
        if (a == "--sizes") {
            sizes.clear();
            for (const string& s : commaSeparated(next()))
                sizes.push_back(stoi(s));
        }
        else if (a == "--rows-per-column")
            rowsPerColumn = stod(next());
        else if (a == "--repeat")
            repeat = max(1, stoi(next()));
        else if (a == "--platforms")
            platformNames = commaSeparated(next());
        else if (a == "--precisions")
            precisions = commaSeparated(next());
        else if (a == "--markdown")
            markdown = next();
        else if (a == "--metric-inverse")
            inverse = true;
        else {
            fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    // OpenMM's platform plugins and this build's GPU plugins are loaded by file (no installed copy of openmm-dft
    // is picked up; see loadPluginsByFile), the Reference/CPU kernels linked in.
    QMMMTest::loadOpenMMPluginIfPresent("libOpenMMCPU.so");
    registerQMMMReferenceKernelFactories(); // after the CPU platform exists, so that it gets the kernels too
#ifdef OPENMMDFT_OPENCL_PLUGIN
    QMMMTest::loadPluginsByFile("libOpenMMOpenCL.so", OPENMMDFT_OPENCL_PLUGIN, "OPENMMDFT_OPENCL_PLUGIN_FILE");  // absent: no rows
#endif
    string cudaReason = "this benchmark was built without the CUDA toolkit";
#ifdef OPENMMDFT_BENCH_CUDA
    cudaReason = QMMMTest::loadPluginsByFile("libOpenMMCUDA.so", OPENMMDFT_CUDA_PLUGIN, "OPENMMDFT_CUDA_PLUGIN_FILE");
    if (cudaReason.empty())
        cudaReason = CuSolverBaseline::unavailableReason();
#endif
    if (find(platformNames.begin(), platformNames.end(), "CUDA") != platformNames.end() && !cudaReason.empty())
        printf("CUDA platform and cuSOLVER baselines unavailable: %s\n", cudaReason.c_str());
    if (inverse) {
        metricInverse(sizes, repeat, platformNames, precisions);
        return 0;
    }

    struct Config {
        string platform, precision;
        map<string, string> props;
    };
    vector<Config> configs;
    for (const string& name : platformNames) {
        if (name == "Reference" || name == "CPU")
            configs.push_back({name, "double", {}});
        else
            for (const string& prec : precisions)
                configs.push_back({name, prec, {{"Precision", prec}}});
    }
    vector<Row> rows;
    for (int n : sizes) {
        int m = (int) llround(rowsPerColumn * n);
        mt19937_64 rng(12345 + n);
        normal_distribution<double> g;
        vector<double> Arm((size_t) m * n), xTrue(n), b(m, 0.0);
        for (double& v : Arm)
            v = g(rng);
        for (double& v : xTrue)
            v = g(rng);
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int j = 0; j < n; j++)
                s += Arm[(size_t) i * n + j] * xTrue[j];
            b[i] = s;
        }
        vector<double> Acm((size_t) m * n);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                Acm[i + (size_t) j * m] = Arm[(size_t) i * n + j];
        printf("N = %d (A is %d x %d)\n", n, m, n);
        fflush(stdout);

        // ---- LAPACK baselines, one run each.
        auto runLapack = [&](const string& name, vector<double>& x) -> double {
            int info, one = 1;
            if (name == "dgels") {
                vector<double> a(Acm), bb(b);
                int lwork = -1;
                double q;
                dgels_("N", &m, &n, &one, a.data(), &m, bb.data(), &m, &q, &lwork, &info, 1);
                vector<double> work((size_t) q + 1);
                lwork = (int) work.size();
                double t0 = now();
                dgels_("N", &m, &n, &one, a.data(), &m, bb.data(), &m, work.data(), &lwork, &info, 1);
                double t = now() - t0;
                x.assign(bb.begin(), bb.begin() + n);
                return t;
            }
            vector<double> G((size_t) n * n), h(n);
            double dOne = 1.0, zero = 0.0;
            double t0 = now();
            dsyrk_("U", "T", &n, &m, &dOne, Acm.data(), &m, &zero, G.data(), &n, 1, 1);
            dgemv_("T", &m, &n, &dOne, Acm.data(), &m, b.data(), &one, &zero, h.data(), &one, 1);
            if (name == "dposv")
                dposv_("U", &n, &one, G.data(), &n, h.data(), &n, &info, 1);
            else {
                for (int j = 0; j < n; j++)
                    for (int i = j + 1; i < n; i++)
                        G[i + (size_t) j * n] = G[j + (size_t) i * n];
                vector<int> ipiv(n);
                dgesv_(&n, &one, G.data(), &n, ipiv.data(), h.data(), &n, &info);
            }
            double t = now() - t0;
            x = h;
            return t;
        };
        struct MethodSpec {
            string label;
            LeastSquaresMethod method;
            double tolerance;
            string baseline;
        };
        vector<MethodSpec> methods{{"QR", LeastSquaresMethod::QR, 0, "dgels"},
                                   {"Cholesky", LeastSquaresMethod::Cholesky, 0, "dposv"},
                                   {"Gauss", LeastSquaresMethod::Gauss, 0, "dgesv"},
                                   {"GaussSeidel(1e-3)", LeastSquaresMethod::GaussSeidel, 1e-3, "dposv"},
                                   {"GaussSeidel(1e-10)", LeastSquaresMethod::GaussSeidel, 1e-10, "dposv"}};
        vector<unique_ptr<LeastSquaresSolver>> solvers(configs.size());
        for (size_t c = 0; c < configs.size(); c++) {
            try {
                solvers[c].reset(new LeastSquaresSolver(Platform::getPlatformByName(configs[c].platform), configs[c].props));
            }
            catch (const exception& e) {
                printf("  %s (%s): not available: %s\n", configs[c].platform.c_str(), configs[c].precision.c_str(), e.what());
            }
        }
        // Rounds alternate baselines and our solves, so that load from elsewhere on the machine hits both alike;
        // each time reported is the best over the rounds.
        map<string, double> lapackTime, gpuTime;
        map<string, vector<double>> lapackX, gpuX;
        map<string, int> gpuRound;
        vector<vector<double>> best(configs.size(), vector<double>(methods.size(), 1e300));
        vector<vector<LeastSquaresResult>> results(configs.size(), vector<LeastSquaresResult>(methods.size()));
        vector<vector<string>> errors(configs.size(), vector<string>(methods.size()));
        for (int round = 0; round < repeat; round++) {
            for (string name : {"dgels", "dposv", "dgesv"}) {
                vector<double> x;
                double t = runLapack(name, x);
                if (round == 0 || t < lapackTime[name])
                    lapackTime[name] = t;
                lapackX[name] = x;
            }
#ifdef OPENMMDFT_BENCH_CUDA
            for (size_t c = 0; c < configs.size(); c++)
                if (configs[c].platform == "CUDA" && cudaReason.empty())
                    for (const string& method : {"QR", "Cholesky", "Gauss"}) {
                        const string name = gpuBaselineName(method, configs[c].precision);
                        if (gpuTime.count(name) && gpuRound[name] == round)
                            continue;
                        vector<double> x;
                        double t = CuSolverBaseline::solve(method, configs[c].precision == "single", m, n, Acm, b, x);
                        if (!gpuTime.count(name) || t < gpuTime[name])
                            gpuTime[name] = t;
                        gpuRound[name] = round;
                        gpuX[name] = x;
                    }
#endif
            for (size_t c = 0; c < configs.size(); c++) {
                if (!solvers[c])
                    continue;
                for (size_t k = 0; k < methods.size(); k++) {
                    if (!errors[c][k].empty())
                        continue;
                    if (configs[c].precision == "single" && methods[k].tolerance > 0 && methods[k].tolerance < 1e-6) {
                        errors[c][k] = "skipped: tolerance below single precision";
                        continue;
                    }
                    LeastSquaresOptions o;
                    o.method = methods[k].method;
                    if (methods[k].tolerance > 0)
                        o.tolerance = methods[k].tolerance;
                    o.maxIterations = 100000;
                    try {
                        double t0 = now();
                        results[c][k] = solvers[c]->solve(m, n, 1, Arm, b, o);
                        best[c][k] = min(best[c][k], now() - t0);
                    }
                    catch (const OpenMMException& e) {
                        errors[c][k] = string("error: ") + e.what();
                    }
                }
            }
        }
        double bnorm = sqrt(inner_product(b.begin(), b.end(), b.begin(), 0.0));
        for (auto& kv : lapackX) {
            Row row{n, "LAPACK " + kv.first, "OpenBLAS", "double", 0, 0, 0, lapackTime[kv.first], lapackTime[kv.first], kv.first, ""};
            measure(m, n, Arm, b, kv.second, xTrue, row.residual, row.relError);
            row.relResidual = row.residual / bnorm;
            rows.push_back(row);
            printf("  %-22s %-10s %-7s time %8.3f s  ||Ax-b|| %.3e  rel.err(x) %.2e\n", row.method.c_str(), "", "double", row.seconds,
                   row.residual, row.relError);
        }
        for (auto& kv : gpuX) {
            Row row{n, kv.first, "CUDA", kv.first.find(" S") != string::npos ? "single" : "double", 0, 0, 0, gpuTime[kv.first],
                    gpuTime[kv.first], kv.first, ""};
            measure(m, n, Arm, b, kv.second, xTrue, row.residual, row.relError);
            row.relResidual = row.residual / bnorm;
            rows.push_back(row);
            printf("  %-22s %-10s %-7s time %8.3f s  ||Ax-b|| %.3e  rel.err(x) %.2e\n", row.method.c_str(), "CUDA", row.precision.c_str(),
                   row.seconds, row.residual, row.relError);
        }
        for (size_t c = 0; c < configs.size(); c++) {
            if (!solvers[c])
                continue;
            for (size_t k = 0; k < methods.size(); k++) {
                const MethodSpec& ms = methods[k];
                Row row{n, ms.label, configs[c].platform, configs[c].precision, 0, 0, 0, best[c][k], lapackTime[ms.baseline], ms.baseline, ""};
                if (configs[c].platform == "CUDA" && cudaReason.empty()) {
                    // On the GPU the baseline is cuSOLVER in the same precision (Gauss-Seidel against the Cholesky solve).
                    const string method = (ms.method == LeastSquaresMethod::QR ? "QR" : ms.method == LeastSquaresMethod::Gauss ? "Gauss" : "Cholesky");
                    row.lapackName = gpuBaselineName(method, configs[c].precision);
                    row.lapackSeconds = gpuTime[row.lapackName];
                }
                if (!errors[c][k].empty()) {
                    row.seconds = -1;
                    row.note = errors[c][k];
                    printf("  %-22s %-10s %-7s %s\n", row.method.c_str(), row.platform.c_str(), row.precision.c_str(), row.note.c_str());
                }
                else {
                    measure(m, n, Arm, b, results[c][k].x, xTrue, row.residual, row.relError);
                    row.relResidual = row.residual / bnorm;
                    if (ms.method == LeastSquaresMethod::GaussSeidel)
                        row.note = to_string(results[c][k].iterations) + " sweeps";
                    printf("  %-22s %-10s %-7s time %8.3f s  ||Ax-b|| %.3e  rel.err(x) %.2e  ratio to %s %.2f %s\n", row.method.c_str(),
                           row.platform.c_str(), row.precision.c_str(), row.seconds, row.residual, row.relError, row.lapackName.c_str(),
                           row.seconds / row.lapackSeconds, row.note.c_str());
                }
                rows.push_back(row);
            }
        }
        fflush(stdout);
    }
    if (!markdown.empty()) {
        ofstream out(markdown);
        out << "| N (A is " << rowsPerColumn << "N x N) | method | platform | precision | ‖Ax−b‖ | ‖Ax−b‖/‖b‖ | ‖x−x_true‖/‖x_true‖ | time (s) | LAPACK baseline | baseline time (s) | ratio | note |\n";
        out << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
        char buf[1024];
        for (const Row& r : rows) {
            if (r.seconds < 0) {
                snprintf(buf, sizeof(buf), "| %d | %s | %s | %s | – | – | – | – | %s | %.3f | – | %s |\n", r.n, r.method.c_str(), r.platform.c_str(),
                         r.precision.c_str(), r.lapackName.c_str(), r.lapackSeconds, r.note.c_str());
            }
            else
                snprintf(buf, sizeof(buf), "| %d | %s | %s | %s | %.2e | %.2e | %.2e | %.3f | %s | %.3f | %.2f | %s |\n", r.n, r.method.c_str(),
                         r.platform.c_str(), r.precision.c_str(), r.residual, r.relResidual, r.relError, r.seconds, r.lapackName.c_str(),
                         r.lapackSeconds, r.seconds / r.lapackSeconds, r.note.c_str());
            out << buf;
        }
        printf("wrote %s\n", markdown.c_str());
    }
    return 0;
}
