/* The device XC back end (CommonXCBackend, the Compute API kernels of kernels/qmXC.cc) against the host
 * back end, through the QM engine itself: the same SCF energy and the same analytic gradient (grid response
 * included), with the basis values kept on the device, recomputed, and recomputed in many small chunks (a
 * tiny memory budget), for spherical and cartesian d and f shells, Becke's and SSF's partitions (their weights
 * and weight derivatives run on the device too), and a water dimer on the MD benchmarks' grid; the
 * density-fitting contractions run on the device too. One body for
 * every GPU platform: the platform's test supplies the factory (OpenCL links it, CUDA's comes from the plugin).
 * Bounds: 1e-9 Eh and 1e-8 Eh/bohr (the same arithmetic in another summation order); grid weights 1e-12
 * absolute, point by point; SCF iterations within one of the host's. */
#pragma once
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Grid.h"
#include "openmmdft/qm/IntegralGradients.h"
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <openmm/OpenMMException.h>
#include <gtest/gtest.h>
#include <cmath>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace GpuXCTest {

using namespace OpenMMDFT::QM;

inline std::vector<QMAtom> methanol() {
    const double a = 1.0 / 0.529177210903;
    return {{6, {-0.047 * a, 0.663 * a, 0}}, {8, {-0.047 * a, -0.758 * a, 0}}, {1, {-1.035 * a, 1.086 * a, 0}},
            {1, {0.504 * a, 1.004 * a, 0.89 * a}}, {1, {0.504 * a, 1.004 * a, -0.89 * a}}, {1, {0.88 * a, -1.013 * a, 0}}};
}

/** A hydrogen-bonded water dimer (bohr). */
inline std::vector<QMAtom> waterDimer() {
    return {{8, {0.0, 0.0, 0.0}}, {1, {1.81, 0.0, 0.0}}, {1, {-0.45, 1.75, 0.0}},
            {8, {5.4, 0.3, 0.2}}, {1, {6.0, 1.9, 0.5}}, {1, {6.1, -0.6, -1.3}}};
}

struct Case {
    std::string basis;
    BasisFunctionStorage storage;
    double budgetMiB;
    AngularConvention angular;
    AtomicPartition partition = AtomicPartition::Becke;
    AtomicSizeAdjustment sizeAdjustment = AtomicSizeAdjustment::None;
    bool dimerOnBenchmarkGrid = false;  ///< the water dimer on grid (50, 194) instead of methanol on (30, 110)
    GridPruning pruning = GridPruning::None;
};

inline void PrintTo(const Case& c, std::ostream* os) {
    *os << c.basis << (c.storage == BasisFunctionStorage::Precompute ? " precompute " : " recompute ") << c.budgetMiB << " MiB"
        << (c.angular == AngularConvention::Cartesian ? " cartesian" : "")
        << (c.partition == AtomicPartition::StratmannScuseriaFrisch ? " SSF" : "")
        << (c.sizeAdjustment != AtomicSizeAdjustment::None ? " size-adjusted" : "") << (c.dimerOnBenchmarkGrid ? " water dimer (50,194)" : "")
        << (c.pruning == GridPruning::NWChem ? " NWChem-pruned" : "");
}

inline std::vector<Case> allCases() {
    return {Case{"6-31G*", BasisFunctionStorage::Precompute, 2048, AngularConvention::BasisDefault},
            Case{"6-31G*", BasisFunctionStorage::Recompute, 2048, AngularConvention::BasisDefault},
            Case{"6-31G*", BasisFunctionStorage::Precompute, 0.05, AngularConvention::BasisDefault},
            Case{"def2-TZVP", BasisFunctionStorage::Recompute, 0.2, AngularConvention::Spherical},
            Case{"DZVP", BasisFunctionStorage::Precompute, 2048, AngularConvention::Cartesian},
            // The partition-weight derivatives with SSF's cells and with Becke's size adjustment.
            Case{"6-31G*", BasisFunctionStorage::Precompute, 2048, AngularConvention::BasisDefault, AtomicPartition::StratmannScuseriaFrisch},
            Case{"6-31G*", BasisFunctionStorage::Precompute, 2048, AngularConvention::BasisDefault, AtomicPartition::Becke,
                 AtomicSizeAdjustment::TreutlerRadii},
            // The settings of the QM/MM MD benchmarks (DZVP, (50, 194), QMMMForce's default partition), two molecules.
            Case{"DZVP", BasisFunctionStorage::Precompute, 2048, AngularConvention::BasisDefault, AtomicPartition::Becke,
                 AtomicSizeAdjustment::None, true},
            // The same on NWChem-pruned angular grids (a Lebedev grid per radial shell).
            Case{"DZVP", BasisFunctionStorage::Precompute, 2048, AngularConvention::BasisDefault, AtomicPartition::Becke,
                 AtomicSizeAdjustment::None, true, GridPruning::NWChem}};
}

