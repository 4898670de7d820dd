// The Boys function (BoysFunction.h).
#include "BoysFunction.h"
#include <cmath>
#include <vector>

namespace OpenMMDFT {
namespace QM {

namespace {

constexpr double kTableStep = kBoysTableStep;
constexpr double kTableEnd = kBoysTableEnd;
constexpr int kTaylorTerms = kBoysTaylorTerms;
constexpr int kTableOrders = kBoysTableOrders;

/** F_m(T_k) for T_k = k * kTableStep up to kTableEnd, m < kTableOrders, from the series
 * F_m(T) = exp(-T) sum_i (2T)^i / ((2m+1)(2m+3)...(2m+2i+1)), whose terms are all positive. */
struct BoysTable {
    int points;
    std::vector<double> values;  // [k * kTableOrders + m]
    BoysTable() : points((int) std::lround(kTableEnd / kTableStep) + 1), values((size_t) points * kTableOrders) {
        for (int k = 0; k < points; k++) {
            const double T = k * kTableStep;
            for (int m = 0; m < kTableOrders; m++) {
                double term = 1.0 / (2 * m + 1), sum = term;
                for (int i = 1; term > 1e-17 * sum || i < T; i++) {
                    term *= 2 * T / (2 * m + 2 * i + 1);
                    sum += term;
                }
                values[(size_t) k * kTableOrders + m] = std::exp(-T) * sum;
            }
        }
    }
};

const BoysTable& table() {
    static const BoysTable boys;
    return boys;
}

} // namespace

const std::vector<double>& boysTableValues() {
    return table().values;
}

void boysFunction(int mMax, double T, double* F) {
    if (T < kTableEnd) {
        const BoysTable& boys = table();
        const int k = (int) (T / kTableStep + 0.5);
        const double* Fk = &boys.values[(size_t) k * kTableOrders];
        // dF_m/dT = -F_(m+1): F_m(T) = sum_j F_(m+j)(T_k) (T_k - T)^j / j!
        const double delta = k * kTableStep - T;
        double power = 1, top = 0;
        for (int j = 0; j < kTaylorTerms; j++) {
            top += Fk[mMax + j] * power;
            power *= delta / (j + 1);
        }
        F[mMax] = top;
        const double e = std::exp(-T);
        for (int m = mMax - 1; m >= 0; m--)
            F[m] = (2 * T * F[m + 1] + e) / (2 * m + 1);
        return;
    }
    // Beyond T = 100, exp(-T) changes F_m by less than 1e-25 relative for every m <= kMaxBoysOrder (the terms
    // it drops are exp(-T) T^(m - 1/2) / Gamma(m + 1/2) of F_m): most far charges skip the exponential.
    const double e = (T < 100 ? std::exp(-T) : 0.0);
    F[0] = 0.5 * std::sqrt(M_PI / T);
    for (int m = 0; m < mMax; m++)
        F[m + 1] = ((2 * m + 1) * F[m] - e) / (2 * T);
}

void boysFunctionBlock(int mMax, const double* T, double* F) {
    constexpr int B = kBoysBlock;
    bool allFar = true;
    for (int lane = 0; lane < B; lane++)
        allFar = allFar && T[lane] >= kTableEnd;
    if (!allFar) {
        double lane[kMaxBoysOrder + 1];
        for (int l = 0; l < B; l++) {
            boysFunction(mMax, T[l], lane);
            for (int m = 0; m <= mMax; m++)
                F[m * B + l] = lane[m];
        }
        return;
    }
    // The same formulas as boysFunction's far branch.
    double e[B], half[B];
    for (int l = 0; l < B; l++) {
        e[l] = (T[l] < 100 ? std::exp(-T[l]) : 0.0);
        half[l] = 0.5 / T[l];
        F[l] = 0.5 * std::sqrt(M_PI / T[l]);
    }
    for (int m = 0; m < mMax; m++)
        for (int l = 0; l < B; l++)
            F[(m + 1) * B + l] = ((2 * m + 1) * F[m * B + l] - e[l]) * half[l];
}

} // namespace QM
} // namespace OpenMMDFT
