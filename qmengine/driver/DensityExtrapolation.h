#ifndef OPENMMDFT_DENSITYEXTRAPOLATION_H_
#define OPENMMDFT_DENSITYEXTRAPOLATION_H_

#include "openmmdft/QMMMForce.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include "openmm/Vec3.h"
#include <Eigen/Dense>
#include <deque>
#include <memory>
#include <vector>

namespace OpenMMDFT {

/**
 * The SCF's starting density for each MD step, from the converged densities of the previous steps.
 *
 * ASPC (always-stable predictor-corrector, J. Kolafa, J. Comput. Chem. 25, 335 (2004)): the guess is
 * sum_{i=1..n} B_i D(t - i dt), B_i = (-1)^(i+1) i C(2n, n-i) / C(2n-2, n-1), with n = order + 1 past
 * densities (fewer while the history fills). The basis functions move with their atoms, so the AO density
 * matrix changes smoothly along a trajectory and its polynomial extrapolation is a guess as good as the
 * trajectory is smooth; the SCF then converges it to the usual threshold, so the guess changes the number
 * of iterations, not the converged energy. (Kolafa's corrector, for SCFs stopped after one iteration, is
 * not needed here.) PreviousDensity uses the last density alone.
 *
 * Polynomial: the guess is the value at t of the polynomial of degree n - 1 through the n = order + 1 past densities
 * (Lagrange extrapolation at equal spacing, B_i = (-1)^(i+1) C(n, i)). ASPC's B_i are exact for straight lines
 * only, and their error, of second order in dt, dominates the first SCF iteration's: with a converged SCF every
 * step, nothing needs ASPC's damping of the guess's error, and the higher-order guess starts closer.
 *
 * XLBOMD: the guess is an auxiliary density propagated by extended-Lagrangian Born-Oppenheimer dynamics with
 * dissipation (A. M. N. Niklasson et al., J. Chem. Phys. 130, 214109 (2009)): P(t+dt) = 2P(t) - P(t-dt)
 * + kappa (D(t) - P(t)) + alpha sum_{k=0..K} c_k P(t-k dt), with K = order (3 to 7) and kappa, alpha, c_k from
 * their Table 1. The SCF still converges fully from it, so this is a time-reversible guess, not XL-BOMD's
 * energy-conserving shadow dynamics with a single SCF step.
 *
 * The history holds only densities of one continuous trajectory, recognised from the QM positions alone
 * (integrators count steps differently, and a QM force group may be evaluated once per outer step): QM atoms
 * that moved less than MAX_STEP_DISPLACEMENT between entries, and, with two entries or more, that are near where
 * the linear continuation of the last two puts them (within twice the last step, or four times its last change).
 * Anything else (setPositions, a loaded checkpoint, updateParametersInContext via clear()) restarts it from the
 * newest density. An evaluation at the positions of the newest entry is the same point again and starts from its
 * density. MM molecules entering or leaving the cutoff do not break the trajectory: their charges are a one-electron
 * term of the Fock matrix, so the past densities stay good guesses (continuous ones with the embedding switching
 * function), and the DIIS pairs, differences of Fock matrices at one geometry, do not contain it at all. (Treating
 * such a change as a break cost a water in a TIP3P box at a 0.8 nm cutoff a quarter of its histories.)
 *
 * Along the trajectory (and at the same point again) the guess also carries the newest SCF's DIIS pairs
 * (QMResult::fockChanges, errorChanges), which the next SCF recycles (QMSettings::recycledSubspace).
 *
 * An evaluation off the trajectory (a Monte Carlo barostat's trial move, energies at other positions between
 * steps) sets the trajectory aside instead of discarding it: when the next evaluation continues the set-aside one
 * (the trial was rejected), its history and DIIS pairs are taken up again.
 */
class DensityExtrapolation {
public:
    /** The methods are QMMMForce's (one enumeration, so that the Force's choice passes through unchanged). */
    using Method = QMMMForce::DensityExtrapolation;
    static constexpr Method PreviousDensity = QMMMForce::PreviousDensity, ASPC = QMMMForce::ASPC, XLBOMD = QMMMForce::XLBOMD,
                            Polynomial = QMMMForce::PolynomialExtrapolation;
    /** The largest move of a QM atom between recorded steps (nm) still taken as one trajectory. */
    static constexpr double MAX_STEP_DISPLACEMENT = 0.05;
    /** Positions within max(this, twice the last step's largest move, four times its last change) nm of the
     * linear continuation of the last two recorded steps continue the trajectory. */
    static constexpr double MIN_PREDICTION_TOLERANCE = 1e-4;

