#pragma once
// Gaussian basis sets: definitions as read from NWChem-format files, and a basis
// placed on a molecule (shells with normalized contraction coefficients).
#include "openmmdft/qm/Types.h"
#include <array>
#include <istream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace OpenMMDFT {
namespace QM {

constexpr int kMaxAngularMomentum = 3; // s, p, d, f

/// One contracted shell as written in the file (coefficients of unnormalized primitives).
struct ShellDefinition {
    int l;
    std::vector<double> exponents;
    std::vector<double> coefficients;
};

struct BasisDefinition {
    std::string name;
    bool sphericalByDefault = true;                      ///< from the file's SPHERICAL/CARTESIAN keyword
    std::map<int, std::vector<ShellDefinition>> elements; ///< by atomic number
    std::set<int> elementsWithECP;                        ///< effective core potentials are not supported
};

/// Parse the first BASIS block of an NWChem-format text. Throws OpenMMException on malformed input.
BasisDefinition parseNWChemBasis(std::istream& in, const std::string& sourceName);

/// Folder holding basis/*.nw: the given one, else $OPENMMDFT_QM_DATA_DIR, else the source tree's data folder.
std::string resolveDataDirectory(const std::string& configured);

/// Load a shipped basis by name ("6-31G*", "def2-SVP", "DZVP", "def2-universal-jfit",
/// "DGauss-A1-DFT-Cfit", ...) or, if nameOrPath names an existing file, that file.
BasisDefinition loadBasisDefinition(const std::string& nameOrPath, const std::string& dataDirectory);

/// A shell placed on an atom. Coefficients include the primitive normalization of the
/// x^l component so that every contracted x^l (and every pure) function has unit norm;
/// all cartesian components of a shell share these coefficients (libint's convention).
struct Shell {
    int l = 0;
    bool pure = false;
    int atom = 0;
    std::array<double, 3> center{};
    std::vector<double> exponents;
    std::vector<double> coefficients;
    int cartesianSize() const { return (l + 1) * (l + 2) / 2; }
    int size() const { return pure ? 2 * l + 1 : cartesianSize(); }
    double minExponent() const;
};

class BasisSet {
public:
    BasisSet() = default;
    /// Places the basis on the atoms; pure = spherical shells for l >= 2 (l <= 1 identical either way).
    /// Throws OpenMMException if an element is missing from the basis or needs an ECP, or a
    /// shell exceeds maxL (f for orbital bases; auxiliary bases may go higher).
    BasisSet(const BasisDefinition& definition, const std::vector<QMAtom>& atoms, bool pure,
             int maxL = kMaxAngularMomentum);
    const std::vector<Shell>& shells() const { return shells_; }
    int numShells() const { return (int) shells_.size(); }
    int size() const { return size_; }             ///< number of basis functions
    int offset(int shell) const { return offsets_[shell]; }
    /// Offsets and size in the all-cartesian basis in which integrals are computed.
    int cartesianOffset(int shell) const { return cartOffsets_[shell]; }
    int cartesianSize() const { return cartSize_; }
    int maxL() const { return maxL_; }
    int maxPrimitives() const { return maxPrimitives_; }
    bool pure() const { return pure_; }
    const std::string& name() const { return name_; }
    /// Index of the first shell of each atom, plus numShells() at the end.
    const std::vector<int>& atomShellOffsets() const { return atomShellOffsets_; }
private:
    std::vector<Shell> shells_;
    std::vector<int> offsets_, cartOffsets_, atomShellOffsets_;
    int size_ = 0, cartSize_ = 0, maxL_ = 0, maxPrimitives_ = 0;
    bool pure_ = false;
    std::string name_;
};

/// Scale raw contraction coefficients so that the contracted x^l Gaussian has unit norm.
std::vector<double> normalizedCoefficients(int l, const std::vector<double>& exponents,
                                           const std::vector<double>& coefficients);

} // namespace QM
} // namespace OpenMMDFT
