#ifndef OPENMMDFT_QMMMFORCE_H_
#define OPENMMDFT_QMMMFORCE_H_

/* openmm-dft: QM/MM molecular dynamics for OpenMM.
 *
 * QMMMForce is the one Force of the plugin.  Its first capability is the
 * electrostatics of the MM charges, with the exclusions and the 1-4 scaling
 * derived from the bond graph (rather than from hand-made exception lists).
 * The QM region and least-squares fitting build on the same Force.
 */

#include "openmm/Context.h"
#include "openmm/Force.h"
#include "openmmdft/internal/windowsExportDFT.h"
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace OpenMMDFT {

/**
 * What the last QM computation of a Context produced, in OpenMM units (kJ/mol).
 * totalEnergy = oneElectronEnergy + coulombEnergy + exchangeCorrelationEnergy
 *             + nuclearRepulsionEnergy + qmmmEnergy + longRangeEnergy.
 */
struct QMResults {
    double totalEnergy = 0;
    double oneElectronEnergy = 0;         ///< electrons in the field of the QM nuclei, plus kinetic
    double coulombEnergy = 0;             ///< electron-electron Hartree energy
    double exchangeCorrelationEnergy = 0;
    double nuclearRepulsionEnergy = 0;    ///< QM nuclei among themselves
    double qmmmEnergy = 0;                ///< QM electrons and nuclei with the MM charges
    /** The Ewald remainder (method Ewald; 0 otherwise): the periodic MM charges beyond the explicit ones and the QM
     * region's own images, at the level of the Mulliken charges. */
    double longRangeEnergy = 0;
    /** Mulliken charges (e) of the QM atoms and then the link hydrogens; only with method Ewald, which uses them. */
    std::vector<double> mullikenCharges;
    int scfIterations = 0;                ///< of the SCF attempt that converged
    int scfRestarts = 0;                  ///< failed attempts before it (restarts from atomic densities / core guess)
    int extrapolatedDensities = 0;        ///< past densities the SCF's guess combined (0: atomic densities, 1: the last)
    /** Orthonormal directions of the previous steps' DIIS pairs in the SCF's subspace (setRecycledSubspaceSize; 0 when
     * there were none or the SCF dropped them). */
    int recycledDIISPairs = 0;
    int numMMCharges = 0;                 ///< MM charges that entered the QM Hamiltonian
    std::vector<double> orbitalEnergies;  ///< kJ/mol, ascending
    double homoLumoGap = 0;               ///< kJ/mol (0 when there is no virtual orbital)
    /** Where the XC work ran: "host" (Reference/CPU, or a GPU without double precision) or "device". */
    std::string xcBackend;
    /** Bytes of basis values kept between SCF iterations (in device memory when xcBackend is "device"; 0 with
     * Recompute, or when Precompute's budget, the grid's maxStoredBasisMiB, is exceeded and values are recomputed). */
    double basisValueBytes = 0;
    /** Empty, or why Precompute keeps fewer basis values than it needs (the limit, setBasisStorageLimit). */
    std::string basisStorageNotice;
    /** Where the density-fitting Coulomb contractions of the SCF iterations ran: "host" or "device" (OpenCL/CUDA in
     * double precision arithmetic; the three-centre tensor up to 4 GiB is then kept in device memory). */
    std::string coulombContractions;
    /** Bytes of the stored density-fitting three-centre tensor (in device memory when coulombContractions is
     * "device", with the Coulomb metric, its inverse and the fitting functions' Hermite tables there; 0 with exact
     * Coulomb). */
    double densityFittingBytes = 0;
    /** Where the SCF's products of basis-sized matrices (orbital rotations, Coulomb response, the SCF error) ran:
     * "host" (BLAS) or "device" (OpenCL/CUDA: each product's matrices cross to the device and back; products below
     * about 4 MFLOP, all of them for QM regions of fewer than about 130 basis functions, stay on the host). */
    std::string scfProducts;
    /** Bytes of device memory those products hold (0 on the host): three matrices of the largest product's size. */
    double scfProductBytes = 0;
    /** Bytes of device memory the QM region's work holds on this Context (0 on Reference/CPU): every array of the XC
     * work (the basis values above among them), the density fitting (its tensor above among them), the point charges
     * and the SCF's products, kept from one MD step to the next instead of allocated again; bounded by the largest
     * geometry's need with a sixteenth more room. */
    double deviceMemoryBytes = 0;
    /** ESP charges (e), one per QM atom in QM-atom order, then one per link hydrogen (link-atom order); empty when the
     *  ESP charge method is NoESPCharges. */
    std::vector<double> espCharges;
    /** Wall-clock seconds of the last computation's phases, for finding where a step's time goes: the SCF's
     * "setup.integrals", "setup.grid", "setup.xc", "setup.coulomb", "guess", "scf.coulomb", "scf.xc",
     * "scf.diagonalization" and "scf.total"; the gradient's "gradient.oneElectron", "gradient.pointCharges",
     * "gradient.coulomb", "gradient.xc" and "gradient.total" (absent when no forces were asked for; on a GPU platform
     * the device's terms overlap the host's, so a phase that waits for the device carries the time of the kernels
     * queued before it);
     * "embedding" (placing the QM and MM atoms), "espCharges", and "total" (the whole QM computation). */
    std::map<std::string, double> timings;
};

/**
 * QMMMForce computes, for every pair of particles i < j,
 *
 *     E = ONE_4PI_EPS0 * f_ij * q_i * q_j / r_ij
 *
 * where f_ij follows from the shortest path between i and j in the bond graph:
 * 0 if it has one or two bonds (excluded), the 1-4 scale (default 0.5) if it has
 * exactly three, and 1 otherwise (including particles in different molecules).
 * This is the classification NonbondedForce::createExceptionsFromBonds() makes.
 *
 * Units are OpenMM's: charges in e, distances in nm, energies in kJ/mol.
 *
 * The nonbonded methods mean what they mean for the Coulomb part of
 * NonbondedForce: NoCutoff, CutoffNonPeriodic and CutoffPeriodic (the latter
 * two use the reaction-field approximation with the given dielectric).  Scaled
 * 1-4 pairs are computed like NonbondedForce exceptions: plain 1/r, no cutoff,
 * no reaction field, no periodic images.
 */
class OPENMM_EXPORT_DFT QMMMForce : public OpenMM::Force {
public:
    enum NonbondedMethod {
        /** No cutoff, no periodic boundary conditions. */
        NoCutoff = 0,
        /** Reaction field within a cutoff, no periodic boundary conditions. */
        CutoffNonPeriodic = 1,
        /** Reaction field within a cutoff, minimum-image periodic boundary conditions. */
        CutoffPeriodic = 2,
        /**
         * Periodic, for Systems whose NonbondedForce uses PME or Ewald: the MM-MM Coulomb interactions stay in that
         * NonbondedForce (OpenMM's own kernels; this Force computes no MM pairs, and the QM atoms must have zero
         * charge there). The QM region sees the explicit MM charges of the molecules within the cutoff as with
         * CutoffPeriodic, plus the rest of the periodic MM charge distribution (every image, and its own images)
         * through an Ewald sum at the level of its Mulliken charges, made part of the SCF and of the forces
         * (QM/MM-Ewald; see docs/QMMM-MD.md).
         */
        Ewald = 3
    };
    /** How the electron-electron Coulomb energy is computed. */
    enum CoulombMethod {
        /** Density fitting with an auxiliary basis (the default). */
        DensityFitting = 0,
        /** Exact four-center integrals. */
        Exact = 1
    };
    /** Radial quadrature of the atomic grids. */
    enum RadialScheme {
        TreutlerAhlrichs = 0,
        /** Becke's Gauss-Chebyshev (second kind) mapping. */
        BeckeChebyshev = 1
    };
    /** How grid points are shared between atoms. */
    enum AtomicPartition {
        Becke = 0,
        StratmannScuseriaFrisch = 1
    };
    /**
     * Smaller angular grids on some radial shells of each atom. NWChemPruning is NWChem's scheme, PySCF's
     * default (gen_grid.nwchem_prune): by the shell's radius relative to the atom's Bragg radius, the full grid
     * in the valence region and smaller ones near the nucleus and far out (about a third fewer points at
     * (50, 194)). TreutlerAhlrichsPruning: 14 points on the inner third of the radial shells, 50 up to the
     * inner half (gen_grid.treutler_prune).
     */
    enum GridPruning {
        NoPruning = 0,
        NWChemPruning = 1,
        TreutlerAhlrichsPruning = 2
    };
    /** Whether basis-function values on the grid are kept between SCF iterations or recomputed. */
    enum BasisFunctionStorage {
        Precompute = 0,
        Recompute = 1
    };
    /** Shells with l >= 2 as in the basis file, or forced cartesian or spherical. */
    enum AngularFunctions {
        BasisSetDefault = 0,
        Cartesian = 1,
        Spherical = 2
    };
    /**
     * Charges fitted to the electrostatic potential of the QM region (its electrons and nuclei, not
     * the MM charges) after each QM computation, with their sum fixed to the QM charge.
     */
    /** How each MD step's SCF starts: see setDensityExtrapolation. */
    enum DensityExtrapolation {
        PreviousDensity = 0,
        ASPC = 1,
        XLBOMD = 2,
        PolynomialExtrapolation = 3
    };
    enum ESPChargeMethod {
        /** No ESP charges (the default: sampling the potential costs time). */
        NoESPCharges = 0,
        /** CHELPG cubic grid (Breneman-Wiberg). */
        CHELPG = 1,
        /** Merz-Kollman shells at 1.4-2.0 x the vdW radii. */
        MerzKollman = 2
    };
    /**
     * How the charges of the MM atoms bonded to the QM region (M1, across a link atom) enter the QM Hamiltonian.
     * Both remove M1's charge q from the embedding and keep the embedded total, each M1-M2 bond (M2: M1's other
     * MM neighbours, n of them) getting q0 = q / n; neither changes the MM-MM electrostatics.
     */
    enum BoundaryChargeScheme {
        /** Redistributed charge and dipole (Lin & Truhlar, J. Phys. Chem. A 109, 3991 (2005)): 2 q0 at the middle of
         * each M1-M2 bond and q0 less on M2, which keeps each bond's dipole. The default. */
        RedistributedChargeAndDipole = 0,
        /** Charge shift (Sherwood et al., J. Mol. Struct. THEOCHEM 632, 1 (2003)): q0 moves onto each M2, and a pair of
         * opposite charges on the M1-M2 line at 6% of the bond length either side of M2 restores the bond's dipole
         * (the ChemShell/ASH construction). */
        ChargeShift = 1
    };
    QMMMForce();
    /** Number of particles; must equal the System's when a Context is created. */
    int getNumParticles() const {
        return charges.size();
    }
    /** Add a particle with a charge (e); returns its index. Call once per System particle. */
    int addParticle(double charge);
    void getParticleParameters(int index, double& charge) const;
    void setParticleParameters(int index, double charge);

    /**
     * Add a bond between two particles to the bond graph. A bond that is already
     * present (in either order) is not added again: its existing index is returned.
     * A bond of a particle with itself is refused.
     */
    int addBond(int particle1, int particle2);
    int getNumBonds() const {
        return bonds.size();
    }
    void getBondParameters(int index, int& particle1, int& particle2) const;

    /** Scale factor of pairs exactly three bonds apart (default 0.5). */
    double getCoulomb14Scale() const {
        return coulomb14Scale;
    }
    void setCoulomb14Scale(double scale);

    NonbondedMethod getNonbondedMethod() const {
        return nonbondedMethod;
    }
    void setNonbondedMethod(NonbondedMethod method);
    /** Cutoff distance (nm), used by the cutoff methods (default 1.0). */
    double getCutoffDistance() const {
        return cutoffDistance;
    }
    void setCutoffDistance(double distance);
    /** The relative error of the Ewald sum (method Ewald), as NonbondedForce::setEwaldErrorTolerance; default 5e-4;
     *  between 0 and 0.5 (exclusive). */
    void setEwaldErrorTolerance(double tolerance);
    double getEwaldErrorTolerance() const {
        return ewaldErrorTolerance;
    }
    /** Dielectric of the reaction field beyond the cutoff (default 78.3). */
    double getReactionFieldDielectric() const {
        return reactionFieldDielectric;
    }
    void setReactionFieldDielectric(double dielectric);

    // ---- The QM region (restricted Kohn-Sham LDA, electrostatically embedded) ----

    /**
     * Make a particle a QM atom with the given atomic number. Its MM charge then takes part
     * in no interaction: the QM region interacts with the MM charges through its electrons
     * and nuclei. A bond to an MM particle gets a hydrogen link atom (getNumLinkAtoms).
     */
    int addQMAtom(int particleIndex, int atomicNumber);
    int getNumQMAtoms() const {
        return qmAtoms.size();
    }
    void getQMAtomParameters(int index, int& particleIndex, int& atomicNumber) const;
    /** Net charge of the QM region (e); electrons = sum of atomic numbers - charge (must be even). */
    void setQMCharge(int charge);
    int getQMCharge() const {
        return qmCharge;
    }
    /** A shipped basis set (STO-3G, 6-31G, 6-31G*, def2-SVP, DZVP, ...) or a path to an NWChem-format file. */
    void setBasisSet(const std::string& nameOrPath);
    const std::string& getBasisSet() const {
        return basisSet;
    }
    /** Force spherical (true) or cartesian (false) shells, overriding the basis set's convention. */
    void setSphericalBasis(bool spherical) {
        angularFunctions = spherical ? Spherical : Cartesian;
    }
    void setAngularFunctions(AngularFunctions functions);
    AngularFunctions getAngularFunctions() const {
        return angularFunctions;
    }
    void setCoulombMethod(CoulombMethod method);
    CoulombMethod getCoulombMethod() const {
        return coulombMethod;
    }
    /** Auxiliary basis of density fitting: a shipped name (def2-universal-jfit, DGauss-A1/A2 fitting) or a path. */
    void setAuxiliaryBasisSet(const std::string& nameOrPath);
    const std::string& getAuxiliaryBasisSet() const {
        return auxiliaryBasisSet;
    }
    /** "SVWN5" (default: Slater + VWN5) or "SVWN_RPA" (Slater + VWN's RPA parametrization). */
    void setFunctional(const std::string& name);
    const std::string& getFunctional() const {
        return functional;
    }
    /** Points per atom: radial shells and Lebedev angular points (6 ... 1202). */
    void setGrid(int radialPoints, int angularPoints);
    void getGrid(int& radialPoints, int& angularPoints) const;
    void setRadialScheme(RadialScheme scheme);
    RadialScheme getRadialScheme() const {
        return radialScheme;
    }
    void setAtomicPartition(AtomicPartition partition);
    AtomicPartition getAtomicPartition() const {
        return atomicPartition;
    }
    /** Pruning of the angular grids (default NoPruning: every radial shell has the full Lebedev grid of setGrid). */
    void setGridPruning(GridPruning pruning);
    GridPruning getGridPruning() const {
        return gridPruning;
    }
    /**
     * Grouping of grid points (seed 001, section 3.2): points within the first sphereShellFraction
     * of each atom's radial shells form a sphere group, the others go to cubes of edge cubeEdge (nm).
     */
    void setGridGrouping(double cubeEdge, double sphereShellFraction);
    void getGridGrouping(double& cubeEdge, double& sphereShellFraction) const;
    /**
     * Screening of basis functions per group: a shell is significant for a group when
     * alpha_min * d^2 < threshold (d in bohr). Larger keeps more functions; 0 < threshold. Default 20: the
     * energy within about 1e-10 Eh of keeping every function.
     */
    void setSignificanceThreshold(double threshold);
    double getSignificanceThreshold() const {
        return significanceThreshold;
    }
    void setBasisFunctionStorage(BasisFunctionStorage storage);
    BasisFunctionStorage getBasisFunctionStorage() const {
        return basisFunctionStorage;
    }
    /**
     * The most memory (MiB) that Precompute may use for the basis values it keeps between SCF
     * iterations (device memory on the GPU platforms; default 2048). Values beyond it are recomputed
     * every iteration (the energy does not change), and QMResults::basisStorageNotice says so.
     */
    void setBasisStorageLimit(double mebibytes);
    double getBasisStorageLimit() const {
        return basisStorageLimit;
    }
    /** SCF convergence: largest element of the orbital gradient FDS - SDF (atomic units). */
    void setSCFConvergence(double threshold);
    double getSCFConvergence() const {
        return scfConvergence;
    }
    void setMaxSCFIterations(int iterations);
    int getMaxSCFIterations() const {
        return maxSCFIterations;
    }
    /**
     * The SCF's starting density at each MD step (default ASPC, order 3). PreviousDensity starts from the
     * last converged density. ASPC (Kolafa's always-stable predictor-corrector, J. Comput. Chem. 25, 335
     * (2004)) extrapolates the AO density matrices of the last order + 1 steps, which typically saves a
     * third of the SCF iterations; the SCF still converges to setSCFConvergence, so energies and forces
     * are the same to that accuracy. XLBOMD propagates an auxiliary density by Niklasson's extended-Lagrangian
     * dynamics with dissipation (J. Chem. Phys. 130, 214109 (2009)) as the guess, K = order from 3 to 7.
     * PolynomialExtrapolation takes the polynomial of degree order through the last order + 1 densities (exact for
     * a density that is such a polynomial in time): a closer guess than ASPC's, which trades accuracy for the
     * stability an SCF stopped after one iteration needs, and which a converged SCF does not. The history restarts
     * after setPositions, a loaded checkpoint, updateParametersInContext, a change of the embedded MM charges, or
     * unequal step spacing. order: 1 to 6 for ASPC and PolynomialExtrapolation, 3 to 7 for XLBOMD (ignored by
     * PreviousDensity).
     */
    void setDensityExtrapolation(DensityExtrapolation method, int order = 3);
    DensityExtrapolation getDensityExtrapolation() const {
        return densityExtrapolation;
    }
    int getDensityExtrapolationOrder() const {
        return densityExtrapolationOrder;
    }
    void setDIISSubspaceSize(int size);
    int getDIISSubspaceSize() const {
        return diisSubspaceSize;
    }
    /**
     * How many pairs (change of the Fock matrix, change of the SCF error FDS - SDF) of the previous MD steps' SCF
     * iterations join the DIIS subspace of the next step's SCF (default 96; 0 turns this off). Along a trajectory
     * they tell DIIS how the error answers the Fock matrix in the directions where the extrapolated guess errs
     * (Krylov-subspace recycling), so that the first DIIS step removes most of the guess's error. The SCF still
     * converges to setSCFConvergence: it changes the number of iterations, not the result. They are used only
     * while the trajectory continues (as for the density extrapolation) and without linearly dependent basis
     * functions; pairs after which the error grows tenfold are dropped for the rest of that SCF. Memory: 2 x pairs
     * matrices of the basis size (3 x pairs with the Coulomb-response step, the default), held once (the density
     * history shares them with the SCF; 0.43 GB for 24 QM waters in DZVP).
     */
    void setRecycledSubspaceSize(int pairs);
    int getRecycledSubspaceSize() const {
        return recycledSubspaceSize;
    }
    /**
     * Conjugate-gradient steps of the SCF's Coulomb-response correction (default 2; 0 turns it off). After each DIIS
     * step the new occupied orbitals are corrected for the Coulomb matrix that moves with their density (the
     * coupled-perturbed response in the Coulomb kernel alone), which takes out the SCF's slow directions in a
     * cluster of molecules: charge moving between them. Each step costs one Coulomb build (a density-fitted J is
     * cheap next to the XC integration). The SCF still converges to setSCFConvergence: it changes the number of
     * iterations, not the result (closed shells with integer occupations; not while a level shift is on). With
     * recycled DIIS pairs it keeps the pairs' changes of the Coulomb matrix too: memory 3 x pairs matrices instead
     * of 2.
     */
    void setCoulombResponseSteps(int steps);
    int getCoulombResponseSteps() const {
        return coulombResponseSteps;
    }
    /**
     * Energy-only mode (default false). Normally the QM region contributes its energy and its analytic
     * forces, on the QM atoms and on the MM charges it sees: the exact derivative of the energy as
     * computed (density-fitted Coulomb; the XC grid moves with the atoms, partition-weight
     * derivatives included), so dynamics conserves energy to the accuracy of the SCF. In energy-only
     * mode the QM energy is added and the QM region has NO forces (cheaper for single points and
     * scans). Integrator steps (forces alone, or energy and forces in a CustomIntegrator) and energy
     * minimization are refused with an OpenMMException. getState(getEnergy=True) asks for forces too
     * when the integrator's kinetic energy needs them (Verlet): such evaluations get the energy and NaN
     * forces on the QM atoms (on the GPU platforms, whose fixed-point force buffers have no NaN,
     * -2^30 kJ/mol/nm per component plus the other Forces' contributions); see docs/QMMM-MD.md.
     */
    void setQMEnergyOnly(bool energyOnly) {
        qmEnergyOnly = energyOnly;
    }
    bool getQMEnergyOnly() const {
        return qmEnergyOnly;
    }
    /** ESP charges computed after each QM computation (QMResults::espCharges); see docs/ESP-charges.md. */
    void setESPChargeMethod(ESPChargeMethod method);
    ESPChargeMethod getESPChargeMethod() const {
        return espChargeMethod;
    }
    /**
     * Smooth embedding with a cutoff (CutoffNonPeriodic, CutoffPeriodic): the charges of an MM molecule enter the QM
     * Hamiltonian scaled by S(R), R the shortest distance between an atom of the molecule and a QM atom, S = 1 up to
     * the switching distance and falling to 0 at the cutoff as OpenMM's switching function does,
     * S = 1 - 10x^3 + 15x^4 - 6x^5 with x = (R - switchingDistance) / (cutoff - switchingDistance). A molecule entering
     * or leaving the embedding then changes the energy continuously, and the forces (including -dE/dS dS/dR on the
     * closest pair) are its exact derivative wherever the closest pair does not change. Default off (a molecule is
     * embedded whole or not at all). The switching distance must be below the cutoff.
     */
    void setUseEmbeddingSwitchingFunction(bool use) {
        useEmbeddingSwitching = use;
    }
    bool getUseEmbeddingSwitchingFunction() const {
        return useEmbeddingSwitching;
    }
    void setEmbeddingSwitchingDistance(double distance);
    double getEmbeddingSwitchingDistance() const {
        return embeddingSwitchingDistance;
    }
    /**
     * The force group of the QM region's energy and forces (-1, the default: the Force's own group), so that
     * multiple time step integrators (MTSIntegrator, MTSLangevinIntegrator) can evaluate the QM region less
     * often than the MM terms, as NonbondedForce::setReciprocalSpaceForceGroup does for reciprocal space.
     * The MM electrostatics stay in the Force's group.
     */
    void setQMForceGroup(int group);
    int getQMForceGroup() const {
        return qmForceGroup;
    }
    /**
     * Link atoms: every bond between a QM atom (Q1) and an MM particle (M1) caps the QM region with a hydrogen on
     * the Q1-M1 line at the link bond length from Q1 (by Q1's element: setLinkAtomBondLength). Its position follows
     * Q1 and M1, and its force goes to them by the chain rule. They are found from the bonds and the QM atoms, in
     * bond order; an M1 must have another MM neighbour (for its boundary charge) and only one QM neighbour.
     */
    int getNumLinkAtoms() const;
    /** The QM atom's particle, the MM particle, and the link bond length (nm) of link atom index. */
    void getLinkAtomParameters(int index, int& qmParticle, int& mmParticle, double& bondLength) const;
    /**
     * The distance (nm) from a QM atom of this element to its link hydrogen. Defaults: the X-H bond lengths of
     * C 0.109, N 0.101, O 0.096, Si 0.148, P 0.142, S 0.134 nm; other elements need one to be set. At most
     * 0.5 nm.
     */
    void setLinkAtomBondLength(int atomicNumber, double length);
    /** Throws OpenMMException for an element with no default and none set. */
    double getLinkAtomBondLength(int atomicNumber) const;
    /** Elements whose link bond length was set (setLinkAtomBondLength), for serialization. */
    const std::map<int, double>& getLinkAtomBondLengthsSet() const {
        return linkBondLengths;
    }
    void setBoundaryChargeScheme(BoundaryChargeScheme scheme);
    BoundaryChargeScheme getBoundaryChargeScheme() const {
        return boundaryChargeScheme;
    }
    /** What the last QM computation in a Context produced (throws if there has been none). */
    QMResults getQMResults(const OpenMM::Context& context) const;

    /**
     * Copy the charges, the 1-4 scale and every QM setting (charge, basis sets, functional, grid, SCF
     * settings, energy-only mode, ESP charges) into a Context. All or nothing: the new settings are
     * checked (and basis sets read) before anything is applied; an OpenMMException leaves the Context
     * as it was. Fixed for the life of a Context, refused here (call Context::reinitialize()): the
     * bond graph, the QM atoms, the nonbonded method, the cutoff and the reaction-field dielectric.
     */
    void updateParametersInContext(OpenMM::Context& context);

    bool usesPeriodicBoundaryConditions() const {
        return nonbondedMethod == CutoffPeriodic || nonbondedMethod == Ewald;
    }

protected:
    OpenMM::ForceImpl* createImpl() const;

private:
    std::vector<double> charges;
    std::vector<std::pair<int, int> > bonds;
    std::set<std::pair<int, int> > bondSet;  // (min, max) of each bond, to ignore duplicates in O(log n)
    double coulomb14Scale, cutoffDistance, reactionFieldDielectric;
    NonbondedMethod nonbondedMethod;
    std::vector<std::pair<int, int> > qmAtoms;  // (particle, atomic number)
    int qmCharge;
    std::string basisSet, auxiliaryBasisSet, functional;
    AngularFunctions angularFunctions;
    CoulombMethod coulombMethod;
    int radialPoints, angularPoints;
    RadialScheme radialScheme;
    AtomicPartition atomicPartition;
    GridPruning gridPruning;
    double cubeEdge, sphereShellFraction, significanceThreshold;
    BasisFunctionStorage basisFunctionStorage;
    double basisStorageLimit;
    double scfConvergence;
    int maxSCFIterations, diisSubspaceSize, recycledSubspaceSize, coulombResponseSteps;
    DensityExtrapolation densityExtrapolation;
    int densityExtrapolationOrder;
    int qmForceGroup;
    bool useEmbeddingSwitching;
    double embeddingSwitchingDistance;
    double ewaldErrorTolerance;
    std::map<int, double> linkBondLengths;  // set by the user, nm, by atomic number
    BoundaryChargeScheme boundaryChargeScheme;
    bool qmEnergyOnly;
    ESPChargeMethod espChargeMethod;
};

} // namespace OpenMMDFT

#endif /*OPENMMDFT_QMMMFORCE_H_*/
