#pragma once
// Spin-unpolarized LDA: Slater exchange plus VWN correlation (VWN5 or the RPA fit),
// Vosko, Wilk, Nusair, Can. J. Phys. 58, 1200 (1980).
#include "openmmdft/qm/Settings.h"

namespace OpenMMDFT {
namespace QM {

/// Energy per electron eps(rho) and potential v = d(rho eps)/d rho.
struct LDAPoint {
    double eps;
    double v;
};

LDAPoint slaterExchange(double rho);
LDAPoint vwn5Correlation(double rho);
LDAPoint vwnRPACorrelation(double rho);
/// Exchange plus correlation; rho below 1e-14 gives zero (as density thresholds in Libxc do).
LDAPoint ldaExchangeCorrelation(Functional functional, double rho);

} // namespace QM
} // namespace OpenMMDFT
