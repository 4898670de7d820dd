#include "openmmdft/qm/LDA.h"
#include <cmath>

namespace OpenMMDFT {
namespace QM {

namespace {
// Paramagnetic VWN fit: eps_c(x), x = sqrt(rs), with X(x) = x^2 + b x + c, Q = sqrt(4c - b^2):
// eps = A [ ln(x^2/X) + 2b/Q atan(Q/(2x+b)) - b x0/X(x0) ( ln((x-x0)^2/X) + 2(b+2x0)/Q atan(Q/(2x+b)) ) ]
struct VWNParameters {
    double A, x0, b, c;
};
constexpr VWNParameters kVWN5 = {0.0310907, -0.10498, 3.72744, 12.9352};
constexpr VWNParameters kVWNRPA = {0.0310907, -0.409286, 13.0720, 42.7198};

LDAPoint vwn(double rho, const VWNParameters& p) {
    const double rs = std::cbrt(3 / (4 * M_PI * rho));
    const double x = std::sqrt(rs);
    const double X = x * x + p.b * x + p.c;
    const double X0 = p.x0 * p.x0 + p.b * p.x0 + p.c;
    const double Q = std::sqrt(4 * p.c - p.b * p.b);
    const double t = 2 * x + p.b;
    const double at = std::atan(Q / t);
    const double k = p.b * p.x0 / X0;
    const double eps = p.A * (std::log(x * x / X) + 2 * p.b / Q * at -
                              k * (std::log((x - p.x0) * (x - p.x0) / X) + 2 * (p.b + 2 * p.x0) / Q * at));
    // d eps/dx; d/dx atan(Q/(2x+b)) = -2Q/(t^2+Q^2).
    const double den = t * t + Q * Q;
    const double deps = p.A * (2 / x - t / X - 4 * p.b / den -
                               k * (2 / (x - p.x0) - t / X - 4 * (p.b + 2 * p.x0) / den));
    // v = eps - rs/3 d eps/d rs = eps - x/6 d eps/dx.
    return {eps, eps - x / 6 * deps};
}
} // namespace

LDAPoint slaterExchange(double rho) {
    const double c = std::cbrt(3 / M_PI);
    const double r13 = std::cbrt(rho);
    return {-0.75 * c * r13, -c * r13};
}

LDAPoint vwn5Correlation(double rho) {
    return vwn(rho, kVWN5);
}

LDAPoint vwnRPACorrelation(double rho) {
    return vwn(rho, kVWNRPA);
}

LDAPoint ldaExchangeCorrelation(Functional functional, double rho) {
    if (!(rho > 1e-14))
        return {0.0, 0.0};
    const LDAPoint x = slaterExchange(rho);
    const LDAPoint c = functional == Functional::SVWN5 ? vwn5Correlation(rho) : vwnRPACorrelation(rho);
    return {x.eps + c.eps, x.v + c.v};
}

} // namespace QM
} // namespace OpenMMDFT
