#include "DensityExtrapolation.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <cmath>
#include <string>

using namespace OpenMM;
using namespace std;

namespace OpenMMDFT {

DensityExtrapolation::DensityExtrapolation(Method method, int order) : method(method), order(order) {
    if (order < 1 || order > 6)
        throw OpenMMException("QMMMForce: the density extrapolation order must be between 1 and 6, not " + to_string(order));
}

void DensityExtrapolation::clear() {
    history.clear();
    historyMMParticles.clear();
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

bool DensityExtrapolation::continues(const vector<Vec3>& qmPositions, const vector<int>& mmParticles) const {
    if (history.empty() || mmParticles != historyMMParticles)
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

unique_ptr<QM::DensityGuess> DensityExtrapolation::guess(const vector<Vec3>& qmPositions, const vector<int>& mmParticles,
                                                          int& used) const {
    used = 0;
    if (history.empty())
        return nullptr;
    used = 1;
    if (method == PreviousDensity || !continues(qmPositions, mmParticles))
        return unique_ptr<QM::DensityGuess>(new QM::DensityGuess{history.front().density});
    const int n = min<int>(history.size(), order + 1);
    const vector<double> b = aspcCoefficients(n);
    Eigen::MatrixXd density = b[0] * history[0].density;
    for (int i = 1; i < n; i++)
        density += b[i] * history[i].density;
    used = n;
    return unique_ptr<QM::DensityGuess>(new QM::DensityGuess{density});
}

void DensityExtrapolation::record(const vector<Vec3>& qmPositions, const vector<int>& mmParticles, const Eigen::MatrixXd& density) {
    const bool samePoint = !history.empty() && mmParticles == historyMMParticles &&
                           largestMove(qmPositions, history.front().qmPositions) == 0;
    if (samePoint) {
        // Evaluated again at the same positions (getState between steps, a multiple time step integrator's
        // next step): nothing new.
        history.front().density = density;
        return;
    }
    if (!continues(qmPositions, mmParticles))
        clear();
    history.push_front({qmPositions, density});
    historyMMParticles = mmParticles;
    while ((int) history.size() > (method == PreviousDensity ? 1 : order + 1))
        history.pop_back();
}

} // namespace OpenMMDFT
