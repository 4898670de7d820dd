#pragma once
// Where the exchange-correlation work of one geometry runs. KohnShamLDA builds one back end per geometry
// through the factory it is given (the host's multithreaded XCIntegrator by default); a GPU platform
// passes its own factory. The SCF only ever sees this interface: a density matrix in, the XC energy,
// the XC matrix (AO basis) and the XC gradient out, so per SCF iteration only n_bf x n_bf matrices cross
// between the engine and the back end (GauXC's split between the integrator and its device driver).
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Grid.h"
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/MatrixProducts.h"
#include "openmmdft/qm/Settings.h"
#include "openmmdft/qm/Types.h"
#include "openmmdft/qm/WorkInFlight.h"
#include "openmmdft/qm/XCIntegrator.h"
#include <Eigen/Dense>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace OpenMMDFT {
namespace QM {

/** An XC matrix and energy (XCBackend::startCompute), an XC gradient (startGradient) or a point-charge matrix
 *  (PointChargeEvaluator::startMatrix) started, while the caller goes on. */
typedef WorkInFlight<XCContribution> XCComputeInFlight;
typedef WorkInFlight<Eigen::MatrixXd> XCGradientInFlight;
typedef WorkInFlight<Eigen::MatrixXd> PointChargeMatrixInFlight;

class XCBackend {
public:
    virtual ~XCBackend() = default;
    /// E_xc, V_xc and the grid's electron count for a total density matrix. factor, if given, satisfies
    /// density = factor factor^T (occupied orbitals times sqrt(occupation)), which some groups use for rho.
    virtual XCContribution compute(const Eigen::MatrixXd& density, const Eigen::MatrixXd* factor) = 0;
    /// compute(), started: a back end whose device has a queue of its own runs it there beside the work the caller
    /// queues meanwhile (the SCF's Coulomb build); by default it is computed in finish(). The back end must outlive the
    /// returned object, and no other call may come in between.
    virtual std::unique_ptr<XCComputeInFlight> startCompute(const Eigen::MatrixXd& density, const Eigen::MatrixXd* factor);
    /// d E_xc / d R_A (numAtoms x 3). gridResponse: the exact derivative of the quadrature on the grid
    /// that moves with the atoms (partition-weight derivatives included); otherwise the grid held fixed.
    virtual Eigen::MatrixXd gradient(const Eigen::MatrixXd& density, bool gridResponse) = 0;
    /// gradient(), started: a back end whose device has a queue of its own for it runs it there beside the work the
    /// caller queues meanwhile (the density fitting's and point charges' gradients); by default it is computed in
    /// finish(). The back end must outlive the returned object, and no other call may come in between.
    virtual std::unique_ptr<XCGradientInFlight> startGradient(const Eigen::MatrixXd& density, bool gridResponse);
    /// Bytes of basis values kept between SCF iterations (Precompute), wherever the back end keeps them.
    virtual size_t storedBytes() const = 0;
    /// Where the work runs, for reports: "host" or "device".
    virtual const char* name() const = 0;
    /// Seconds spent in the parts of the last gradient, where a back end reports them (names without "gradient.xc.").
    virtual std::map<std::string, double> gradientTimings() const {
        return {};
    }
    /// Empty, or why Precompute keeps fewer basis values than it needs (its memory limit).
    virtual std::string notice() const {
        return "";
    }
};

/// One geometry, as a back end sees it. Everything referred to outlives the back end.
struct XCGeometry {
    const BasisSet& basis;
    const MolecularGrid& grid;
    const std::vector<QMAtom>& atoms;
    const QMSettings& settings;
};

/** A point-charge gradient being computed where PointChargeEvaluator::startGradient() sent it, while the host goes on. */
class PointChargeGradientInFlight {
public:
    virtual ~PointChargeGradientInFlight() = default;
    /** Wait for it, then add it: to atomGradient (atoms x 3, through the basis functions) and chargeGradient (charges x 3). */
    virtual void addTo(Eigen::MatrixXd& atomGradient, Eigen::MatrixXd& chargeGradient) = 0;
};

/// Where the potential matrices of point charges (the nuclei and the MM charges) and their gradients run, when not
/// on the host.
class PointChargeEvaluator {
public:
    virtual ~PointChargeEvaluator() = default;
    /**
     * sum_C w_C <u|1/|r-C||v> over the cartesian functions u, v of the shell pairs of makePointChargeTask's task, with
     * the weights w (-q_C for pointChargeMatrix's V), into cartesianMatrix (cartesian size, symmetric; pairs the
     * task leaves out are zero). False if it does not run here (the host computes it).
     */
    virtual bool matrix(const ThreeCentreTask& task, const std::vector<double>& weights, Eigen::MatrixXd& cartesianMatrix) const = 0;
    /**
     * matrix(), started: an evaluator whose device has a queue of its own for it runs it there, beside what the caller
     * queues next (the fitting tensor); null if it does not run here. By default computed here and handed on.
     */
    virtual std::unique_ptr<PointChargeMatrixInFlight> startMatrix(const ThreeCentreTask& task, const std::vector<double>& weights) const;
    /**
     * d/dR and d/dC of sum_uv D_uv sum_C w_C <u|1/|r-C||v> for the task of makePointChargeTask, the cartesian density D,
     * the weights w (-q_C for pointChargeGradient's V) and numAtoms atoms, started and not waited for (a device queue
     * runs it while the host computes other terms); null if it does not run here (the host computes it). The returned
     * object's addTo() adds it, once done, to an atom gradient (atoms x 3, through the basis functions) and a charge
     * gradient (charges x 3).
     */
    virtual std::unique_ptr<PointChargeGradientInFlight> startGradient(const ThreeCentreTask& task, const std::vector<double>& weights,
                                                                       const Eigen::MatrixXd& cartesianDensity, int numAtoms) const = 0;
};

class XCBackendFactory {
public:
    virtual ~XCBackendFactory() = default;
    virtual std::unique_ptr<XCBackend> create(const XCGeometry& geometry) const = 0;
    /** Where the grid's partition weights are computed (null: on the host, by MolecularGrid itself). */
    virtual const PartitionWeightEvaluator* partitionWeights() const {
        return nullptr;
    }
    /** Where the point-charge matrices and gradients run (null: on the host). */
    virtual const PointChargeEvaluator* pointCharges() const {
        return nullptr;
    }
    /** Where one geometry's density-fitting contractions run (null: on the host, through BLAS). */
    virtual std::unique_ptr<DensityFittingContractions> densityFittingContractions() const {
        return nullptr;
    }
    /** Where the SCF's products of basis-sized matrices run (null: on the host, through BLAS). Used by the calling
     *  thread's SCF only (a device queue is not shared between threads). */
    virtual const MatrixProducts* matrixProducts() const {
        return nullptr;
    }
    /** Bytes of device memory the factory's work holds now, kept from one geometry to the next (0 on the host). */
    virtual size_t deviceBytes() const {
        return 0;
    }
    /** Whether invertSymmetricPositiveDefinite() may make the density fitting's metric's inverse on the device. */
    virtual bool invertsSymmetricPositiveDefinite() const {
        return false;
    }
    /** The inverse of a symmetric positive definite matrix (the density fitting's metric) made on the device; false
     *  where it was not (the host then makes it). May be called from another thread than the SCF's. */
    virtual bool invertSymmetricPositiveDefinite(const Eigen::MatrixXd& A, Eigen::MatrixXd& inverse) const {
        return false;
    }
};

/// The host back end: XCIntegrator for energy and matrix (grouped points, significant shells,
/// precomputed or recomputed basis values), xcGradient / xcGradientFixedGrid for forces, on
/// settings.threads threads.
class HostXCBackendFactory : public XCBackendFactory {
public:
    std::unique_ptr<XCBackend> create(const XCGeometry& geometry) const override;
};

} // namespace QM
} // namespace OpenMMDFT
