#include "openmmdft/qm/Elements.h"
#include <openmm/OpenMMException.h>
#include <cctype>

namespace OpenMMDFT {
namespace QM {

namespace {
#include "element_data.inc"

const char* const kSymbols[kMaxElement + 1] = {"X",
    "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl", "Ar",
    "K", "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As", "Se", "Br", "Kr",
    "Rb", "Sr", "Y", "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In", "Sn", "Sb", "Te", "I", "Xe",
    "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho", "Er", "Tm", "Yb", "Lu",
    "Hf", "Ta", "W", "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl", "Pb", "Bi", "Po", "At", "Rn"};

std::string canonical(const std::string& s) {
    std::string out;
    for (char c : s)
        out += out.empty() ? (char) std::toupper((unsigned char) c) : (char) std::tolower((unsigned char) c);
    return out;
}
} // namespace

int atomicNumber(const std::string& symbol) {
    const std::string s = canonical(symbol);
    for (int z = 1; z <= kMaxElement; z++)
        if (s == kSymbols[z])
            return z;
    throw OpenMM::OpenMMException("QM: unknown element '" + symbol + "'");
}

std::string elementSymbol(int Z) {
    if (Z < 1 || Z > kMaxElement)
        throw OpenMM::OpenMMException("QM: unknown element with atomic number " + std::to_string(Z));
    return kSymbols[Z];
}

double braggRadius(int Z) {
    if (Z < 1 || Z > kMaxElement)
        throw OpenMM::OpenMMException("QM: unknown element with atomic number " + std::to_string(Z));
    return kBraggRadiusBohr[Z];
}

double treutlerXi(int Z) {
    if (Z < 1 || Z > kMaxElement)
        throw OpenMM::OpenMMException("QM: unknown element with atomic number " + std::to_string(Z));
    return kTreutlerXi[Z];
}

} // namespace QM
} // namespace OpenMMDFT
