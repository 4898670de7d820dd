#ifndef OPENMMDFT_ESPGRID_H_
#define OPENMMDFT_ESPGRID_H_

/* Points where the electrostatic potential (ESP) of the QM region is sampled for ESP charges.
 * Platform-neutral, no QM-engine dependency.
 *
 * Units: OpenMM's. Positions in and points out are in nm; the published parameters (radii,
 * spacing, margin in angstrom; point density per angstrom^2) are converted once, through
 * AtomicUnits::NM_PER_ANGSTROM. The caller converts the points to bohr for the engine.
 *
 * CHELPG (Breneman & Wiberg, J. Comput. Chem. 11, 361 (1990)): a cubic grid of spacing 0.3 A
 * over the molecule's bounding box enlarged by 2.8 A on every side (centred on the box); a
 * point is kept if it lies outside every atom's CHELPG radius and within 2.8 A of at least one
 * nucleus. Radii (A): Breneman-Wiberg's H-He 1.45, Li-C 1.5, N-Ne 1.7; Na-Ar 2.0 (the value
 * Gaussian uses beyond the paper's elements).
 *
 * Merz-Kollman (Singh & Kollman, J. Comput. Chem. 5, 129 (1984); Besler, Merz & Kollman 1990):
 * shells at 1.4, 1.6, 1.8, 2.0 x the MK radius of every atom, round(4 pi R^2 * density) points
 * per atom and shell (density 1 point/A^2) on a Fibonacci (golden-angle) spiral, a point being
 * dropped when it lies inside another atom's sphere of the same scale. Radii (A, the GAMESS/RESP
 * table): H 1.20, He 1.20, Li 1.37, Be 1.45, B 1.45, C 1.50, N 1.50, O 1.40, F 1.35, Ne 1.30,
 * Na 1.57, Mg 1.36, Al 1.24, Si 1.17, P 1.80, S 1.75, Cl 1.70.
 *
 * Bad input raises an OpenMMException, never an empty or partial grid: no atoms, a position
 * count different from the atomic-number count, a non-finite position (naming the atom), an
 * element without a radius (naming the atom and its atomic number), a spacing, margin, shell
 * scale or density that is not finite and positive, and a grid of more than 1e8 points
 * (positions not in nm, or a vanishing spacing).
 */

#include "openmm/Vec3.h"
#include "openmmdft/internal/windowsExportDFT.h"
#include <vector>

namespace OpenMMDFT {

/** The CHELPG radius of an element, nm. */
OPENMM_EXPORT_DFT double chelpgRadius(int atomicNumber);
/** The Merz-Kollman radius of an element, nm. */
OPENMM_EXPORT_DFT double merzKollmanRadius(int atomicNumber);

/** CHELPG grid points (nm); spacing and margin in nm (defaults 0.3 A and 2.8 A). */
OPENMM_EXPORT_DFT std::vector<OpenMM::Vec3> chelpgGrid(const std::vector<OpenMM::Vec3>& positions,
                                                      const std::vector<int>& atomicNumbers,
                                                      double spacing = 0.03, double margin = 0.28);

/** Merz-Kollman points (nm): shells at these multiples of the MK radii, density in points/nm^2 (default 1/A^2). */
OPENMM_EXPORT_DFT std::vector<OpenMM::Vec3> merzKollmanGrid(const std::vector<OpenMM::Vec3>& positions,
                                                           const std::vector<int>& atomicNumbers,
                                                           const std::vector<double>& scales = {1.4, 1.6, 1.8, 2.0},
                                                           double density = 100.0);

} // namespace OpenMMDFT

#endif
