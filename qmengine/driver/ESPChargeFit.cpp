#include "ESPChargeFit.h"
#include "openmmdft/internal/AtomicUnits.h"
#include "openmmdft/internal/ESPGrid.h"
#include "openmmdft/qm/Integrals.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <thread>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace OpenMMDFT::AtomicUnits;
using namespace std;

ESPChargeFit::ESPChargeFit(QMMMForce::ESPChargeMethod method, int threads) : method(method), threads(threads) {
}

/** Runs body(i) for i in [0, n) on up to `threads` threads, rethrowing the first exception. */
static void parallelFor(int n, int threads, const function<void(int)>& body) {
    threads = max(1, min(threads, n));
    vector<thread> workers;
    vector<exception_ptr> errors(threads);
    for (int t = 0; t < threads; t++)
        workers.emplace_back([&, t]() {
            try {
                for (int i = t; i < n; i += threads)
                    body(i);
            }
            catch (...) {
                errors[t] = current_exception();
            }
        });
    for (thread& w : workers)
        w.join();
    for (exception_ptr& e : errors)
        if (e)
            rethrow_exception(e);
}

vector<double> ESPChargeFit::compute(LeastSquaresSolver& solver, const vector<Vec3>& qmPositions, const vector<int>& atomicNumbers,
                                            int qmCharge, const QM::BasisSet& basis, const Eigen::MatrixXd& density) {
    const int n = qmPositions.size();
    if (n == 1)
        return vector<double>(1, (double) qmCharge);  // the constraint alone fixes it
    vector<Vec3> grid = (method == QMMMForce::CHELPG ? chelpgGrid(qmPositions, atomicNumbers)
                                                     : merzKollmanGrid(qmPositions, atomicNumbers));
    const int m = grid.size();
    if (m < n)
        throw OpenMMException("QMMMForce: the ESP grid has fewer points than the QM region has atoms");
    vector<QM::QMAtom> atoms(n);
    for (int k = 0; k < n; k++) {
        const Vec3 r = qmPositions[k] * BOHR_PER_NM;
        atoms[k] = {atomicNumbers[k], {r[0], r[1], r[2]}};
    }
    vector<double> A((size_t) m * n), V(m);
    // Points are independent, so threads take points and each integral call runs on one thread.
    auto potentialAt = [&](int p) {
        const Vec3 r = grid[p] * BOHR_PER_NM;
        const double point[3] = {r[0], r[1], r[2]};
        for (int k = 0; k < n; k++) {
            const Vec3 d = r - Vec3(atoms[k].xyz[0], atoms[k].xyz[1], atoms[k].xyz[2]);
            A[(size_t) p * n + k] = 1.0 / sqrt(d.dot(d));
        }
        V[p] = QM::electrostaticPotential(basis, density, atoms, point);
    };
    potentialAt(0);  // first call on this thread: any one-time initialization of the integral library happens here
    int workers = (threads > 0 ? threads : (int) max(1u, thread::hardware_concurrency()));
    parallelFor(m - 1, workers, [&](int i) { potentialAt(i + 1); });
    vector<double> C(n, 1.0), d(1, (double) qmCharge);
    LeastSquaresResult fit = solver.solveConstrained(m, n, 1, A, V, 1, C, d);
    return fit.x;
}