/** A back end factory that uses another's device XC but leaves the grid's partition weights (and the density-fitting
 * contractions) to the host. */
class HostWeightsFactory : public XCBackendFactory {
public:
    explicit HostWeightsFactory(std::shared_ptr<const XCBackendFactory> device) : device(std::move(device)) {}
    std::unique_ptr<XCBackend> create(const XCGeometry& geometry) const override {
        return device->create(geometry);
    }
private:
    std::shared_ptr<const XCBackendFactory> device;
};

/**
 * The raw grid's partition weights from the device against the host's partitionWeight(), point by point. The
 * bound is absolute: where a cell function is nearly 0 (s = (1 - f)/2 with f near 1) the host's and the device's
 * rounding (fused multiply-adds on GPUs) differ relatively but not absolutely.
 */
inline void expectDeviceWeightsEqualHost(const PartitionWeightEvaluator& evaluator, const std::vector<QMAtom>& atoms,
                                         const GridSettings& settings) {
    std::vector<RadialGrid> radial;
    std::vector<std::vector<int>> angularSizes;
    size_t numPoints = 0;
    for (const QMAtom& atom : atoms) {
        radial.push_back(treutlerAhlrichsGrid(settings.radialPoints, atom.Z, settings.treutlerAtomicXi));
        angularSizes.push_back(prunedAngularSizes(settings.pruning, atom.Z, radial.back(), settings.angularPoints));
        for (int size : angularSizes.back())
            numPoints += size;
    }
    std::vector<double> device;
    evaluator.weights(atoms, settings, radial, angularSizes, device);
    ASSERT_EQ(device.size(), numPoints);
    double worst = 0;
    size_t index = 0;
    for (size_t A = 0; A < atoms.size(); A++)
        for (int i = 0; i < settings.radialPoints; i++)
            for (const auto& u : lebedevGrid(angularSizes[A][i]).xyz) {
                const double r[3] = {atoms[A].xyz[0] + radial[A].r[i] * u[0], atoms[A].xyz[1] + radial[A].r[i] * u[1],
                                     atoms[A].xyz[2] + radial[A].r[i] * u[2]};
                const double difference = std::abs(device[index++] - partitionWeight(atoms, (int) A, r, settings));
                worst = std::max(worst, std::isfinite(difference) ? difference : INFINITY);
            }
    EXPECT_LT(worst, 1e-12) << "partition weights";
}