    DensityExtrapolation(Method method, int order);
    void clear();
    /**
     * The starting density for an evaluation at these QM positions (nm), or
     * null when there is no history; `used` is set to the number of past densities it combines (0: none).
     */
    std::unique_ptr<QM::DensityGuess> guess(const std::vector<OpenMM::Vec3>& qmPositions, int& used) const;
    /**
     * Record the converged density of an evaluation, and the DIIS pairs its SCF hands on (QMResult::fockChanges,
     * errorChanges, coulombChanges, with the error changes' Gram matrix QMResult::errorChangeGram) and its orbitals
     * (QMResult::lowdinOrbitals), which the next guess carries while the
     * trajectory continues (whatever the method).
     */
    void record(const std::vector<OpenMM::Vec3>& qmPositions, const Eigen::MatrixXd& density,
                std::vector<QM::SharedPair> fockChanges = {}, std::vector<QM::SharedPair> errorChanges = {},
                std::vector<QM::SharedPair> coulombChanges = {}, QM::SharedMatrix lowdinOrbitals = nullptr,
                QM::SharedMatrix errorChangeGram = nullptr);
    /** Kolafa's coefficients B_1..B_n for n past densities. */
    static std::vector<double> aspcCoefficients(int n);
    /** The equal-spacing Lagrange coefficients B_i = (-1)^(i+1) C(n, i), i = 1..n, for n past densities. */
    static std::vector<double> polynomialCoefficients(int n);

private:
    struct Entry {
        std::vector<OpenMM::Vec3> qmPositions;
        Eigen::MatrixXd density;
    };
    /** One trajectory's state: its past densities, the XLBOMD auxiliary densities, and its newest SCF's DIIS pairs
     *  for the next one. */
    struct Trajectory {
        std::deque<Entry> history;  // newest first
        std::deque<Eigen::MatrixXd> auxiliary;  // XLBOMD: P(t+dt) (the next guess), P(t), ..., newest first
        std::vector<QM::SharedPair> subspaceFocks, subspaceErrors, subspaceCoulombs;  // shared with the guesses, not copied
        QM::SharedMatrix lowdinOrbitals;  // of the newest evaluation
        QM::SharedMatrix subspaceErrorGram;  // the Gram matrix of subspaceErrors, where the SCF handed it on
        /** Whether an evaluation at this geometry is the newest recorded point again (the same QM positions). */
        bool atNewestPoint(const std::vector<OpenMM::Vec3>& qmPositions) const;
        /** Whether an evaluation at this geometry continues the recorded trajectory (a step further). */
        bool continues(const std::vector<OpenMM::Vec3>& qmPositions) const;
    };
    /** Whether an evaluation here goes back to the trajectory set aside rather than on with the current one. */
    bool resumesSetAside(const std::vector<OpenMM::Vec3>& qmPositions) const;
    static double largestMove(const std::vector<OpenMM::Vec3>& a, const std::vector<OpenMM::Vec3>& b);
    Method method;
    int order;
    Trajectory current;
    Trajectory setAside;  // the trajectory an evaluation off it set aside (see the class comment)
};

} // namespace OpenMMDFT

#endif
