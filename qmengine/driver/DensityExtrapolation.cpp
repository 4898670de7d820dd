#include "DensityExtrapolation.h"
#include "openmmdft/internal/DensityExtrapolationOrder.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <cmath>
#include <string>

using namespace OpenMM;
using namespace std;

namespace OpenMMDFT {

namespace {

/** Niklasson et al., J. Chem. Phys. 130, 214109 (2009), Table 1: kappa, alpha and c_0..c_K for K = 3..7. */
struct XLBOMDCoefficients {
    double kappa, alpha;
    vector<double> c;
};

const XLBOMDCoefficients& xlbomdCoefficients(int K) {
    static const XLBOMDCoefficients table[] = {
        {1.69, 0.08, {-2, 3, 0, -1}},
        {1.75, 0.057, {-3, 6, -2, -2, 1}},
        {1.82, 0.018, {-6, 14, -8, -3, 4, -1}},
        {1.84, 0.0055, {-14, 36, -27, -2, 12, -6, 1}},
        {1.86, 0.0016, {-36, 99, -88, 11, 32, -25, 8, -1}}};
    return table[K - 3];
}

} // namespace

DensityExtrapolation::DensityExtrapolation(Method method, int order) : method(method), order(order) {
    checkDensityExtrapolationOrder(method, order);
}

void DensityExtrapolation::clear() {
    current = Trajectory();
    setAside = Trajectory();
}

vector<double> DensityExtrapolation::aspcCoefficients(int n) {
    auto binomial = [](int top, int bottom) {
        double value = 1;
        for (int i = 1; i <= bottom; i++)
            value = value * (top - bottom + i) / i;
        return value;
    };
    vector<double> b(n);
    for (int i = 1; i <= n; i++)
        b[i - 1] = (i % 2 == 1 ? 1.0 : -1.0) * i * binomial(2 * n, n - i) / binomial(2 * n - 2, n - 1);
    return b;
}

vector<double> DensityExtrapolation::polynomialCoefficients(int n) {
    vector<double> b(n);
    double binomial = 1;  // C(n, i)
    for (int i = 1; i <= n; i++) {
        binomial = binomial * (n - i + 1) / i;
        b[i - 1] = (i % 2 == 1 ? 1.0 : -1.0) * binomial;
    }
    return b;
}

double DensityExtrapolation::largestMove(const vector<Vec3>& a, const vector<Vec3>& b) {
    if (a.size() != b.size())
        return INFINITY;
    double largest = 0;
    for (size_t i = 0; i < a.size(); i++) {
        const Vec3 d = a[i] - b[i];
        largest = max(largest, sqrt(d.dot(d)));
    }
    return largest;
}

bool DensityExtrapolation::Trajectory::atNewestPoint(const vector<Vec3>& qmPositions) const {
    return !history.empty() && largestMove(qmPositions, history.front().qmPositions) == 0;
}

bool DensityExtrapolation::resumesSetAside(const vector<Vec3>& qmPositions) const {
    // A one-entry history (the excursion itself) accepts any small move as its continuation; the longer trajectory
    // set aside wins when the positions continue it too.
    return !current.atNewestPoint(qmPositions) && setAside.continues(qmPositions) &&
           (!current.continues(qmPositions) || setAside.history.size() > current.history.size());
}

bool DensityExtrapolation::Trajectory::continues(const vector<Vec3>& qmPositions) const {
    if (history.empty())
        return false;
    const double move = largestMove(qmPositions, history.front().qmPositions);
    if (move == 0 || move > MAX_STEP_DISPLACEMENT)
        return false;
    if (history.size() >= 2) {
        // Along a trajectory the atoms continue their last step (x0 + (x0 - x1)) up to the acceleration term,
        // which is smaller than the step itself; positions set from elsewhere (setPositions, a checkpoint, a
        // QM force group evaluated at another interval) are not.
        const vector<Vec3>& x0 = history[0].qmPositions;
        const vector<Vec3>& x1 = history[1].qmPositions;
        vector<Vec3> predicted(x0.size());
        for (size_t i = 0; i < x0.size(); i++)
            predicted[i] = x0[i] * 2 - x1[i];
        // The deviation allowed: twice the last step, and four times its last change (near a turning point of a
        // vibration the acceleration term is as large as the step).
        double tolerance = max(MIN_PREDICTION_TOLERANCE, 2 * largestMove(x0, x1));
        if (history.size() >= 3) {
            const vector<Vec3>& x2 = history[2].qmPositions;
            vector<Vec3> step1(x0.size()), step2(x0.size());
            for (size_t i = 0; i < x0.size(); i++) {
                step1[i] = x0[i] - x1[i];
                step2[i] = x1[i] - x2[i];
            }
            tolerance = max(tolerance, 4 * largestMove(step1, step2));
        }
        if (largestMove(qmPositions, predicted) > tolerance)
            return false;
    }
    return true;
}

unique_ptr<QM::DensityGuess> DensityExtrapolation::guess(const vector<Vec3>& qmPositions, int& used) const {
    used = 0;
    // Back on the trajectory an evaluation off it set aside, the guess continues that one (record() takes it up).
    const Trajectory& t = resumesSetAside(qmPositions) ? setAside : current;
    if (t.history.empty())
        return nullptr;
    used = 1;
    const bool samePoint = t.atNewestPoint(qmPositions);
    const bool continuing = t.continues(qmPositions);
    unique_ptr<QM::DensityGuess> g(new QM::DensityGuess);
    if (method == PreviousDensity || !continuing)
        g->density = t.history.front().density;
    else if (method == XLBOMD) {
        used = t.auxiliary.size() - 1;  // the past auxiliary densities the propagation combined
        g->density = t.auxiliary.front();
    }
    else {
        const int n = min<int>(t.history.size(), order + 1);
        const vector<double> b = (method == Polynomial ? polynomialCoefficients(n) : aspcCoefficients(n));
        g->density = b[0] * t.history[0].density;
        for (int i = 1; i < n; i++)
            g->density += b[i] * t.history[i].density;
        used = n;
    }
    if (continuing || samePoint) {
        g->fockChanges = t.subspaceFocks;
        g->errorChanges = t.subspaceErrors;
        g->coulombChanges = t.subspaceCoulombs;
        g->lowdinOrbitals = t.lowdinOrbitals;
        g->errorChangeGram = t.subspaceErrorGram;
    }
    return g;
}

void DensityExtrapolation::record(const vector<Vec3>& qmPositions, const Eigen::MatrixXd& density,
                                  vector<QM::SharedPair> fockChanges, vector<QM::SharedPair> errorChanges,
                                  vector<QM::SharedPair> coulombChanges, QM::SharedMatrix lowdinOrbitals,
                                  QM::SharedMatrix errorChangeGram) {
    if (resumesSetAside(qmPositions))
        std::swap(current, setAside);  // back on the trajectory; the excursion is set aside in its place
    const bool samePoint = current.atNewestPoint(qmPositions);
    if (!samePoint && !current.continues(qmPositions)) {
        // Off the trajectory: keep it aside (a barostat's trial may be rejected), and start a new one here.
        if (!current.history.empty())
            setAside = std::move(current);
        current = Trajectory();
    }
    Trajectory& t = current;
    t.subspaceFocks = std::move(fockChanges);
    t.subspaceErrors = std::move(errorChanges);
    t.subspaceCoulombs = std::move(coulombChanges);
    t.lowdinOrbitals = std::move(lowdinOrbitals);
    t.subspaceErrorGram = std::move(errorChangeGram);
    if (samePoint) {
        // Evaluated again at the same positions (getState between steps, a multiple time step integrator's
        // next step): nothing new.
        t.history.front().density = density;
        return;
    }
    t.history.push_front({qmPositions, density});
    while ((int) t.history.size() > (method == ASPC || method == Polynomial ? order + 1 : 3))  // three positions to recognise the trajectory
        t.history.pop_back();
    if (method == XLBOMD) {
        // auxiliary[0] was this step's guess P(t); start from D when the history (re)starts.
        if (t.auxiliary.empty())
            t.auxiliary.assign(order + 1, density);
        const XLBOMDCoefficients& x = xlbomdCoefficients(order);
        Eigen::MatrixXd next = 2 * t.auxiliary[0] - t.auxiliary[1] + x.kappa * (density - t.auxiliary[0]);
        for (int k = 0; k <= order; k++)
            next += x.alpha * x.c[k] * t.auxiliary[k];
        t.auxiliary.push_front(next);
        while ((int) t.auxiliary.size() > order + 1)
            t.auxiliary.pop_back();
    }
}

} // namespace OpenMMDFT