/** The device back end made by factory against the host's, through KohnShamLDA, for one case. */
inline void testDeviceXCMatchesHost(const std::shared_ptr<const XCBackendFactory>& factory, const Case& c) {
    QMSettings s;
    s.basisSet = c.basis;
    s.angular = c.angular;
    s.grid.radialPoints = c.dimerOnBenchmarkGrid ? 50 : 30;
    s.grid.angularPoints = c.dimerOnBenchmarkGrid ? 194 : 110;
    s.storage = c.storage;
    s.grid.maxStoredBasisMiB = c.budgetMiB;
    s.convergence = 1e-9;
    s.grid.partition = c.partition;
    s.grid.sizeAdjustment = c.sizeAdjustment;
    s.grid.pruning = c.pruning;
    const std::vector<QMAtom> atoms = c.dimerOnBenchmarkGrid ? waterDimer() : methanol();
    const std::vector<PointCharge> mm = {{{5.0, 0.5, 9.0}, -0.8}, {{-4.0, 3.0, 1.0}, 0.4}, {{-3.0, -4.0, -2.0}, 0.4}};
    ASSERT_TRUE(factory->partitionWeights() != nullptr);
    expectDeviceWeightsEqualHost(*factory->partitionWeights(), atoms, s.grid);

    // The whole engine: the host's back end, the device's with the host's grid weights (the same grid, so the
    // same arithmetic up to summation order), and the device's with its own weights (grids that may differ by
    // a point whose weight rounds to zero on one side only).
    KohnShamLDA host(s), deviceXC(s, std::make_shared<HostWeightsFactory>(factory)), device(s, factory);
    const QMResult h = host.compute(atoms, 0, mm), x = deviceXC.compute(atoms, 0, mm), d = device.compute(atoms, 0, mm);
    EXPECT_EQ(h.coulombContractions, "host");
    EXPECT_EQ(x.coulombContractions, "host");
    EXPECT_EQ(d.coulombContractions, "device");  // the DF tensor in device memory, B d and B^T c there
    EXPECT_STREQ(device.densityFitting()->integralsLocation(), "device");  // and computed there
    for (const QMResult* r : {&x, &d}) {
        EXPECT_EQ(r->xcBackend, "device");
        EXPECT_NEAR(r->total, h.total, 1e-9);
        EXPECT_NEAR(r->xc, h.xc, 1e-9);
        EXPECT_NEAR(r->gridElectrons, h.gridElectrons, 1e-9);
        EXPECT_LE(std::abs(r->iterations - h.iterations), 1) << "SCF iterations: host " << h.iterations << ", device " << r->iterations;
    }
    const QMGradient gh = host.gradient(h), gx = deviceXC.gradient(x), gd = device.gradient(d);
    EXPECT_LT((gx.atoms - gh.atoms).cwiseAbs().maxCoeff(), 1e-8) << "device XC\n" << gx.atoms << "\nhost\n" << gh.atoms;
    EXPECT_LT((gd.atoms - gh.atoms).cwiseAbs().maxCoeff(), 1e-8) << "device XC and weights\n" << gd.atoms << "\nhost\n" << gh.atoms;
    EXPECT_LT((gd.mm - gh.mm).cwiseAbs().maxCoeff(), 1e-8);
    const QMGradient fh = host.gradientFixedGrid(h), fd = device.gradientFixedGrid(d);
    EXPECT_LT((fd.atoms - fh.atoms).cwiseAbs().maxCoeff(), 1e-8) << "fixed grid: device\n" << fd.atoms << "\nhost\n" << fh.atoms;
    const bool kept = c.storage == BasisFunctionStorage::Precompute && c.budgetMiB > 1;
    EXPECT_EQ(d.storedBasisBytes > 0, kept);

    // The SCF hands the back end its occupied orbitals F (D = F F^T) too, from which the device forms rho in the
    // batches with more functions than orbitals: the same contribution as from D alone, to rounding.
    const std::unique_ptr<XCBackend> xc = factory->create(XCGeometry{device.basis(), device.grid(), atoms, s});
    const Eigen::MatrixXd F = d.orbitals.leftCols(d.occupiedOrbitals) * std::sqrt(2.0);
    const Eigen::MatrixXd D = F * F.transpose();
    const XCContribution fromD = xc->compute(D, nullptr), fromF = xc->compute(D, &F);
    EXPECT_NEAR(fromF.energy, fromD.energy, 1e-11 * std::abs(fromD.energy));
    EXPECT_NEAR(fromF.electrons, fromD.electrons, 1e-11 * fromD.electrons);
    EXPECT_LT((fromF.matrix - fromD.matrix).cwiseAbs().maxCoeff(), 1e-11);
}

/**
 * The partition-weight derivatives' kernel as a factory compiles it with small cell sizes (smallCells: XCPartitionSizes
 * of 2 recorded products and sweeps of 2 cells), so that on a water trimer (9 atoms, points keeping up to 9 cells)
 * every path of it runs: products recorded and formed again, several sweeps per point, the parent atom's sum. The XC
 * gradient of its back end with the grid's response against the host's from the same density and grid, for Becke's
 * and SSF's cells, to 1e-10 Eh/bohr (the work group's fixed-point sums round each term to 2^-48); the response itself
 * (the difference from the fixed grid's gradient) is well above that.
 */
inline void testPartitionDerivativesInSmallCellBlocks(const std::shared_ptr<const XCBackendFactory>& smallCells) {
    std::vector<QMAtom> atoms = waterDimer();
    for (int i = 0; i < 3; i++) {  // a third water beside the two
        QMAtom atom = atoms[i];
        atom.xyz[1] += 5.2;
        atom.xyz[2] += 1.0;
        atoms.push_back(atom);
    }
    for (AtomicPartition partition : {AtomicPartition::Becke, AtomicPartition::StratmannScuseriaFrisch}) {
        QMSettings s;
        s.basisSet = "6-31G*";
        s.grid.radialPoints = 30;
        s.grid.angularPoints = 110;
        s.grid.partition = partition;
        s.convergence = 1e-8;
        KohnShamLDA engine(s);
        const QMResult r = engine.compute(atoms, 0, {});
        const XCGeometry geometry{engine.basis(), engine.grid(), atoms, s};
        const std::unique_ptr<XCBackend> host = HostXCBackendFactory().create(geometry), device = smallCells->create(geometry);
        const Eigen::MatrixXd gh = host->gradient(r.density, true), gd = device->gradient(r.density, true);
        const Eigen::MatrixXd fixed = host->gradient(r.density, false);
        const char* name = partition == AtomicPartition::Becke ? "Becke" : "SSF";
        EXPECT_EQ(std::string(device->name()), "device");
        EXPECT_LT((gd - gh).cwiseAbs().maxCoeff(), 1e-10) << name << ": device\n" << gd << "\nhost\n" << gh;
        EXPECT_GT((gh - fixed).cwiseAbs().maxCoeff(), 1e-6) << name << ": the grid's response is too small to test";
    }
}

