#ifndef OPENMMDFT_ATOMICUNITS_H_
#define OPENMMDFT_ATOMICUNITS_H_

/* The one place where OpenMM units (nm, kJ/mol) meet the atomic units of the QM engine
 * (bohr, hartree). CODATA 2018 values, as OpenMM 8 uses for its own constants. */

namespace OpenMMDFT {
namespace AtomicUnits {

/** 1 bohr in nm. */
constexpr double NM_PER_BOHR = 0.0529177210903;
constexpr double BOHR_PER_NM = 1.0 / NM_PER_BOHR;
/** 1 angstrom in nm (tabulated radii, e.g. of the ESP grids, are published in angstrom). */
constexpr double NM_PER_ANGSTROM = 0.1;
/** 1 hartree in kJ/mol (E_h * N_A). */
constexpr double KJ_PER_MOL_PER_HARTREE = 2625.4996394798254;
/** Forces: hartree/bohr in kJ/mol/nm. */
constexpr double KJ_PER_MOL_NM_PER_HARTREE_BOHR = KJ_PER_MOL_PER_HARTREE * BOHR_PER_NM;

} // namespace AtomicUnits
} // namespace OpenMMDFT

#endif
