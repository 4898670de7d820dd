#pragma once
// The SCF iterations, separate from the setup of a geometry (KohnShamLDA.cpp) so that the
// same loop serves the molecule and the spherical atoms of the SAD guess.
#include "CoulombResponse.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include "openmmdft/qm/MatrixProducts.h"
#include "openmmdft/qm/Settings.h"
#include "openmmdft/qm/XCBackend.h"
#include <Eigen/Dense>
#include "WallClock.h"
#include <functional>

namespace OpenMMDFT {
namespace QM {

/// Everything the iterations need about one geometry.
struct SCFProblem {
    const Eigen::MatrixXd& S;
    const Eigen::MatrixXd& Hcore; ///< T + V_nuclei
    const Eigen::MatrixXd& Vmm;   ///< MM point charges
    const Eigen::MatrixXd& X;     ///< orthonormalizing transformation, nbf x nmo
    double nuclearRepulsion, nuclearMM;
    std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)> coulomb;
    XCBackend& xc;
    double electrons;
    bool fractional;              ///< share electrons among degenerate levels (atoms for SAD)
    /// A density-dependent term beyond Coulomb and XC (empty: none): adds its Fock matrix to F, returns its energy.
    std::function<double(const Eigen::MatrixXd& D, Eigen::MatrixXd& F)> extra = nullptr;
    /// X = S^-1/2: the errors are comparable with those of other geometries, so DIIS pairs can be recycled.
    bool symmetricOrthogonalization = false;
    /// Pairs of earlier SCFs for the DIIS subspace (null or empty: none), and their orbitals (lowdinOrbitals) to start
    /// the orbital rotations from.
    const DensityGuess* recycled = nullptr;
    /// Where the products of basis-sized matrices run (null: the host's BLAS); see MatrixProducts.h.
    const MatrixProducts* products = nullptr;
    /// Coulomb matrices of held densities, held beside them (null: through coulomb on the host); the Coulomb response's
    /// steps take them.
    HeldCoulomb heldCoulomb = nullptr;
    /// Leave the final Fock matrix's orbitals to SCFOutcome::finalOrbitals where the gradient does not need them (a
    /// closed shell: W from the last iteration's occupied orbitals), so that they can be made beside the gradient.
    bool deferFinalOrbitals = false;
};

struct SCFOutcome {
    QMResult result;
    bool converged = false;
    /// With SCFProblem::deferFinalOrbitals, where the SCF left them: fills in the final Fock matrix's orbitals
    /// (QMResult::orbitals, orbitalEnergies, homoLumoGap, lowdinOrbitals, timings["scf.finalOrbitals"]) on the host's
    /// BLAS, on any thread (it keeps what it needs; problem.X must outlive it). Empty where they are filled in already.
    std::function<void(QMResult&)> finalOrbitals;
};

/// How one SCF attempt iterates. The first attempt is plain DIIS (with the level-shift fallback on a
/// stall); the restarts a failed attempt falls back to add a level shift from the first iteration and
/// damp the Fock matrix before DIIS takes over (robust at distorted geometries with small gaps).
struct SCFStrategy {
    double initialLevelShift = 0;  ///< hartree, applied from iteration 1 (0: only the stall fallback)
    double damping = 0;            ///< F <- (1 - damping) F + damping F_previous while damped
    int dampedIterations = 0;      ///< iterations with damping and without DIIS
};

/// Occupation numbers (0..2) for orbitals sorted by energy.
Eigen::VectorXd occupations(const Eigen::VectorXd& eps, double electrons, bool fractional);

/// The SCF error X^T (F D S - S D F) X in the orthonormal basis X (XS = X^T S). With `factor` Y such that D = Y Y^T
/// (the occupied orbitals scaled by the square roots of their occupations), it is formed from products with the
/// n_bf x n_occ factor, about n_bf / n_occ times fewer operations than with D (4-5x for water clusters).
Eigen::MatrixXd orbitalGradient(const Eigen::MatrixXd& F, const Eigen::MatrixXd& D, const Eigen::MatrixXd& S, const Eigen::MatrixXd& X,
                                const Eigen::MatrixXd& XS, const Eigen::MatrixXd* factor, const MatrixProducts* products = nullptr);

/// The same from the factor, with X and XS held where `m` runs its products (held once for an SCF's iterations): F and
/// the factor go up, the error comes down.
Eigen::MatrixXd orbitalGradient(const MatrixProducts& m, const Eigen::MatrixXd& F, const Held& X, const Held& XS,
                                const Eigen::MatrixXd& factor);

/// Iterate from density D (or from the core Hamiltonian when haveDensity is false).
SCFOutcome runSCF(const QMSettings& settings, const SCFProblem& problem, Eigen::MatrixXd D, bool haveDensity,
                  const SCFStrategy& strategy = SCFStrategy());

} // namespace QM
} // namespace OpenMMDFT
