// Placing a basis definition on atoms, with normalization of contractions.
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Elements.h"
#include <openmm/OpenMMException.h>
#include <algorithm>
#include <cmath>
#include <sstream>

namespace OpenMMDFT {
namespace QM {

namespace {
double doubleFactorial(int n) { // n!! with (-1)!! = 1
    double r = 1;
    for (int k = n; k > 1; k -= 2)
        r *= k;
    return r;
}

std::string shellName(const BasisDefinition& def, const std::string& symbol, size_t index, int l) {
    return "QM: basis set '" + def.name + "', shell " + std::to_string(index + 1) + " of " + symbol +
           " (l = " + std::to_string(l) + "): ";
}

std::string text(double x) {
    std::ostringstream s;
    s << x;
    return s.str();
}

// Definitions built in code skip the file parser's checks; a bad primitive would otherwise surface
// far away, as a zero norm or a singular overlap, without saying which shell caused it.
void checkShellDefinition(const BasisDefinition& def, const std::string& symbol, size_t index, const ShellDefinition& sd) {
    const std::string where = shellName(def, symbol, index, sd.l);
    if (sd.l < 0)
        throw OpenMM::OpenMMException(where + "negative angular momentum");
    if (sd.exponents.empty() || sd.exponents.size() != sd.coefficients.size())
        throw OpenMM::OpenMMException(where + "needs one coefficient per exponent and at least one primitive");
    for (double a : sd.exponents)
        if (!(a > 0) || !std::isfinite(a))
            throw OpenMM::OpenMMException(where + "exponent " + text(a) + " is not a finite positive number");
    for (double c : sd.coefficients)
        if (!std::isfinite(c))
            throw OpenMM::OpenMMException(where + "coefficient " + text(c) + " is not a finite number");
}

std::vector<double> normalizedShell(const BasisDefinition& def, const std::string& symbol, size_t index,
                                    const ShellDefinition& sd) {
    checkShellDefinition(def, symbol, index, sd);
    try {
        return normalizedCoefficients(sd.l, sd.exponents, sd.coefficients);
    }
    catch (const OpenMM::OpenMMException& e) {
        std::string reason = e.what();
        if (reason.rfind("QM: ", 0) == 0)
            reason.erase(0, 4);
        throw OpenMM::OpenMMException(shellName(def, symbol, index, sd.l) + reason);
    }
}
} // namespace

std::vector<double> normalizedCoefficients(int l, const std::vector<double>& exps, const std::vector<double>& coefs) {
    // Primitive x^l exp(-a r^2) has norm^2 = (2l-1)!! (pi/2a)^{3/2} / (4a)^l.
    const size_t n = exps.size();
    std::vector<double> c(n);
    for (size_t i = 0; i < n; i++) {
        const double a = exps[i];
        c[i] = coefs[i] * std::pow(2 * a / M_PI, 0.75) * std::pow(4 * a, 0.5 * l) / std::sqrt(doubleFactorial(2 * l - 1));
    }
    // Self-overlap of the contraction of these (now unit) primitives.
    double norm = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            const double p = exps[i] + exps[j];
            norm += c[i] * c[j] * doubleFactorial(2 * l - 1) * std::pow(M_PI / p, 1.5) / std::pow(2 * p, l);
        }
    // Zero when all coefficients vanish; inf or nan when exponents or coefficients are so extreme
    // that the overlap over- or underflows. Either way the shell cannot be a unit function.
    if (!(norm > 0) || !std::isfinite(norm))
        throw OpenMM::OpenMMException("QM: a basis shell with l = " + std::to_string(l) +
                                      " cannot be normalized (its self-overlap is " + std::to_string(norm) + ")");
    for (double& x : c)
        x /= std::sqrt(norm);
    return c;
}

double Shell::minExponent() const {
    return *std::min_element(exponents.begin(), exponents.end());
}

BasisSet::BasisSet(const BasisDefinition& def, const std::vector<QMAtom>& atoms, bool pure, int maxL) : pure_(pure), name_(def.name) {
    for (size_t a = 0; a < atoms.size(); a++) {
        atomShellOffsets_.push_back((int) shells_.size());
        const int Z = atoms[a].Z;
        const std::string symbol = elementSymbol(Z);
        if (def.elementsWithECP.count(Z))
            throw OpenMM::OpenMMException("QM: basis set '" + def.name + "' needs an effective core potential for " +
                                          symbol + ", which is not supported");
        auto it = def.elements.find(Z);
        if (it == def.elements.end())
            throw OpenMM::OpenMMException("QM: basis set '" + def.name + "' has no functions for element " + symbol);
        for (size_t index = 0; index < it->second.size(); index++) {
            const ShellDefinition& sd = it->second[index];
            if (sd.l > maxL)
                throw OpenMM::OpenMMException("QM: basis set '" + def.name + "' has a shell with l = " +
                                              std::to_string(sd.l) + " for " + symbol + "; the largest supported is " + std::to_string(maxL));
            Shell s;
            s.l = sd.l;
            s.pure = pure && sd.l >= 2;
            s.atom = (int) a;
            s.center = {atoms[a].xyz[0], atoms[a].xyz[1], atoms[a].xyz[2]};
            s.exponents = sd.exponents;
            s.coefficients = normalizedShell(def, symbol, index, sd);
            offsets_.push_back(size_);
            size_ += s.size();
            cartOffsets_.push_back(cartSize_);
            cartSize_ += s.cartesianSize();
            maxL_ = std::max(maxL_, s.l);
            maxPrimitives_ = std::max(maxPrimitives_, (int) s.exponents.size());
            shells_.push_back(std::move(s));
        }
    }
    atomShellOffsets_.push_back((int) shells_.size());
}

} // namespace QM
} // namespace OpenMMDFT
