#ifndef OPENMMDFT_QMREGIONDRIVER_H_
#define OPENMMDFT_QMREGIONDRIVER_H_

#include "openmmdft/QMMMForce.h"
#include "openmmdft/LeastSquares.h"
#include "openmmdft/internal/QMEmbedding.h"
#include "DensityExtrapolation.h"
#include "ESPChargeFit.h"
#include "openmm/Vec3.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <memory>
#include <string>
#include <vector>

namespace OpenMMDFT {

/**
 * The QM region of a QMMMForce, the same on every platform: places the QM region and the MM charges it
 * sees (QMEmbedding), converts OpenMM units to atomic units (here and nowhere else, via AtomicUnits.h),
 * runs the Kohn-Sham engine (qmengine/) from a density extrapolated from the previous steps, and returns the energy in
 * kJ/mol and the forces in kJ/mol/nm. A platform kernel hands it positions and a force array in the
 * original particle order, and adds the forces to its own buffers.
 *
 * What the evaluation flags mean here (shared by every platform):
 * - energy-only mode: forces alone (an integrator step) and energy minimization are refused; an
 *   evaluation of energy and forces gets NaN forces on the QM atoms (see QMMMForce::setQMEnergyOnly);
 * - an SCF failure raises, except inside LocalEnergyMinimizer, where it is a rejected trial step:
 *   +infinity, NaN forces on the QM atoms (lastEvaluationRejected()).
 */
class QMRegionDriver {
public:
    /**
     * threads: for the engine (0: every hardware thread). espOnContextKernel: the ESP fit runs on the Context's
     * least-squares kernel (Reference/CPU, and GPU platforms in double precision), otherwise on the CPU platform's,
     * since the QM accumulations are always double. metricOnContextKernel: the density-fitting metric's inverse
     * comes from the Context's least-squares kernel (Reference/CPU), otherwise from the CPU platform's (LAPACK on
     * the host): on the GPU platforms that runs while the device computes the three-centre integrals, and the
     * device's general least-squares kernels were measured several times slower than LAPACK for this inverse
     * (docs/PERFORMANCE.md). xcFactory: where the XC work runs (null: the host's threads; the GPU platforms pass
     * their device back end).
     */
    QMRegionDriver(const QMMMForce& force, int threads, bool espOnContextKernel, bool metricOnContextKernel,
                   std::shared_ptr<const QM::XCBackendFactory> xcFactory = nullptr);
    /**
     * Re-read the QM settings and MM charges (updateParametersInContext). All or nothing: everything
     * that can fail (basis sets, settings) is built first; on an exception nothing has changed.
     */
    void setParameters(const QMMMForce& force);
    /**
     * The QM energy (kJ/mol) at these positions (nm, original order); with includeForces, the forces
     * (kJ/mol/nm) on the QM atoms and on the MM particles whose charges the QM region saw are added to
     * forces (original order). On an exception the results are marked as failed.
     */
    double execute(OpenMM::ContextImpl& context, const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors,
                   std::vector<OpenMM::Vec3>& forces, bool includeForces, bool includeEnergy);
    /** Whether the last execute() returned +infinity (an SCF failure at a minimizer's trial step). */
    bool lastEvaluationRejected() const {
        return rejected;
    }
    /** Why the last execute() put NaN forces on the QM atoms (empty: it did not). */
    const std::string& nanForcesReason() const {
        return nanForcesBecause;
    }
    /** Mark the results as failed for the current positions (an evaluation failed before or inside execute()). */
    void markFailed(const std::string& why) {
        computed = false;
        lastFailure = why;
    }
    /** The last computation's results; throws OpenMMException if there is none or the last one failed. */
    const QMResults& getResults() const;
    const std::vector<int>& getQMParticles() const {
        return embedding.getQMParticles();
    }
    /** Throws OpenMMException naming the first particle whose position is NaN or infinite (and why, if the
     * previous evaluation put NaN forces on the QM atoms). */
    void checkPositionsAreFinite(const std::vector<OpenMM::Vec3>& positions) const;
    /** Where the shipped basis sets are, for an installed plugin or the source tree. */
    static std::string findDataDirectory();
private:
    double compute(OpenMM::ContextImpl& context, const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors,
                   std::vector<OpenMM::Vec3>* forces);
    double computeOrThrow(OpenMM::ContextImpl& context, const std::vector<OpenMM::Vec3>& positions,
                          const OpenMM::Vec3* boxVectors, std::vector<OpenMM::Vec3>* forces);
    /** The Context's least-squares kernel, or the CPU platform's (created on first use). */
    LeastSquaresSolver& fitSolver(OpenMM::ContextImpl& context, bool onContextKernel);
    /** A least-squares kernel of the CPU platform (the Reference platform's where that is absent). */
    static LeastSquaresSolver* newHostSolver();
    /** A X = B for the density-fitting metric A (symmetric positive definite) through the least-squares kernel. */
    static void solveMetric(LeastSquaresSolver& fit, const Eigen::MatrixXd& A, Eigen::MatrixXd& B);
    /** The forces of the embedding switching function (QMMMForce::setUseEmbeddingSwitchingFunction), kJ/mol/nm. */
    void addSwitchingForces(const QMEmbedding::Placement& placement, const std::vector<QM::QMAtom>& atoms,
                            const Eigen::MatrixXd& density, const std::vector<double>& extraPotential,
                            std::vector<OpenMM::Vec3>& forces) const;
    /** The forces on the link hydrogens (gradient rows after the QM atoms', hartree/bohr), passed on to Q1 and M1. */
    void addLinkAtomForces(const QMEmbedding::Placement& placement, const Eigen::MatrixXd& gradient,
                           std::vector<OpenMM::Vec3>& forces) const;
    void setNaNForces(std::vector<OpenMM::Vec3>& forces, const std::string& why);
    /** Throws, naming it, if a QM atom, link hydrogen or embedding MM charge is too far from the origin to compute with. */
    void checkCoordinateMagnitudes(const QMEmbedding::Placement& placement) const;
    /** The particles whose force has a NaN or infinite component, in order. */
    static std::vector<int> nonFiniteForces(const std::vector<OpenMM::Vec3>& forces);
    QMEmbedding embedding;
    int threads;
    bool espOnContextKernel, metricOnContextKernel;
    std::shared_ptr<const QM::XCBackendFactory> xcFactory;
    int qmCharge;
    bool energyOnly;
    bool ewald;               // QMMMForce::Ewald: the periodic remainder through EwaldLongRange
    double ewaldTolerance;
    QM::QMSettings settings;
    std::unique_ptr<QM::KohnShamLDA> engine;
    std::unique_ptr<DensityExtrapolation> densityHistory;  // the SCF's starting density from the previous steps
    std::unique_ptr<LeastSquaresSolver> contextSolver, hostSolver;  // the Context's kernel, the CPU platform's
    LeastSquaresSolver* metricFit = nullptr;                            // one of them, for the engine's metric solver
    std::unique_ptr<ESPChargeFit> espCharges;       // absent unless an ESP charge method is set
    QMResults results;
    /** The last successful evaluation, reused at the same positions (and parameters: setParameters clears it). */
    struct LastEvaluation {
        bool valid = false, hasForces = false, periodic = false;
        std::vector<OpenMM::Vec3> positions;
        OpenMM::Vec3 box[3];
        double energy = 0;
        std::vector<std::pair<int, OpenMM::Vec3>> forces;  // the QM forces it added, by particle (kJ/mol/nm)
        bool matches(const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors, bool needForces) const;
    } last;
    bool computed = false;
    std::string lastFailure;       // why the last computation failed (empty: it did not)
    bool rejected = false;         // the last energy was +infinity: the SCF did not converge at a trial step
    std::string nanForcesBecause;  // why the last evaluation gave NaN forces on the QM atoms (empty: it did not)
};

} // namespace OpenMMDFT

#endif
