// Our Slater + VWN against Libxc (LDA_X = 1, LDA_C_VWN = 7, LDA_C_VWN_RPA = 8).
#include "openmmdft/qm/LDA.h"
#include <gtest/gtest.h>
#include <cmath>
#ifdef QMENGINE_HAVE_LIBXC
#include <xc.h>
#endif

using namespace OpenMMDFT::QM;

namespace {
std::vector<double> densities() {
    std::vector<double> r;
    for (double x = -10; x <= 4; x += 0.25)
        r.push_back(std::pow(10.0, x));
    return r;
}
} // namespace

TEST(LDA, PotentialIsDerivativeOfEnergyDensity) {
    for (double rho : densities()) {
        if (rho < 1e-8)
            continue;
        for (int f = 0; f < 2; f++) {
            const Functional fn = f ? Functional::SVWN5 : Functional::SVWN_RPA;
            const double h = rho * 1e-4;
            const double ep = (rho + h) * ldaExchangeCorrelation(fn, rho + h).eps;
            const double em = (rho - h) * ldaExchangeCorrelation(fn, rho - h).eps;
            EXPECT_NEAR(ldaExchangeCorrelation(fn, rho).v, (ep - em) / (2 * h), 1e-7 * std::abs((ep - em) / (2 * h)));
        }
    }
}

#ifdef QMENGINE_HAVE_LIBXC
TEST(LDA, MatchesLibxc) {
    const int ids[3] = {XC_LDA_X, XC_LDA_C_VWN, XC_LDA_C_VWN_RPA};
    LDAPoint (*ours[3])(double) = {slaterExchange, vwn5Correlation, vwnRPACorrelation};
    const std::vector<double> rho = densities();
    for (int k = 0; k < 3; k++) {
        xc_func_type f;
        ASSERT_EQ(xc_func_init(&f, ids[k], XC_UNPOLARIZED), 0);
        xc_func_set_dens_threshold(&f, 1e-30);
        std::vector<double> eps(rho.size()), v(rho.size());
        xc_lda_exc_vxc(&f, rho.size(), rho.data(), eps.data(), v.data());
        for (size_t i = 0; i < rho.size(); i++) {
            const LDAPoint p = ours[k](rho[i]);
            EXPECT_NEAR(p.eps, eps[i], 1e-12 * std::abs(eps[i]) + 1e-15) << "functional " << ids[k] << " rho " << rho[i];
            EXPECT_NEAR(p.v, v[i], 1e-12 * std::abs(v[i]) + 1e-15) << "functional " << ids[k] << " rho " << rho[i];
        }
        xc_func_end(&f);
    }
}
#else
TEST(LDA, DISABLED_MatchesLibxc) {}
#endif
