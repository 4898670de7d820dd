#ifndef OPENMMDFT_REFERENCEQMREGION_H_
#define OPENMMDFT_REFERENCEQMREGION_H_

#include "openmmdft/QMMMForce.h"
#include "openmmdft/LeastSquares.h"
#include "openmmdft/internal/QMEmbedding.h"
#include "ReferenceESPCharges.h"
#include "openmm/Vec3.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <memory>
#include <string>
#include <vector>

namespace OpenMMDFT {

/**
 * The QM region of a QMMMForce on the CPU: places the QM region and the MM charges it sees
 * (QMEmbedding), converts OpenMM units to atomic units (here and nowhere else, via AtomicUnits.h),
 * runs the Kohn-Sham engine (qmengine/) from the previous step's density, and reports the energy
 * in kJ/mol.
 */
class ReferenceQMRegion {
public:
    /** threads: the platform's thread count (the CPU platform's Threads property), used by the engine. */
    ReferenceQMRegion(const QMMMForce& force, int threads);
    /**
     * Re-read the QM settings and MM charges (updateParametersInContext). All or nothing: everything
     * that can fail (basis sets, settings) is built first; on an exception nothing has changed.
     */
    void setParameters(const QMMMForce& force);
    /**
     * Energy (kJ/mol) of the QM region in the MM charges at these positions (nm); then the ESP
     * charges when enabled (their fit runs on the Context's least-squares kernel). With forces,
     * the analytic forces (kJ/mol/nm) on the QM atoms and on the MM charges the QM region saw are
     * added to them: the exact derivative of this energy (QM::KohnShamLDA::gradient).
     * On an exception the results are marked as failed (getResults then says why).
     */
    double compute(OpenMM::ContextImpl& context, const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors,
                   std::vector<OpenMM::Vec3>* forces);
    /** Mark the results as failed for the current positions (an evaluation failed before or inside compute()). */
    void markFailed(const std::string& why) {
        computed = false;
        lastFailure = why;
    }
    /** The last computation's results; throws OpenMMException if there is none or the last one failed. */
    const QMResults& getResults() const;
    const std::vector<int>& getQMParticles() const {
        return embedding.getQMParticles();
    }
    /** Where the shipped basis sets are, for an installed plugin or the source tree. */
    static std::string findDataDirectory();
private:
    double computeOrThrow(OpenMM::ContextImpl& context, const std::vector<OpenMM::Vec3>& positions,
                          const OpenMM::Vec3* boxVectors, std::vector<OpenMM::Vec3>* forces);
    QMEmbedding embedding;
    int threads;
    int qmCharge;
    QM::QMSettings settings;
    std::unique_ptr<QM::KohnShamLDA> engine;
    std::unique_ptr<QM::DensityGuess> previousDensity;
    std::unique_ptr<LeastSquaresSolver> fitSolver;  // the least-squares kernel, for the density-fitting metric
    std::unique_ptr<ReferenceESPCharges> espCharges;  // absent unless an ESP charge method is set
    QMResults results;
    bool computed = false;
    std::string lastFailure;  // why the last computation failed (empty: it did not)
};

} // namespace OpenMMDFT

#endif
