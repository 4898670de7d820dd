#ifndef OPENMMDFT_EWALDLONGRANGE_H_
#define OPENMMDFT_EWALDLONGRANGE_H_

#include "openmm/Vec3.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <complex>
#include <vector>

namespace OpenMMDFT {

/**
 * QM/MM-Ewald: the part of the periodic electrostatics of a QM region that its QM Hamiltonian's explicit point
 * charges leave out, at the level of the QM atoms' Mulliken charges q_A (the scheme of Amber's QM/MM-Ewald, Nam,
 * Gao & York, J. Chem. Theory Comput. 1, 2 (2005)):
 *
 *     E = sum_A q_A [phi(R_A) - sum_c s_c q_c / |R_A - r_c|] + 1/2 sum_AB q_A q_B K_AB,
 *
 * phi the Ewald potential (Ewald, Ann. Phys. 369, 253 (1921)) of every periodic MM charge (all images, with a
 * neutralizing background), the sum over c the explicit charges (scaled by the embedding switch s_c) the QM density
 * already meets exactly, and K_AB the Ewald interaction of the QM charges with each other's images (and their
 * own), without the minimum-image pair the QM energy holds. Real space: erfc(alpha r)/r within half the smallest
 * box width, force-shifted to zero there (energy and force continuous as charges cross it);
 * reciprocal space: a direct sum over the wave vectors with exp(-k^2 / 4 alpha^2) above the tolerance; alpha from
 * that real-space cutoff and the tolerance as OpenMM's NonbondedForce chooses it. Atomic units (bohr, e, hartree).
 */
class EwaldLongRange {
public:
    struct Charge {
        OpenMM::Vec3 position;
        double charge;
    };
    /** The most wave vectors a sum may use (a typical box and tolerance needs 10^3-10^4). */
    static constexpr double MAX_WAVE_VECTORS = 1e6;
    /** box: the three periodic box vectors (OpenMM's reduced form), bohr. Throws OpenMMException when the box and
     *  tolerance would need more than MAX_WAVE_VECTORS wave vectors. */
    EwaldLongRange(const OpenMM::Vec3* box, double tolerance);
    /**
     * The Mulliken-level term for QM atoms at qm among the periodic charges all (each once, any image), with the
     * explicit charges (as placed, scaled) taken out. Keeps what gradient() needs.
     */
    QM::MullikenElectrostatics terms(const std::vector<OpenMM::Vec3>& qm, const std::vector<Charge>& all,
                                     const std::vector<Charge>& explicitCharges);
    /**
     * For the Mulliken charges q of the converged density (q held fixed): dE/dR (hartree/bohr) added to qmGradient
     * (one per QM atom), allGradient (per periodic charge) and explicitGradient (per explicit charge), and for each
     * explicit charge c, dE/d(s_c q_c) = -sum_A q_A / |R_A - r_c| (for the embedding switch's force).
     */
    void gradient(const Eigen::VectorXd& q, std::vector<OpenMM::Vec3>& qmGradient, std::vector<OpenMM::Vec3>& allGradient,
                  std::vector<OpenMM::Vec3>& explicitGradient, std::vector<double>& explicitPotential) const;
    double alpha() const {
        return alpha_;
    }
    int numWaveVectors() const {
        return (int) waves.size();
    }
private:
    /** exp(i k.r) for every wave vector, by three tables of exp(i 2 pi n f_d), f_d = r . b_d. */
    void phases(const OpenMM::Vec3& r, std::vector<std::complex<double> >& out) const;
    OpenMM::Vec3 minimumImage(OpenMM::Vec3 d) const;
    /** d/dr of erfc(alpha r) / r. */
    double realSpaceSlope(double r) const;
    /** The real-space pair potential, force-shifted at the cutoff. */
    double realSpace(double r) const;
    /** The displacements d + n (n a lattice vector other than 0) shorter than the real-space cutoff. */
    std::vector<OpenMM::Vec3> periodicImages(const OpenMM::Vec3& d) const;
    OpenMM::Vec3 box[3], reciprocal[3];
    double volume, cutoff, alpha_, realShift, realSlope;
    int maxIndex[3];
    struct Wave {
        int n[3];
        OpenMM::Vec3 k;
        double coefficient;  // 2 x (4 pi / V) exp(-k^2 / 4 alpha^2) / k^2: k and -k together
    };
    std::vector<Wave> waves;
    std::vector<OpenMM::Vec3> qm;
    std::vector<Charge> all, explicitCharges;
    std::vector<std::complex<double> > structureFactor;  // sum_j q_j exp(i k.r_j) of the periodic charges
    std::vector<std::vector<std::complex<double> > > qmPhases;  // exp(i k.R_A) of each QM atom
};

} // namespace OpenMMDFT

#endif