/** DZVP on a small grid (30, 110), converged to 1e-9: the settings of the water-dimer engine cases. */
inline QMSettings smallDimerSettings() {
    QMSettings s;
    s.basisSet = "DZVP";
    s.grid.radialPoints = 30;
    s.grid.angularPoints = 110;
    s.convergence = 1e-9;
    return s;
}

/** Two MM charges near the water dimer (bohr, e). */
inline std::vector<PointCharge> twoCharges() {
    return {{{5.0, 0.5, 9.0}, -0.8}, {{-4.0, 3.0, 1.0}, 0.4}};
}

/**
 * One engine through three geometries (the back end and density fitting of each made anew, their device arrays taken
 * back from the factory's pool: the basis values, the gradient's chunk buffers, the shell tables, the point charges'
 * arrays; the third geometry has a third water, so that they grow) against a fresh engine for each geometry: the same
 * energy and gradient to 1e-10 Eh and 1e-9 Eh/bohr (the same arithmetic; a stale or shared array would differ by far
 * more). allocationsMade, where given, counts the device allocations of the factory's pool: the second geometry, a small
 * displacement of the first as in an MD step, makes none (its arrays come back from the first geometry's engines with
 * room enough).
 */
inline void testDeviceArraysKeptAcrossGeometries(const std::shared_ptr<const XCBackendFactory>& factory,
                                                 const std::function<long long()>& allocationsMade = nullptr) {
    const QMSettings s = smallDimerSettings();
    const std::vector<PointCharge> mm = twoCharges();
    std::vector<std::vector<QMAtom>> geometries(3, waterDimer());
    geometries[1][1].xyz[0] += 0.05;
    geometries[1][4].xyz[2] -= 0.04;
    for (int i = 0; i < 3; i++) {  // a third water: more points and functions, so that the kept arrays grow
        QMAtom atom = geometries[2][i];
        atom.xyz[1] += 5.6;
        geometries[2].push_back(atom);
    }
    KohnShamLDA kept(s, factory);
    long long afterFirst = 0;
    for (size_t g = 0; g < geometries.size(); g++) {
        const std::vector<QMAtom>& atoms = geometries[g];
        if (g == 1 && allocationsMade)
            afterFirst = allocationsMade();
        KohnShamLDA fresh(s, factory);
        const QMResult k = kept.compute(atoms, 0, mm), f = fresh.compute(atoms, 0, mm);
        EXPECT_EQ(k.xcBackend, "device");
        EXPECT_NEAR(k.total, f.total, 1e-10);
        EXPECT_EQ(k.gridPoints, f.gridPoints);
        const QMGradient gk = kept.gradient(k), gf = fresh.gradient(f);
        EXPECT_LT((gk.atoms - gf.atoms).cwiseAbs().maxCoeff(), 1e-9) << "kept\n" << gk.atoms << "\nfresh\n" << gf.atoms;
        EXPECT_LT((gk.mm - gf.mm).cwiseAbs().maxCoeff(), 1e-9);
        if (g == 1 && allocationsMade)
            EXPECT_EQ(allocationsMade(), afterFirst) << "device arrays allocated for a displaced geometry";
    }
}

/**
 * J of a matrix held by the device's products (DensityFittedCoulomb::compute of a held matrix), as the Coulomb
 * response's steps build it: J[scale (H + H^T) / 2] of a nonsymmetric H. With the metric on the device (deviceSolved)
 * the pair vectors are gathered and scattered there (its "builds.held" timing shows the path taken; J exactly
 * symmetric); without it (deviceFitted) and for a matrix held on the host, J goes through the host. All three against
 * the host's build of the symmetric part, to 1e-10 of J's largest element (as the device's J above); the fit
 * coefficients of the last host build stay.
 */
