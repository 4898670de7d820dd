#include "SCFIterations.h"
#include "CoulombResponse.h"
#include "OrbitalRotation.h"
#include "openmmdft/qm/DIIS.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include <algorithm>
#include <cmath>
#include <deque>

namespace OpenMMDFT {
namespace QM {

// Occupations for n electrons over orbitals sorted by energy. With fractional = true,
// degenerate levels share their electrons equally (spherical atoms for SAD).
Eigen::VectorXd occupations(const Eigen::VectorXd& eps, double n, bool fractional) {
    Eigen::VectorXd occ = Eigen::VectorXd::Zero(eps.size());
    double left = n;
    for (int i = 0; i < eps.size() && left > 1e-12;) {
        int j = i + 1;
        if (fractional)
            while (j < eps.size() && std::abs(eps[j] - eps[i]) < 1e-4)
                j++;
        const double each = std::min(2.0, left / (j - i));
        for (int k = i; k < j; k++)
            occ[k] = each;
        left -= each * (j - i);
        i = j;
    }
    return occ;
}

Eigen::MatrixXd orbitalGradient(const Eigen::MatrixXd& F, const Eigen::MatrixXd& D, const Eigen::MatrixXd& S, const Eigen::MatrixXd& X,
                                const Eigen::MatrixXd& XS, const Eigen::MatrixXd* factor, const MatrixProducts* products) {
    if (factor == nullptr) {
        const Eigen::MatrixXd FDS = productOn(products, F, false, productOn(products, D, false, S, false), false);
        return congruenceOn(products, FDS - FDS.transpose(), X);
    }
    const MatrixProducts& m = chainProducts(products, 2.0 * F.size() * factor->cols());
    return orbitalGradient(m, F, m.hold(X), m.hold(XS), *factor);
}

Eigen::MatrixXd orbitalGradient(const MatrixProducts& m, const Eigen::MatrixXd& F, const Held& X, const Held& XS,
                                const Eigen::MatrixXd& factor) {
    // X^T F D S X = (X^T F Y)(X^T S Y)^T for D = Y Y^T.
    const Held Y = m.hold(factor);
    const Held left = m.multiply(X, true, m.multiply(m.hold(F), false, Y, false), false);
    const Eigen::MatrixXd outer = m.fetch(m.multiply(left, false, m.multiply(XS, false, Y, false), true));
    return outer - outer.transpose();
}

namespace {
/// Orbitals C (in the metric of X's basis) and energies eps of a Fock matrix F: the eigensystem of X^T F X, the
/// products where `where` runs them.
void diagonalizeIn(const Eigen::MatrixXd& F, const Eigen::MatrixXd& X, const MatrixProducts* where, Eigen::VectorXd& eps,
                   Eigen::MatrixXd& C) {
    Eigen::MatrixXd vectors;
    symmetricEigensystem(congruenceOn(where, F, X), eps, vectors);
    C = productOn(where, X, false, vectors, false);
}

/// D = Y Y^T, the factor going up once where the products run.
Eigen::MatrixXd densityOfFactor(const MatrixProducts* products, const Eigen::MatrixXd& Y) {
    const MatrixProducts& m = chainProducts(products, 2.0 * Y.rows() * Y.size());
    const Held factor = m.hold(Y);
    return m.fetch(m.multiply(factor, false, factor, true));
}

/// Iterations without halving the error after which the level shift comes in.
constexpr int STALL_ITERATIONS = 12;
/// The Coulomb-response step stops at a residual of this fraction of its first: the step only has to take the
/// slow directions out, the SCF's own iterations do the rest (measured: 2 steps to 5% give the iterations of 6).
constexpr double RESPONSE_TOLERANCE = 0.05;
/// The response is a first-order (linear) model: it is applied only below this SCF error, where the model holds. Above
/// it, with a small HOMO-LUMO gap, its step overshoots (LiF near the ionic/covalent crossing from atomic densities:
/// the error went from 0.03 to 1 and the SCF failed).
constexpr double RESPONSE_ERROR_LIMIT = 1e-2;
/// The orbitals of an extrapolated Fock matrix come from rotating the last iteration's (OrbitalRotation.h) instead of
/// an eigensolver below this SCF error, with rotations of at most MAX_ROTATION; the rotation's own residual is held at
/// ROTATION_TOLERANCE times the SCF's convergence threshold, so that it never shows in the SCF's error.
constexpr double ROTATION_ERROR_LIMIT = 1e-2;
constexpr double MAX_ROTATION = 0.2;
constexpr double ROTATION_TOLERANCE = 1e-3;

/// One SCF iteration's Fock matrix and error, and its Coulomb matrix where the response step needs it.
struct Iterate {
    Eigen::MatrixXd fock, error, coulomb;
};

/**
 * The Gram matrix of the error changes an SCF hands on: its own newest `fresh` ones first, then the first of those it
 * recycled, in their order. Where the recycled pairs' Gram matrix is known (recycledGram, in that order: the guess
 * came with it), only the new ones' products with the rest are computed (a few of the 96 rows), else all of them.
 */
SharedMatrix handedGram(const std::vector<SharedPair>& errors, size_t fresh, const Eigen::MatrixXd* recycledGram,
                        int threads) {
    if (errors.empty())
        return nullptr;
    PairList all;
    for (const SharedPair& e : errors)
        all.push_back(e.get());
    const Eigen::Index kept = (Eigen::Index) (errors.size() - fresh);
    if (recycledGram == nullptr || kept > recycledGram->rows() || fresh == errors.size())
        return std::make_shared<const Eigen::MatrixXd>(streamedGram(all, threads));
    const PairList newest(all.begin(), all.begin() + fresh);
    const Eigen::MatrixXd cross = streamedCrossGram(newest, all, threads);
    auto gram = std::make_shared<Eigen::MatrixXd>(errors.size(), errors.size());
    gram->topRows(fresh) = cross;
    gram->leftCols(fresh) = cross.transpose();
    gram->bottomRightCorner(kept, kept) = recycledGram->topLeftCorner(kept, kept);
    return gram;
}
} // namespace

SCFOutcome runSCF(const QMSettings& s, const SCFProblem& problem, Eigen::MatrixXd D, bool haveDensity,
                  const SCFStrategy& strategy) {
    const Eigen::MatrixXd& S = problem.S;
    const Eigen::MatrixXd& Hcore = problem.Hcore;
    const Eigen::MatrixXd& Vmm = problem.Vmm;
    const Eigen::MatrixXd& X = problem.X;
    const double enuc = problem.nuclearRepulsion, enucMM = problem.nuclearMM;
    const double nElectrons = problem.electrons;
    const bool fractional = problem.fractional;
    const auto& coulomb = problem.coulomb;
    XCBackend& xc = problem.xc;
    const MatrixProducts* products = problem.products;
    SCFOutcome out;
    QMResult& r = out.result;
    const Eigen::MatrixXd H = Hcore + Vmm;
    auto diagonalize = [&](const Eigen::MatrixXd& F, Eigen::VectorXd& eps, Eigen::MatrixXd& C) { diagonalizeIn(F, X, products, eps, C); };
    // D = F F^T with F = C_occ sqrt(n); F lets the XC code form rho from orbitals when cheaper.
    Eigen::MatrixXd factor;
    bool haveFactor = false;
    auto densityFrom = [&](const Eigen::VectorXd& eps, const Eigen::MatrixXd& C) {
        const Eigen::VectorXd occ = occupations(eps, nElectrons, fractional);
        int k = 0;
        while (k < occ.size() && occ[k] > 0)
            k++;
        factor = C.leftCols(k) * occ.head(k).cwiseSqrt().asDiagonal();
        haveFactor = true;
        return densityOfFactor(products, factor);
    };
    const Eigen::MatrixXd XS = productOn(products, X, true, S, false);
    Held heldX, heldXS;  // X and XS where the error's products run (heldBasisChangeWhere), made on first use
    const MatrixProducts* heldBasisChangeWhere = nullptr;
    Eigen::VectorXd eps;
    Eigen::MatrixXd C;
    // Closed shells with integer occupations: the first nElectrons / 2 orbitals of C hold two electrons each, so that
    // orbitals rotated from the last iteration's (occupied first) give the density without sorting energies.
    const bool closedShell = !fractional && std::abs(nElectrons - 2 * std::round(nElectrons / 2)) < 1e-9;
    const int closedShellOccupied = (int) std::lround(nElectrons / 2);
    bool haveOrbitals = false;  // C holds orbitals near those of the next Fock matrix, orthonormal, occupied first
    int refusedRotations = 0;   // after two, this SCF is not where rotations work (small gap): no more attempts
    // The last geometry's orbitals carried over in the symmetrically orthonormalized basis (X U is orthonormal here).
    const SharedMatrix& carried = problem.recycled ? problem.recycled->lowdinOrbitals : SharedMatrix();
    if (closedShell && problem.symmetricOrthogonalization && carried && carried->rows() == X.cols() &&
        carried->cols() == X.cols()) {
        C = productOn(products, X, false, *carried, false);
        haveOrbitals = true;
    }
    if (!haveDensity) { // core guess
        diagonalize(H, eps, C);
        D = densityFrom(eps, C);
    }
    // The recycled pairs packed (DensityGuess), on the host: their products on the device (kept there from step to
    // step) took 0.065 s per MD step of 24 QM waters on an H200 against 0.020 s on its host's 16 cores.
    DIIS diis(s.diisSubspace, s.threads, true);
    // The Coulomb-response step after DIIS (CoulombResponse.h): for closed shells with integer occupations, where
    // DIIS runs undamped (a level shift or damping marks an SCF that is far from its solution).
    // The iterates' Coulomb matrices (and the pairs' changes of them) are kept for it, even if its steps stop.
    const bool keepCoulomb = s.coulombResponseSteps > 0 && closedShell;
    bool responding = keepCoulomb;  // whether response steps are still taken in this SCF
    bool responseTaken = false;     // whether the last step was corrected by the response
    // Krylov-subspace recycling: the pairs of the previous MD steps' SCFs join the subspace from the first
    // iteration, so that DIIS starts with a model of how the error answers the Fock matrix.
    const bool recycling = s.recycledSubspace > 0 && problem.symmetricOrthogonalization && strategy.dampedIterations == 0 &&
                           strategy.initialLevelShift == 0;
    std::vector<size_t> recycled;  // the guess's pairs that fit this basis (it outlives the DIIS, which reads them)
    // Whether the guess's pairs came with their Coulomb matrices' changes (all of them, so that they stay matched).
    const bool givenCoulomb = problem.recycled && problem.recycled->coulombChanges.size() == problem.recycled->fockChanges.size();
    Eigen::MatrixXd recycledGram;  // the recycled pairs' Gram matrix, in their order, where the guess came with it
    bool haveRecycledGram = false;
    if (recycling && problem.recycled) {
        const double tRecycling = seconds();
        const DensityGuess& g = *problem.recycled;
        std::vector<SharedPair> focks, errors, coulombs;
        const bool withCoulomb = keepCoulomb && givenCoulomb;
        for (size_t j = 0; j < g.fockChanges.size() && j < g.errorChanges.size() && (int) j < s.recycledSubspace; j++)
            if (g.fockChanges[j]->size() == packedSymmetricSize(S.rows()) &&
                g.errorChanges[j]->size() == packedAntisymmetricSize(X.cols()) &&
                (!withCoulomb || g.coulombChanges[j]->size() == packedSymmetricSize(S.rows()))) {
                recycled.push_back(j);
                focks.push_back(g.fockChanges[j]);
                errors.push_back(g.errorChanges[j]);
                if (withCoulomb)
                    coulombs.push_back(g.coulombChanges[j]);
            }
        // The pairs' Gram matrix where the SCF that handed them on kept it (their products with each other).
        haveRecycledGram = g.errorChangeGram && g.errorChangeGram->rows() == (Eigen::Index) g.errorChanges.size() &&
                           g.errorChangeGram->cols() == (Eigen::Index) g.errorChanges.size();
        if (haveRecycledGram) {
            recycledGram.resize(recycled.size(), recycled.size());
            for (size_t a = 0; a < recycled.size(); a++)
                for (size_t b = 0; b < recycled.size(); b++)
                    recycledGram(a, b) = (*g.errorChangeGram)(recycled[a], recycled[b]);
        }
        diis.setRecycled(focks, errors, coulombs, haveRecycledGram ? &recycledGram : nullptr);
        r.timings["scf.recycling"] += seconds() - tRecycling;
    }
    std::deque<Iterate> iterates; // of the last iterations, oldest first
    double previousError = 1e300;
    double shift = strategy.initialLevelShift; // level shift in use (0: none)
    if (shift > 0)
        r.levelShiftIteration = 1;
    Eigen::MatrixXd previousF;
    double bestError = 1e300, previousEnergy = 0;
    int stalled = 0;
    Eigen::MatrixXd F;
    for (int it = 1; it <= s.maxIterations; it++) {
        // The XC matrix first: a device back end computes it on a queue of its own, beside the Coulomb build.
        double t = seconds();
        std::unique_ptr<XCComputeInFlight> xcStarted = xc.startCompute(D, haveFactor ? &factor : nullptr);
        r.timings["scf.xc"] += seconds() - t;
        t = seconds();
        const Eigen::MatrixXd J = coulomb(D);
        r.timings["scf.coulomb"] += seconds() - t;
        t = seconds();
        const XCContribution v = xcStarted->finish();
        r.timings["scf.xc"] += seconds() - t;
        t = seconds();
        F = H + J + v.matrix;
        r.longRange = problem.extra ? problem.extra(D, F) : 0.0;
        r.oneElectron = D.cwiseProduct(Hcore).sum();
        r.qmmmElectronic = D.cwiseProduct(Vmm).sum();
        r.coulomb = 0.5 * D.cwiseProduct(J).sum();
        r.xc = v.energy;
        r.gridElectrons = v.electrons;
        r.nuclearRepulsion = enuc;
        r.qmmmNuclear = enucMM;
        r.qmmm = r.qmmmElectronic + r.qmmmNuclear;
        r.total = r.oneElectron + r.coulomb + r.xc + r.nuclearRepulsion + r.qmmm + r.longRange;
        const double tCommutator = seconds();
        Eigen::MatrixXd err;
        if (haveFactor) {
            // X and XS held where the error's products run, once for the SCF.
            const MatrixProducts& m = chainProducts(products, 2.0 * F.size() * factor.cols());
            if (&m != heldBasisChangeWhere) {
                heldX = m.hold(X);
                heldXS = m.hold(XS);
                heldBasisChangeWhere = &m;
            }
            err = orbitalGradient(m, F, heldX, heldXS, factor);
        }
        else
            err = orbitalGradient(F, D, S, X, XS, nullptr, products);
        r.timings["scf.fockAndDIIS.commutator"] += seconds() - tCommutator;
        const double errMax = err.cwiseAbs().maxCoeff();
        if (recycling) {
            iterates.push_back({F, err, keepCoulomb ? J : Eigen::MatrixXd()});
            if (iterates.size() > (size_t) s.recycledSubspace + 1)  // size_t: no overflow for the largest int
                iterates.pop_front();
        }
        // Recycled pairs after which the error grew tenfold (far more than DIIS's usual unevenness) do not fit this
        // geometry: they are dropped, and DIIS goes on with this SCF's own entries.
        if (diis.recycledPairs() > 0 && errMax > 10 * previousError) {
            diis.dropRecycled();
        }
        // A response step after which the error grew did not fit either: no more of them in this SCF.
        if (responseTaken && errMax > previousError)
            responding = false;
        // The same error again means the same iterate again: DIIS's subspace has covered a small error space and
        // extrapolates to the same Fock matrix (H2 stalled at 2e-7 until its entries were pushed out). This iteration
        // then takes the plain Roothaan step from its own Fock matrix, and DIIS goes on from the next (restarting it
        // instead lost the subspace that a small-gap SCF needed).
        const bool repeated = it > 2 && std::abs(errMax - previousError) <= 1e-9 * errMax;
        previousError = errMax;
        r.energyHistory.push_back(r.total);
        r.errorHistory.push_back(errMax);
        r.iterations = it;
        const double dE = std::abs(r.total - previousEnergy);
        previousEnergy = r.total;
        if (it > 1 && errMax < s.convergence && dE < s.energyConvergence) {
            out.converged = true;
            break;
        }
        // Level-shift fallback when DIIS makes no progress (error not halved in STALL_ITERATIONS iterations): switch
        // the shift on, and double it (up to 8x) at every further stall; DIIS restarts. Progress is counted from the
        // second iteration: a guess's error can be small far from the solution (stretched bonds), and DIIS may need a
        // dozen iterations to come back below it.
        if (it <= 2 || errMax < 0.5 * bestError) {
            bestError = errMax;
            stalled = 0;
        }
        else if (++stalled >= STALL_ITERATIONS) {
            if (shift == 0 && r.levelShiftIteration == 0)
                r.levelShiftIteration = it;
            shift = shift == 0 ? s.levelShift : std::min(2 * shift, 8 * s.levelShift);
            diis.reset();
            stalled = 0;
            bestError = errMax;
        }
        Eigen::MatrixXd Fx;
        if (it <= strategy.dampedIterations) {
            // Damping: a step of (1 - damping) towards the new Fock matrix; DIIS waits until the
            // density settles, since extrapolating from wildly different early iterates diverges.
            Fx = previousF.size() == 0 ? F : Eigen::MatrixXd((1 - strategy.damping) * F + strategy.damping * previousF);
            previousF = Fx;
        }
        else {
            const double tDIIS = seconds();
            Fx = repeated ? F : keepCoulomb ? diis.extrapolate(F, err, J) : diis.extrapolate(F, err);
            r.timings["scf.fockAndDIIS.diis"] += seconds() - tDIIS;
        }
        if (shift > 0) // raise virtual levels: F + b (S - S D S / 2)
            Fx += shift * (S - 0.5 * congruence(D, S));
        r.timings["scf.fockAndDIIS"] += seconds() - t;
        t = seconds();
        BlockDiagonalization rotation;
        bool rotated = false;
        if (refusedRotations < 2 && haveOrbitals && closedShell && shift == 0 && it > strategy.dampedIterations &&
            errMax < ROTATION_ERROR_LIMIT) {
            rotated = blockDiagonalize(Fx, C, closedShellOccupied, ROTATION_TOLERANCE * s.convergence, MAX_ROTATION, rotation,
                                       products);
            refusedRotations += !rotated;
        }
        if (rotated) {
            C = std::move(rotation.orbitals);
            eps = std::move(rotation.energies);
            D = densityFrom(eps, C);  // integer occupations fill the first orbitals, occupied first here
            r.orbitalRotations++;
            r.timings["scf.orbitalRotation"] += seconds() - t;
        }
        else {
            diagonalize(Fx, eps, C);
            D = densityFrom(eps, C);
            haveOrbitals = true;
            r.timings["scf.diagonalization"] += seconds() - t;
        }
        responseTaken = responding && !repeated && shift == 0 && it > strategy.dampedIterations && errMax < RESPONSE_ERROR_LIMIT &&
                        diis.combinedCompanion().size() == J.size();
        if (responseTaken) {
            // The new density D answers Fx, whose Coulomb part is J of the density DIIS's combination implies; the
            // response step corrects the orbitals for the Coulomb matrix moving with the density.
            t = seconds();
            const int occupied = (int) factor.cols();
            const CoulombResponseStep step = coulombResponse(C, eps, occupied, coulomb(D) - diis.combinedCompanion(), coulomb,
                                                             s.coulombResponseSteps, RESPONSE_TOLERANCE, products,
                                                             problem.heldCoulomb);
            factor = step.occupied * std::sqrt(2.0);
            C = step.orbitals;
            D = densityOfFactor(products, factor);
            r.coulombResponseBuilds += 1 + step.coulombBuilds;
            r.timings["scf.coulombResponse"] += seconds() - t;
        }
    }
    r.recycledPairs = diis.recycledPairs();  // 0 if dropped or reset on the way
    // The pairs handed on: this SCF's newest first, then those it was given, at most recycledSubspace.
    // With the response step, the Coulomb matrices' changes go along (all pairs or none, so that they stay matched).
    bool handCoulomb = keepCoulomb;
    for (size_t i = iterates.size(); i-- > 1 && (int) r.fockChanges.size() < s.recycledSubspace;) {
        r.fockChanges.push_back(packedPair(packSymmetric(iterates[i].fock - iterates[i - 1].fock)));
        r.errorChanges.push_back(packedPair(packAntisymmetric(iterates[i].error - iterates[i - 1].error)));
        if (handCoulomb)
            r.coulombChanges.push_back(packedPair(packSymmetric(iterates[i].coulomb - iterates[i - 1].coulomb)));
    }
    const DensityGuess* given = problem.recycled;
    const size_t fresh = r.errorChanges.size();
    handCoulomb = handCoulomb && (recycled.empty() || givenCoulomb);
    for (size_t k = 0; k < recycled.size() && (int) r.fockChanges.size() < s.recycledSubspace; k++) {
        r.fockChanges.push_back(given->fockChanges[recycled[k]]);
        r.errorChanges.push_back(given->errorChanges[recycled[k]]);
        if (handCoulomb)
            r.coulombChanges.push_back(given->coulombChanges[recycled[k]]);
    }
    if (!handCoulomb)
        r.coulombChanges.clear();
    const double tGram = seconds();
    r.errorChangeGram = handedGram(r.errorChanges, fresh, haveRecycledGram ? &recycledGram : nullptr, s.threads);
    r.timings["scf.recycling"] += seconds() - tGram;
    r.density = D;
    r.occupiedOrbitals = (int) std::lround(nElectrons / 2);
    // The energy-weighted density of the gradient's Pulay term, -tr(W dS). For a closed shell, from the orbitals of the
    // density itself: the Lagrange multipliers of their orthonormality, W = 2 C_o (C_o^T F C_o) C_o^T = Y (Y^T F Y) Y^T / 2
    // for D = Y Y^T (equal to 2 sum_occ eps_i C_i C_i^T of F's eigenvectors where the SCF has converged, and exact for
    // this D whatever the rotation among its occupied orbitals), so that the final Fock matrix's eigensystem is not
    // needed for forces. Otherwise (fractional occupations) from that eigensystem below.
    const double tWeighted = seconds();
    const bool weightedFromDensity = closedShell && haveFactor && factor.rows() == D.rows();
    if (weightedFromDensity) {
        const Eigen::MatrixXd multipliers = productOn(products, factor, true, productOn(products, F, false, factor, false), false);
        r.energyWeightedDensity = 0.5 * productOn(products, productOn(products, factor, false, multipliers, false), false, factor, true);
    }
    r.timings["scf.energyWeightedDensity"] += seconds() - tWeighted;
    // Orbitals of the final Fock matrix (unshifted, not extrapolated): reported, and the next geometry's start.
    auto finalOrbitals = [F, XS, &X, nElectrons, fractional, weightedFromDensity,
                          symmetric = problem.symmetricOrthogonalization](QMResult& result, const MatrixProducts* where) {
        const double tFinal = seconds();
        Eigen::VectorXd energies;
        Eigen::MatrixXd orbitals;
        diagonalizeIn(F, X, where, energies, orbitals);
        if (symmetric)
            result.lowdinOrbitals = std::make_shared<const Eigen::MatrixXd>(productOn(where, XS, false, orbitals, false));  // X^T S = S^1/2
        result.orbitalEnergies.assign(energies.data(), energies.data() + energies.size());
        const int occupied = result.occupiedOrbitals;
        result.homoLumoGap = occupied < energies.size() && occupied > 0 ? energies[occupied] - energies[occupied - 1] : 0.0;
        if (!weightedFromDensity) {
            const Eigen::VectorXd occ = occupations(energies, nElectrons, fractional);
            result.energyWeightedDensity =
                productOn(where, orbitals * (occ.array() * energies.array()).matrix().asDiagonal(), false, orbitals, true);
        }
        result.orbitals = orbitals;
        result.timings["scf.finalOrbitals"] += seconds() - tFinal;
    };
    if (problem.deferFinalOrbitals && weightedFromDensity)
        out.finalOrbitals = [finalOrbitals](QMResult& result) { finalOrbitals(result, nullptr); };  // the host's: any thread
    else
        finalOrbitals(r, products);
    return out;
}


} // namespace QM
} // namespace OpenMMDFT
