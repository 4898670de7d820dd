#pragma once
// Plain input types of the QM engine. Everything inside the engine is in atomic
// units (bohr, hartree, elementary charge); conversion happens in the plugin.

namespace OpenMMDFT {
namespace QM {

/// A QM nucleus: atomic number and position in bohr.
struct QMAtom {
    int Z;
    double xyz[3];
};

/// An MM point charge (position in bohr, charge in e) felt by the QM region.
struct PointCharge {
    double xyz[3];
    double charge;
};

} // namespace QM
} // namespace OpenMMDFT