inline void expectHeldCoulombMatchesHost(const std::shared_ptr<const XCBackendFactory>& factory, const BasisSet& basis,
                                         const DensityFittedCoulomb& deviceSolved, const DensityFittedCoulomb& deviceFitted,
                                         const DensityFittedCoulomb& host, const Eigen::MatrixXd& D, const std::string& basisName) {
    const MatrixProducts* products = factory->matrixProducts();
    ASSERT_NE(products, nullptr);
    Eigen::MatrixXd H = D;
    for (int i = 0; i < basis.size(); i++)
        for (int j = 0; j < basis.size(); j++)
            H(i, j) += 0.2 * std::sin(0.3 * i - 1.1 * j);
    const double scale = 4.0;
    const Eigen::MatrixXd expected = host.compute((0.5 * scale) * (H + H.transpose()));
    const double largest = expected.cwiseAbs().maxCoeff();
    const Eigen::VectorXd coefficients = deviceSolved.fitCoefficients();
    const Held heldH = products->hold(H);
    const auto& timings = deviceSolved.timings();
    EXPECT_EQ(0u, timings.count("builds.held"));
    const Eigen::MatrixXd J = products->fetch(deviceSolved.compute(*products, heldH, scale));
    EXPECT_EQ(1u, timings.count("builds.held")) << basisName << ": built through the host";
    EXPECT_LT((J - expected).cwiseAbs().maxCoeff(), 1e-10 * largest) << basisName << " J of a held matrix";
    EXPECT_EQ(0.0, (J - J.transpose()).cwiseAbs().maxCoeff()) << basisName;
    EXPECT_EQ(0.0, (deviceSolved.fitCoefficients() - coefficients).cwiseAbs().maxCoeff()) << basisName;
    // A block of a held matrix (offset and leading dimension) as the density.
    Eigen::MatrixXd wide = Eigen::MatrixXd::Zero(basis.size() + 3, basis.size() + 2);
    wide.block(2, 1, basis.size(), basis.size()) = H;
    const Held block = products->block(products->hold(wide), 2, 1, basis.size(), basis.size());
    const Eigen::MatrixXd Jblock = products->fetch(deviceSolved.compute(*products, block, scale));
    EXPECT_LT((Jblock - expected).cwiseAbs().maxCoeff(), 1e-10 * largest) << basisName << " J of a held block";
    // Through the host: the metric not on the device, or the matrix held on the host.
    const Eigen::MatrixXd Jfitted = products->fetch(deviceFitted.compute(*products, heldH, scale));
    EXPECT_LT((Jfitted - expected).cwiseAbs().maxCoeff(), 1e-10 * largest) << basisName << " J through the host";
    const MatrixProducts& onHost = hostMatrixProducts();
    const Eigen::MatrixXd JonHost = onHost.fetch(deviceSolved.compute(onHost, onHost.hold(H), scale));
    EXPECT_LT((JonHost - expected).cwiseAbs().maxCoeff(), 1e-10 * largest) << basisName << " J of a matrix held on the host";
    EXPECT_THROW(deviceSolved.compute(*products, products->hold(Eigen::MatrixXd::Zero(2, 2)), scale), OpenMM::OpenMMException);
}

/**
 * The density-fitting tensor and the three-centre gradient computed on the device (McMurchie-Davidson) against
 * Libint2's on the host, through DensityFittedCoulomb: the Coulomb matrix and fit coefficients of a density with
 * every element nonzero, its fitted Coulomb energy, and the gradient of that energy, for water dimer plus methanol (d shells,
 * and g fitting functions on O and C) in DZVP, and in def2-TZVP (f shells), spherical and cartesian, and for eight
 * waters (the gradient's work items take runs of an atom's fitting shells); on the device both the three-centre and
 * the metric's part of the gradient (the metric's as pairs of a fitting shell and a unit function). Bounds: 1e-10
 * of the largest element of J, 1e-11 relative in the energy, 1e-9 Eh/bohr (the same integrals by another recursion).
 */
