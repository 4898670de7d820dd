#ifndef OPENMMDFT_COMMONQMMMKERNELS_H_
#define OPENMMDFT_COMMONQMMMKERNELS_H_

#include "openmmdft/QMMMKernels.h"
#include "openmmdft/internal/BondGraph.h"
#include "QMRegionDriver.h"
#include "CommonXCBackend.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeKernel.h"
#include <memory>
#include <utility>
#include <vector>

namespace OpenMMDFT {

/**
 * QMMMForce on the GPU platforms (OpenCL and CUDA), written once against OpenMM's
 * Compute API.  When the Context is created, the bond graph is uploaded as an
 * ELLPACK adjacency matrix and classified on the device (A^2, A^3, see
 * classifyBondPathsOnDevice()).  Then:
 *  - the Coulomb / reaction-field pair term is added to OpenMM's NonbondedUtilities,
 *    whose tiles carry exclusion bit masks for the excluded and the 1-4 pairs (so the
 *    pair kernel pays nothing per excluded pair), exactly as NonbondedForce does;
 *  - the scaled 1-4 pairs are a sparse list evaluated by BondedUtilities, like
 *    NonbondedForce exceptions.
 * Both run inside the platform's own force computation.
 *
 * The QM region runs through QMRegionDriver, the same driver as on Reference/CPU: execute() reads the
 * positions (original order), the driver computes the QM energy and forces on the host (the engine's
 * XC, Coulomb and SCF run on the CPU in this version), and the forces are uploaded in the Context's
 * atom order and added to the fixed-point force buffer by a small kernel. Without QM atoms execute()
 * only checks for non-finite positions when the energy is requested.
 */
class CommonCalcQMMMForceKernel : public CalcQMMMForceKernel {
public:
    /** deviceInverse: the platform's own inverse for the density fitting's metric (null: the host's). */
    CommonCalcQMMMForceKernel(std::string name, const OpenMM::Platform& platform, OpenMM::ComputeContext& cc, const OpenMM::System& system,
                              DeviceSymmetricInverse deviceInverse = nullptr);
    ~CommonCalcQMMMForceKernel();
    void initialize(const OpenMM::System& system, const QMMMForce& force);
    double execute(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy, bool includeMM, bool includeQM);
    void copyParametersToContext(OpenMM::ContextImpl& context, const QMMMForce& force);
    bool supportsQMRegion() const {
        return true;
    }
    bool lastEvaluationRejected() const;
    QMResults getQMResults() const;
private:
    class ForceInfo;
    /// The charges of the pair term (chargesOfMMPairs) and the 1-4 prefactors, to the device.
    void uploadParameters(const QMMMForce& force, std::vector<double> pairCharges);
    void checkPositionsOnDevice(OpenMM::ContextImpl& context);
    double computeQMRegion(OpenMM::ContextImpl& context, bool includeForces, bool includeEnergy);
    void addHostForces(const std::vector<OpenMM::Vec3>& forces);
    std::unique_ptr<QMRegionDriver> qmRegion;  // absent when the Force has no QM atoms
    OpenMM::ComputeArray hostForces;
    OpenMM::ComputeKernel addHostForcesKernel;
    OpenMM::ComputeContext& cc;
    DeviceSymmetricInverse deviceInverse;
    ForceInfo* info;
    int numParticles;
    std::vector<std::pair<int, int> > pairs14;
    /// Pairs whose tile exclusion follows the other Forces' exclusions instead of the bond graph (see tileExclusions in
    /// the source): they must stay uncharged.
    std::vector<std::pair<int, int> > pairsDecidedByOthers;
    OpenMM::ComputeArray charges, pairPrefactors, nonfiniteFlag;
    OpenMM::ComputeKernel checkPositionsKernel;
};

/**
 * Classify the bond paths on the device of a ComputeContext: uploads the ELLPACK
 * adjacency matrix (column-major, N x K, K = largest degree), computes the sparse
 * boolean products A^2 = A*A and A^3 = A^2*A with one thread per row, classifies
 * every partner of every particle (1-2 or 1-3: excluded; exactly 3 bonds: scaled
 * 1-4) and downloads the result.  It returns exactly what classifyBondPaths()
 * returns on the CPU: pairs (i, j), i < j, sorted.
 */
BondPathClasses classifyBondPathsOnDevice(OpenMM::ComputeContext& cc, const EllpackAdjacency& adjacency);

} // namespace OpenMMDFT

#endif
