#ifndef OPENMMDFT_REFERENCEQMREGION_H_
#define OPENMMDFT_REFERENCEQMREGION_H_

#include "openmmdft/QMMMForce.h"
#include "openmmdft/LeastSquares.h"
#include "ReferenceESPCharges.h"
#include "openmm/Vec3.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <memory>
#include <vector>

namespace OpenMMDFT {

/**
 * The QM region of a QMMMForce on the CPU: picks the MM charges the QM Hamiltonian sees,
 * converts OpenMM units to atomic units (here and nowhere else, via AtomicUnits.h), runs
 * the Kohn-Sham engine (qmengine/) from the previous step's density, and reports the energy
 * in kJ/mol.
 *
 * Embedding: with NoCutoff every MM charge; with a cutoff, the charges of whole molecules
 * (connected parts of the bond graph) having an atom within the cutoff of a QM atom, each
 * molecule imaged as a whole next to the QM region (kept whole across box faces) when periodic.
 */
class ReferenceQMRegion {
public:
    ReferenceQMRegion(const QMMMForce& force);
    /** Re-read the QM settings and MM charges (updateParametersInContext). */
    void setParameters(const QMMMForce& force);
    /**
     * Energy (kJ/mol) of the QM region in the MM charges at these positions (nm); then the ESP
     * charges when enabled (their fit runs on the Context's least-squares kernel). With forces,
     * the analytic forces (kJ/mol/nm) on the QM atoms and on the MM charges the QM region saw are
     * added to them: the exact derivative of this energy (QM::KohnShamLDA::gradient).
     */
    double compute(OpenMM::ContextImpl& context, const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors,
                   std::vector<OpenMM::Vec3>* forces);
    const QMResults& getResults() const {
        return results;
    }
    bool hasResults() const {
        return computed;
    }
    /** Where the shipped basis sets are, for an installed plugin or the source tree. */
    static std::string findDataDirectory();
private:
    void selectMMCharges(const std::vector<OpenMM::Vec3>& qmPositions, const std::vector<OpenMM::Vec3>& positions,
                         const OpenMM::Vec3* boxVectors, std::vector<QM::PointCharge>& selected,
                         std::vector<int>& selectedParticles) const;
    std::vector<int> qmParticles, qmAtomicNumbers;
    std::vector<double> charges;
    std::vector<int> molecule;                       // connected component of each particle
    std::vector<std::vector<int> > mmMolecules;      // particles of each molecule without QM atoms
    int qmCharge;
    QMMMForce::NonbondedMethod method;
    double cutoff;
    QM::QMSettings settings;
    std::unique_ptr<QM::KohnShamLDA> engine;
    std::unique_ptr<QM::DensityGuess> previousDensity;
    std::unique_ptr<LeastSquaresSolver> fitSolver;  // the least-squares kernel, for the density-fitting metric
    std::unique_ptr<ReferenceESPCharges> espCharges;  // absent unless an ESP charge method is set
    QMResults results;
    bool computed;
};

} // namespace OpenMMDFT

#endif