inline void testDeviceDensityFittingMatchesLibint(const std::shared_ptr<const XCBackendFactory>& factory, const std::string& basisName,
                                                  bool pure, bool eightWaters = false) {
    std::vector<QMAtom> atoms = waterDimer();
    if (eightWaters) {
        // Four dimers on a square: enough shell pairs that the gradient's work items take runs of several fitting
        // shells of one atom (the small systems take them one by one).
        for (int k = 1; k < 4; k++)
            for (QMAtom atom : waterDimer()) {
                atom.xyz[1] += 6.0 * (k % 2);
                atom.xyz[2] += 6.0 * (k / 2);
                atoms.push_back(atom);
            }
    }
    else
        for (QMAtom atom : methanol()) {
            atom.xyz[2] += 7.0;
            atoms.push_back(atom);
        }
    const BasisDefinition definition = loadBasisDefinition(basisName, ""), auxDefinition = loadBasisDefinition("def2-universal-jfit", "");
    const BasisSet basis(definition, atoms, pure), aux(auxDefinition, atoms, pure, 6);
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(basis.size(), basis.size());
    for (int i = 0; i < basis.size(); i++)
        for (int j = 0; j <= i; j++)
            D(i, j) = D(j, i) = 0.3 * std::cos(0.7 * i + 1.3 * j) * std::exp(-0.01 * (i - j) * (i - j)) + (i == j ? 0.5 : 0.0);
    const double threshold = 1e-12;
    DensityFittedCoulomb host(basis, aux, threshold, 2), device(basis, aux, threshold, 2, NormalEquationSolver(),
                                                                 factory->densityFittingContractions());
    ASSERT_STREQ(host.integralsLocation(), "host");
    ASSERT_STREQ(device.integralsLocation(), "device");
    ASSERT_STREQ(device.contractionsLocation(), "device");
    const Eigen::MatrixXd Jh = host.compute(D), Jd = device.compute(D);
    EXPECT_LT((Jd - Jh).cwiseAbs().maxCoeff(), 1e-10 * Jh.cwiseAbs().maxCoeff()) << basisName << " Coulomb matrix";
    // The fitted Coulomb energy 1/2 tr(J D) (the coefficients themselves carry the metric's condition number).
    const double Eh = 0.5 * (Jh.cwiseProduct(D)).sum(), Ed = 0.5 * (Jd.cwiseProduct(D)).sum();
    EXPECT_LT(std::abs(Ed - Eh), 1e-11 * std::abs(Eh)) << basisName << " fitted Coulomb energy " << Eh;
    const int numAtoms = (int) atoms.size();
    const size_t bytesBeforeGradient = device.storedBytes();
    const Eigen::MatrixXd gh = host.gradient(D, numAtoms, threshold, 2), gd = device.gradient(D, numAtoms, threshold, 2);
    EXPECT_LT((gd - gh).cwiseAbs().maxCoeff(), 1e-9) << basisName << " gradient: device\n" << gd << "\nLibint\n" << gh;
    // The caller's cartesian density (the engine has it for the point charges) gives the same sums: fixed point,
    // added in any order.
    const Eigen::MatrixXd cartesianD = toCartesianBasis(basis, D);
    EXPECT_EQ(0.0, (device.gradient(D, numAtoms, threshold, 2, &cartesianD) - gd).cwiseAbs().maxCoeff()) << basisName;
    const Eigen::MatrixXd wrongSize = Eigen::MatrixXd::Zero(2, 2);
    EXPECT_THROW(device.gradient(D, numAtoms, threshold, 2, &wrongSize), OpenMM::OpenMMException);
    // The host's own path is Libint's three-centre and metric parts.
    const Eigen::MatrixXd libint = densityFittedCoulombGradient(basis, aux, D, host.fitCoefficients(), numAtoms, threshold, 2);
    EXPECT_LT((gh - libint).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_GT(gh.cwiseAbs().maxCoeff(), 1e-3);  // a gradient worth comparing
    // With the metric's inverse given (as the platforms' least-squares kernel gives it), the device keeps the metric and
    // its inverse and solves for the fit coefficients there (one refinement step), the host likewise on its side.
    const NormalEquationSolver explicitInverse = [](const Eigen::MatrixXd& A, Eigen::MatrixXd& B) { B = A.llt().solve(B); };
    DensityFittedCoulomb hostInverse(basis, aux, threshold, 2, explicitInverse),
        deviceInverse(basis, aux, threshold, 2, explicitInverse, factory->densityFittingContractions());
    const Eigen::MatrixXd Jhi = hostInverse.compute(D), Jdi = deviceInverse.compute(D);
    // With the metric there, the device gathers and scatters the pair vectors itself (no host passes over them), and J
    // is symmetric to the last bit as the host's.
    EXPECT_EQ(0u, deviceInverse.timings().count("builds.host")) << basisName;
    EXPECT_EQ(1u, device.timings().count("builds.host")) << basisName;
    EXPECT_EQ(0.0, (Jdi - Jdi.transpose()).cwiseAbs().maxCoeff()) << basisName;
    EXPECT_LT((Jdi - Jh).cwiseAbs().maxCoeff(), 1e-10 * Jh.cwiseAbs().maxCoeff()) << basisName << " Coulomb matrix, solved on the device";
    EXPECT_LT((Jhi - Jh).cwiseAbs().maxCoeff(), 1e-10 * Jh.cwiseAbs().maxCoeff()) << basisName << " Coulomb matrix, host inverse";
    // The coefficients carry the metric's condition number: the host's own two solvers (Cholesky, the refined explicit
    // inverse) differ by about 3e-8 of the largest here, the device's and the host's refined inverse by 1e-9 on PoCL and
    // 2e-8 on an H200 (CUDA's fused multiply-adds in the tensor, amplified by the condition number). The bound is
    // the host solvers' own spread; the Coulomb matrix and the gradient above are the tight checks.
    const Eigen::VectorXd& ch = hostInverse.fitCoefficients();
    EXPECT_LT((deviceInverse.fitCoefficients() - ch).cwiseAbs().maxCoeff(), 1e-7 * ch.cwiseAbs().maxCoeff()) << basisName;
    EXPECT_GT(deviceInverse.storedBytes(), bytesBeforeGradient);  // the metric and its inverse are held there too
    const Eigen::MatrixXd gdi = deviceInverse.gradient(D, numAtoms, threshold, 2);
    EXPECT_LT((gdi - gh).cwiseAbs().maxCoeff(), 1e-9) << basisName << " gradient with the coefficients from the device";
    expectHeldCoulombMatchesHost(factory, basis, deviceInverse, device, hostInverse, D, basisName);
}

/** The point-charge cases' system: water dimer plus methanol 7 bohr away in the named basis (pure), the nuclei as
 * charges, and 300 charges on a lattice around them (10 x 6 x 5, 4 bohr apart, alternating in sign). */
struct PointChargeCase {
    std::vector<QMAtom> atoms;
    std::vector<PointCharge> nuclei, lattice;
    std::unique_ptr<BasisSet> basis;
    explicit PointChargeCase(const std::string& basisName) : atoms(waterDimer()) {
        for (QMAtom atom : methanol()) {
            atom.xyz[2] += 7.0;
            atoms.push_back(atom);
        }
        for (const QMAtom& a : atoms)
            nuclei.push_back({{a.xyz[0], a.xyz[1], a.xyz[2]}, (double) a.Z});
        for (int k = 0; k < 300; k++)
            lattice.push_back({{-16.0 + 4.0 * (k % 10), -10.0 + 4.0 * ((k / 10) % 6), -6.0 + 4.0 * (k / 60)}, (k % 2 ? 0.4 : -0.8)});
        basis.reset(new BasisSet(loadBasisDefinition(basisName, ""), atoms, true));
    }
};

/**
 * The point-charge potential matrix on the device against the host's pointChargeMatrix (McMurchie-Davidson on the
 * host, itself checked against Libint), for the nuclei (no screening) and the 300 lattice charges (pairs screened at
 * 1e-12 by both), DZVP and def2-TZVP (f shells), through the pure transform as the engine uses it. Bound: 1e-11
 * relative to the largest element (the same integrals by the same recursion, summed in another order).
 */
inline void testDevicePointChargeMatrixMatchesHost(const std::shared_ptr<const XCBackendFactory>& factory, const std::string& basisName) {
    const PointChargeEvaluator* device = factory->pointCharges();
    ASSERT_TRUE(device != nullptr);
    const PointChargeCase system(basisName);
    const BasisSet& basis = *system.basis;
    for (const auto& charges : {std::make_pair(system.nuclei, 0.0), std::make_pair(system.lattice, 1e-12)}) {
        const Eigen::MatrixXd host = pointChargeMatrix(basis, charges.first, charges.second, 2);
        std::vector<double> weights;
        for (const PointCharge& c : charges.first)
            weights.push_back(-c.charge);
        Eigen::MatrixXd cartesian;
        ASSERT_TRUE(device->matrix(makePointChargeTask(basis, charges.first, charges.second), weights, cartesian));
        const Eigen::MatrixXd onDevice = fromCartesianBasis(basis, cartesian);
        ASSERT_EQ(host.rows(), onDevice.rows());
        const double largest = host.cwiseAbs().maxCoeff();
        EXPECT_GT(largest, 1e-2);  // a matrix worth comparing
        EXPECT_LT((onDevice - host).cwiseAbs().maxCoeff(), 1e-11 * largest) << basisName << " with " << charges.first.size() << " charges";
    }
    // No charges: nothing to do on the device, and the caller's host path gives zero.
    Eigen::MatrixXd none;
    EXPECT_FALSE(device->matrix(makePointChargeTask(basis, {}, 0.0), {}, none));
}

/**
 * The point-charge gradient on the device (the point-charge limit of the three-centre gradient kernel) against the
 * host's pointChargeGradient (McMurchie-Davidson on the host), for the nuclei (no screening) and for 300 charges on a
 * lattice around water dimer plus methanol (screened at 1e-12 by both), DZVP and def2-TZVP (f shells), with a density
 * whose every element is nonzero. Bound: 1e-10 Eh/bohr on the atoms and on the charges (the same integrals by the
 * same recursions in another order).
 */
inline void testDevicePointChargeGradientMatchesHost(const std::shared_ptr<const XCBackendFactory>& factory, const std::string& basisName) {
    const PointChargeEvaluator* device = factory->pointCharges();
    ASSERT_TRUE(device != nullptr);
    const PointChargeCase system(basisName);
    const std::vector<QMAtom>& atoms = system.atoms;
    const BasisSet& basis = *system.basis;
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(basis.size(), basis.size());
    for (int i = 0; i < basis.size(); i++)
        for (int j = 0; j <= i; j++)
            D(i, j) = D(j, i) = 0.3 * std::cos(0.9 * i + 1.1 * j) * std::exp(-0.01 * (i - j) * (i - j)) + (i == j ? 0.5 : 0.0);
    const int numAtoms = (int) atoms.size();
    for (const auto& charges : {std::make_pair(system.nuclei, 0.0), std::make_pair(system.lattice, 1e-12)}) {
        Eigen::MatrixXd hostAtoms, hostCharges;
        pointChargeGradient(basis, charges.first, D, numAtoms, charges.second, hostAtoms, hostCharges, 2);
        EXPECT_GT(hostCharges.cwiseAbs().maxCoeff(), 1e-3);  // a gradient worth comparing
        std::vector<double> weights;
        for (const PointCharge& c : charges.first)
            weights.push_back(-c.charge);
        const std::unique_ptr<PointChargeGradientInFlight> started =
            device->startGradient(makePointChargeTask(basis, charges.first, charges.second), weights, toCartesianBasis(basis, D), numAtoms);
        ASSERT_TRUE(started != nullptr);
        Eigen::MatrixXd deviceAtoms = Eigen::MatrixXd::Zero(numAtoms, 3), deviceCharges = Eigen::MatrixXd::Zero(charges.first.size(), 3);
        started->addTo(deviceAtoms, deviceCharges);
        EXPECT_LT((deviceAtoms - hostAtoms).cwiseAbs().maxCoeff(), 1e-10) << basisName << " atoms: device\n" << deviceAtoms << "\nhost\n"
                                                                          << hostAtoms;
        EXPECT_LT((deviceCharges - hostCharges).cwiseAbs().maxCoeff(), 1e-10) << basisName << " charges";
    }
    // Both started before either is read (as the engine's gradient queues them), read in the other order; a second
    // read of one is refused rather than adding it twice.
    std::vector<std::unique_ptr<PointChargeGradientInFlight>> started;
    std::vector<std::pair<const std::vector<PointCharge>*, double>> sets = {{&system.nuclei, 0.0}, {&system.lattice, 1e-12}};
    for (const auto& set : sets) {
        std::vector<double> weights;
        for (const PointCharge& c : *set.first)
            weights.push_back(-c.charge);
        started.push_back(device->startGradient(makePointChargeTask(basis, *set.first, set.second), weights, toCartesianBasis(basis, D),
                                                numAtoms));
        ASSERT_TRUE(started.back() != nullptr);
    }
    for (int k = 1; k >= 0; k--) {
        Eigen::MatrixXd hostAtoms, hostCharges;
        pointChargeGradient(basis, *sets[k].first, D, numAtoms, sets[k].second, hostAtoms, hostCharges, 2);
        Eigen::MatrixXd deviceAtoms = Eigen::MatrixXd::Zero(numAtoms, 3), deviceCharges = Eigen::MatrixXd::Zero(sets[k].first->size(), 3);
        started[k]->addTo(deviceAtoms, deviceCharges);
        EXPECT_LT((deviceAtoms - hostAtoms).cwiseAbs().maxCoeff(), 1e-10) << basisName << " in flight together, atoms, set " << k;
        EXPECT_LT((deviceCharges - hostCharges).cwiseAbs().maxCoeff(), 1e-10) << basisName << " in flight together, charges, set " << k;
        EXPECT_THROW(started[k]->addTo(deviceAtoms, deviceCharges), OpenMM::OpenMMException);
    }
}

/** The density-fitting cases every GPU platform runs: DZVP spherical and cartesian, def2-TZVP, and eight waters. */
inline void testDeviceDensityFittingCases(const std::shared_ptr<const XCBackendFactory>& factory) {
    testDeviceDensityFittingMatchesLibint(factory, "DZVP", true);
    testDeviceDensityFittingMatchesLibint(factory, "DZVP", false);
    testDeviceDensityFittingMatchesLibint(factory, "def2-TZVP", true);
    testDeviceDensityFittingMatchesLibint(factory, "DZVP", true, true);
}

/** The point-charge matrix and gradient cases every GPU platform runs: DZVP and def2-TZVP (f shells). */
inline void testDevicePointChargeCases(const std::shared_ptr<const XCBackendFactory>& factory) {
    testDevicePointChargeMatrixMatchesHost(factory, "DZVP");
    testDevicePointChargeMatrixMatchesHost(factory, "def2-TZVP");
    testDevicePointChargeGradientMatchesHost(factory, "DZVP");
    testDevicePointChargeGradientMatchesHost(factory, "def2-TZVP");
}

} // namespace GpuXCTest
