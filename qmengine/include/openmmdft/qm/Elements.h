#pragma once
// Element symbols and per-element grid parameters (H..Rn).
#include <string>

namespace OpenMMDFT {
namespace QM {

constexpr int kMaxElement = 86;

/// Atomic number of a symbol (case-insensitive, "O", "cl"); throws OpenMMException if unknown.
int atomicNumber(const std::string& symbol);
/// Symbol of an atomic number; throws OpenMMException if outside 1..kMaxElement.
std::string elementSymbol(int Z);
/// Bragg-Slater radius in bohr (as tabulated by PySCF, used by Becke radial grid and size adjustment).
double braggRadius(int Z);
/// Treutler-Ahlrichs element-specific radial scale xi (JCP 102, 346 (1995), Table I; 1 if unknown).
double treutlerXi(int Z);

} // namespace QM
} // namespace OpenMMDFT
