// Density fitting on the GPU platforms (CommonDensityFitting.h).
#include "CommonDensityFitting.h"
#include "CentreGroups.h"
#include "CommonMatrixProducts.h"
#include "DeviceShellTables.h"
#include "XCProgram.h"
#include "openmmdft/qm/PairDensityMap.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeKernel.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>
#include <cmath>
#include <vector>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

namespace {

/// Whether M equals its transpose to the last bit, compared in 64 x 64 blocks (so that the transposed reads stay in
/// cache) and stopping at the first difference: a read of M instead of making 0.5 (M + M^T), 23 MB for the metric of
/// 24 waters, on the set-up's path between the tensor and the first SCF iteration.
bool exactlySymmetric(const Eigen::MatrixXd& M) {
    const int n = (int) M.rows(), block = 64;
    if (M.cols() != n)
        return false;
    for (int jb = 0; jb < n; jb += block)
        for (int ib = jb; ib < n; ib += block)
            for (int j = jb; j < min(jb + block, n); j++)
                for (int i = max(ib, j + 1); i < min(ib + block, n); i++)
                    if (M(i, j) != M(j, i))
                        return false;
    return true;
}

/// The largest l of the orbital and fitting shells the integral kernels take (their private arrays grow with both).
const int MAX_BASIS_L = 3, MAX_AUX_L = 5;

/// Gradient work items (shell pairs x runs of fitting shells) to aim at per class of pairs: several times the threads a GPU of 132
/// multiprocessors holds at once at 128 registers (132 x 512). Fewer, and the last work groups run alone: 8 QM
/// waters grouped by atom gave 566 work groups of 128 for 528 places, and an H200 ran the kernel at 13% occupancy.
/// More, and the pairs' derivative Hermite densities are formed more often than needed (once per item): 24 waters
/// grouped by atom gave 72 runs per pair, 1.4 million items. Per class, since each class is its own launch: one target
/// for all pairs left the p-p and d-p classes (a few hundred pairs) under 100 work groups, at 6% occupancy. On an H200
/// (24 waters) the three-centre gradient took 0.086 s per step with this target, 0.098 with a quarter, 0.097 with four times.
const double TARGET_GRADIENT_ITEMS = 262144;

/**
 * The density-fitting contractions on the device: B in device memory for the geometry (up to
 * MAX_TENSOR_BYTES, else the host keeps it), and per Coulomb build the pair density up and B^T c down: vectors only.
 * The metric and its inverse are kept there too (storeMetric), so that the fit coefficients are solved for on the
 * device (one refinement step, as the host does) and only come down for the gradient's record. With them, a build
 * gathers the pair density from D and scatters J there too (coulombMatrix: kernels/qmPairDensity.cc), from a matrix
 * held by the device's products (nothing crosses) or from the host's (D up, J down: on an H200's host the gathering
 * and scattering took 0.5-0.7 ms per build of 24 waters). The sums are in a
 * fixed order (slices added in order, a tree
 * per work group), so the results do not depend on scheduling.
 */
class CommonDensityFittingContractions : public QM::DensityFittingContractions {
public:
    static constexpr double MAX_TENSOR_BYTES = 4.0 * 1073741824.0;
    CommonDensityFittingContractions(ComputeContext& cc, ComputeProgram program, ThreeCentreProgramSource integralProgram,
                                     shared_ptr<DeviceArrayPool> pool)
        : cc(cc), program(program), integralProgram(integralProgram), pool(std::move(pool)), kept(cc) {
    }
    bool store(const Eigen::MatrixXd& B) override {
        ContextSelector selector(cc);
        if (!allocate(B.rows(), B.cols()))
            return false;
        (*tensor).uploadSubArray(B.data(), 0, (int) B.size());
        return true;
    }
    bool computeTensor(const QM::ThreeCentreTask& task) override {
        if (task.basis.maxL > MAX_BASIS_L || task.aux.maxL > MAX_AUX_L || task.pairFirst.empty())
            return false;
        ContextSelector selector(cc);
        if (!allocate(task.rows, task.columns))
            return false;
        integrals = integralProgram(task.basis.maxL, task.aux.maxL, false);
        // The tables go up without blocking (KeptUploads: a blocking upload on CUDA's default stream waits for the
        // kernels queued before it, and the set-up uploads about a hundred of them between its launches).
        basis.upload(pool, cc, task.basis, 0, kept);
        aux.upload(pool, cc, task.aux, task.rows, kept);
        // The pairs in classes of equal angular momenta (the class kernels) and primitive counts: the threads of a warp
        // (consecutive pairs, one fitting shell) then run the same loops. Each pair carries its columns, so the order
        // is free.
        numPairs = (int) task.pairFirst.size();
        const PairClasses classes = PairClasses::of(task.pairFirst, task.pairSecond, task.basis.l, task.basis.numPrim);
        pairClasses = classes.ranges;
        pairFirst.upload(pool, cc, classes.sorted(task.pairFirst), "qmDFPairFirst", kept);
        pairSecond.upload(pool, cc, classes.sorted(task.pairSecond), "qmDFPairSecond", kept);
        pairColumn.upload(pool, cc, classes.sorted(task.pairColumn), "qmDFPairColumn", kept);
        auxTransform.upload(pool, cc, task.auxTransform, "qmDFAuxTransform", kept);
        auxTransformStart.upload(pool, cc, task.auxTransformStart, "qmDFAuxTransformStart", kept);
        boysTable.upload(pool, cc, task.boysTable, "qmBoysTable", kept);
        boys = BoysParameters::of(task);
        numAuxShells = (int) task.aux.l.size();
        // The gradient's work items are (shell pair, run of fitting shells on at most
        // THREE_CENTRE_MAX_FITTING_CENTRES_PER_ITEM atoms).
        numAtoms = 0;  // rows of the gradient: every atom with orbital or fitting shells
        for (int s = 0; s < numAuxShells; s++)
            numAtoms = max(numAtoms, task.aux.atom[s] + 1);
        for (int atom : task.basis.atom)
            numAtoms = max(numAtoms, atom + 1);
        uploadGradientWork(pairGroups, pairClasses, task.aux, "qmDFAuxGroupShellStart");
        prepareMetricGradient(task);
        // The fitting primitives' cartesian Hermite coefficients, read by the tensor and the gradient's fitted density.
        auxMaxL = task.aux.maxL;
        numAuxPrimitives = (int) task.aux.exponent.size();
        fittingHermite.take(pool, cc, "qmDFFittingHermite",
                            (size_t) max(1, numAuxPrimitives) * cartesianCount(auxMaxL) * hermiteCount(auxMaxL));
        ComputeKernel tableKernel = integrals->createKernel("fittingCartesianHermite");
        tableKernel->addArg(numAuxShells);
        for (ComputeArray* a : {aux.l.get(), aux.primStart.get(), aux.numPrim.get(), aux.exponent.get(),
                                fittingHermite.get()})
            tableKernel->addArg(*a);
        tableKernel->execute(numAuxShells);
        // The tensor kernels per class of pairs, with the fitting shells listed by l (auxShellsByL) so that a compilation
        // for one fitting l (tensorUnrolled) takes its shells; tensorCounter is a member: the launches run on while the
        // host goes on.
        vector<int> byL, lBegin(auxMaxL + 2, 0);
        for (int lq = 0; lq <= auxMaxL; lq++) {
            lBegin[lq] = (int) byL.size();
            for (int s = 0; s < numAuxShells; s++)
                if (task.aux.l[s] == lq)
                    byL.push_back(s);
        }
        lBegin[auxMaxL + 1] = (int) byL.size();
        auxShellsByL.upload(pool, cc, byL, "qmDFAuxShellsByL", kept);
        initializeWorkCounter(pool, cc, tensorCounter);
        for (const PairClassRange& c : pairClasses)
            for (int lq = 0; lq <= auxMaxL;) {
                // The fitting l's that share a compilation (tensorKernelName) are one launch: their shells are consecutive.
                const string name = tensorKernelName(c.la, c.lb, lq);
                int end = lq + 1;
                while (end <= auxMaxL && tensorKernelName(c.la, c.lb, end) == name)
                    end++;
                const int first = lBegin[lq], numShells = lBegin[end] - first;
                lq = end;
                if (numShells == 0)
                    continue;
                ComputeKernel kernel = integrals->createKernel(name);
                kernel->addArg(c.begin);
                kernel->addArg(first);
                kernel->addArg(c.end - c.begin);
                kernel->addArg(numShells);
                kernel->addArg(rows);
                for (ComputeArray* a : {pairFirst.get(), pairSecond.get(), pairColumn.get(), basis.l.get(),
                                        basis.primStart.get(), basis.numPrim.get(), basis.center.get(),
                                        basis.exponent.get(), basis.coefficient.get(), auxShellsByL.get(), aux.l.get(),
                                        aux.primStart.get(), aux.numPrim.get(), aux.offset.get(), aux.size.get(),
                                        aux.center.get(), aux.exponent.get(), aux.coefficient.get(), auxTransform.get(),
                                        auxTransformStart.get(), fittingHermite.get(), boysTable.get()})
                    kernel->addArg(*a);
                kernel->addArg(boys.step);
                kernel->addArg(boys.end);
                kernel->addArg(boys.orders);
                kernel->addArg(boys.taylorTerms);
                kernel->addArg(*tensor);
                kernel->addArg(*tensorCounter);
                launchIntegralKernel(cc, kernel, (long long) (c.end - c.begin) * numShells, *tensorCounter);
            }
        kept.mark();
        integralsHere = true;
        return true;  // B is still being computed: finishTensor() waits for it
    }
    void finishTensor() override {
        // A small download on the same queue, once per geometry, so that the engine's set-up timings name the phase
        // that spent the time.
        ContextSelector selector(cc);
        (void) auxTransformStart.downloadFirst<int>(1);
        kept.release();  // the download came after the tables on the same queue: no wait
    }
    bool startThreeCentreGradient(const Eigen::MatrixXd& D, const Eigen::VectorXd& c) override {
        if (!integralsHere)
            return false;
        ContextSelector selector(cc);
        const int nbf = (int) D.rows();
        // D is symmetric: row- and column-major alike.
        densityArray.upload(pool, cc, vector<double>(D.data(), D.data() + D.size()), "qmDFGradientDensity", kept);
        coefficientArray.upload(pool, cc, vector<double>(c.data(), c.data() + c.size()), "qmDFGradientCoefficients", kept);
        // One row per atom of the fitting functions (not point charges), which are the gradient's first rows.
        gradientArray.zeros<long long>(pool, cc, "qmDFGradient", 3 * (size_t) numAtoms);
        // The metric's part, -1/2 sum_PQ c_P c_Q d(P|Q): the kernel gives 2 sum_PQ c_P c_Q d(P|Q) for the pairs (P, unit)
        // with "density" c_P (nbf 1), so the column it reads is -c/4.
        const Eigen::VectorXd quarter = -0.25 * c;
        metricDensity.upload(pool, cc, vector<double>(quarter.data(), quarter.data() + quarter.size()), "qmDFMetricGradientDensity", kept);
        // The fitted density's Hermite coefficients per fitting primitive, once for every pair that meets them.
        fittedHermite.ensure(pool, cc, "qmDFFittedHermite", (size_t) max(1, numAuxPrimitives) * hermiteCount(auxMaxL));
        ComputeKernel fittedKernel = integrals->createKernel("fittedDensityHermite");
        fittedKernel->addArg(numAuxShells);
        for (ComputeArray* a : {aux.l.get(), aux.primStart.get(), aux.numPrim.get(), aux.cartesianOffset.get(),
                                aux.coefficient.get(), coefficientArray.get(), fittingHermite.get(),
                                fittedHermite.get()})
            fittedKernel->addArg(*a);
        fittedKernel->execute(numAuxShells);
        launchThreeCentreGradient(cc, integrals, pairClasses, pairGroups, nbf, *pairFirst, *pairSecond, basis, 0, aux,
                                  *boysTable, boys, *densityArray, *coefficientArray, *fittedHermite, *gradientArray, gradientCounter);
        // The metric's part (its "density" uploaded above) into the same sums.
        launchThreeCentreGradient(cc, integrals, metricClasses, metricGroups, 1, *metricFirst, *metricSecond, metricShells, 0, aux,
                                  *boysTable, boys, *metricDensity, *coefficientArray, *fittedHermite, *gradientArray, gradientCounter);
        kept.mark();
        gradientStarted = true;
        return true;
    }
    bool computesMetricGradient() const override {
        return integralsHere;
    }
    void finishThreeCentreGradient(Eigen::MatrixXd& G) override {
        if (!gradientStarted)
            throw OpenMMException("QM: finishThreeCentreGradient() without a started gradient (internal error)");
        ContextSelector selector(cc);
        const Eigen::MatrixXd total = readThreeCentreGradient(gradientArray, numAtoms);
        kept.release();  // the read came after the uploads on the same queue: no wait
        gradientStarted = false;
        const int rows = (int) min<Eigen::Index>(total.rows(), G.rows());
        G.topRows(rows) += total.topRows(rows);
    }
    Eigen::VectorXd fit(const Eigen::VectorXd& pairDensity) override {
        ContextSelector selector(cc);
        (*pairVector).uploadSubArray(pairDensity.data(), 0, columns, false);  // read before the download below returns
        launchFit();
        return downloadAuxVector();
    }
    Eigen::VectorXd project(const Eigen::VectorXd& coefficients) override {
        ContextSelector selector(cc);
        (*auxVector).uploadSubArray(coefficients.data(), 0, rows, false);  // read before the download below returns
        launchByColumns(projectKernel, columns);
        return downloadPairVector();
    }
    bool storeMetric(const Eigen::MatrixXd& metric, const Eigen::MatrixXd& inverse) override {
        if (!tensor.held() || metric.rows() != rows || inverse.rows() != rows)
            return false;
        ContextSelector selector(cc);
        try {
            metricArray.take(pool, cc, "qmDensityFittingMetric", (size_t) rows * rows);
            inverseArray.take(pool, cc, "qmDensityFittingMetricInverse", (size_t) rows * rows);
        }
        catch (const OpenMMException&) {
            return false;  // no room on the device: the host applies the inverse
        }
        // Symmetric: column-major is row-major, so the projection kernel applies them (symmetrized to the last bit
        // where they are not so already: the engine's metric and the inverses of LAPACK and cuSOLVER are mirrored).
        auto uploadSymmetric = [](const Eigen::MatrixXd& given, PooledArray& array) {
            if (exactlySymmetric(given))
                (*array).uploadSubArray(given.data(), 0, (int) given.size());  // no copy
            else {
                const Eigen::MatrixXd symmetrized = 0.5 * (given + given.transpose());
                (*array).uploadSubArray(symmetrized.data(), 0, (int) symmetrized.size());
            }
        };
        uploadSymmetric(metric, metricArray);
        uploadSymmetric(inverse, inverseArray);
        firstFit.take(pool, cc, "qmDensityFittingFirstFit", rows);
        fitResidual.take(pool, cc, "qmDensityFittingFitResidual", rows);
        fitCorrection.take(pool, cc, "qmDensityFittingFitCorrection", rows);
        auto symmetricProduct = [&](ComputeArray& matrix, ComputeArray& x, ComputeArray& y) {
            ComputeKernel kernel = program->createKernel("densityFittingProject");
            kernel->addArg(rows);
            kernel->addArg(rows);
            kernel->addArg(matrix);
            kernel->addArg(x);
            kernel->addArg(y);
            return kernel;
        };
        auto signedSum = [&](ComputeArray& a, ComputeArray& b, double sign, ComputeArray& out) {
            ComputeKernel kernel = program->createKernel("addSignedVector");
            kernel->addArg(rows);
            kernel->addArg(a);
            kernel->addArg(b);
            kernel->addArg(sign);
            kernel->addArg(out);
            return kernel;
        };
        // gamma (auxVector) -> c0 = W gamma -> r = gamma - M c0 -> c = c0 + W r (into auxVector, which B^T c reads).
        firstFitKernel = symmetricProduct(*inverseArray, *auxVector, *firstFit);
        metricProductKernel = symmetricProduct(*metricArray, *firstFit, *fitCorrection);
        residualKernel = signedSum(*auxVector, *fitCorrection, -1.0, *fitResidual);
        correctionKernel = symmetricProduct(*inverseArray, *fitResidual, *fitCorrection);
        refinedFitKernel = signedSum(*firstFit, *fitCorrection, 1.0, *auxVector);
        metricStored = true;
        return true;
    }
    QM::Held coulombMatrix(const QM::PairDensityMap& map, const QM::Held& density, double scale) override {
        CommonMatrixProducts::DeviceStorage in;
        if (!metricStored || (int) map.pairs().size() != columns || !CommonMatrixProducts::storageOf(density, cc, in))
            return nullptr;
        ContextSelector selector(cc);
        preparePairMap(map);
        const int n = map.size();
        CommonMatrixProducts::DeviceStorage out;
        QM::Held J = CommonMatrixProducts::heldBeside(density, n, n, out);
        launchCoulombMatrix(*in.array, in.offset, in.ld, scale, *out.array, out.offset, out.ld);
        return J;
    }
    Eigen::MatrixXd coulombMatrix(const QM::PairDensityMap& map, const Eigen::MatrixXd& density, Eigen::VectorXd& coefficients) override {
        const int n = map.size();
        if (!metricStored)
            throw OpenMMException("QM: coulombMatrix() without a stored metric (internal error)");
        if ((int) map.pairs().size() != columns || density.rows() != n || density.cols() != n)
            throw OpenMMException("QM: coulombMatrix() of a density or pair list that does not match the tensor (internal error)");
        ContextSelector selector(cc);
        preparePairMap(map);
        densityMatrix.ensure(pool, cc, "qmDFDensityMatrix", (size_t) n * n);
        coulombResult.ensure(pool, cc, "qmDFCoulombMatrix", (size_t) n * n);
        // Without blocking (on CUDA a blocking upload from pageable memory waits for the kernels queued before it): the
        // downloads below, on the same queue, return after the queue has read D.
        (*densityMatrix).uploadSubArray(density.data(), 0, n * n, false);
        launchCoulombMatrix(*densityMatrix, 0, n, 1.0, *coulombResult, 0, n);
        coefficients = downloadAuxVector();
        const vector<double> values = coulombResult.downloadFirst<double>((size_t) n * n);
        return Eigen::Map<const Eigen::MatrixXd>(values.data(), n, n);
    }
    size_t storedBytes() const override {
        // B, the metric and its inverse, the fitting primitives' Hermite tables, the gradient's pair tables and the
        // matrices of the builds on the device (the cartesian J, D and J).
        size_t bytes = 0;
        for (const PooledArray* held : {&tensor, &metricArray, &inverseArray, &fittingHermite, &fittedHermite, &pairGroups.pairTable,
                                        &metricGroups.pairTable, &cartesianJ, &densityMatrix, &coulombResult})
            bytes += held->held() ? held->get()->getSize() * held->get()->getElementSize() : 0;
        return bytes;
    }
private:
    /** From the pair density in pairVector to j = B^T c in pairVector, c = (P|Q)^-1 B d refined once (in auxVector). */
    void launchSolveAndProject() {
        launchFit();
        launchByColumns(firstFitKernel, rows);
        launchByColumns(metricProductKernel, rows);
        residualKernel->execute(rows);
        launchByColumns(correctionKernel, rows);
        refinedFitKernel->execute(rows);
        launchByColumns(projectKernel, columns);
    }
    /** J[scale (D + D^T) / 2] from D (element (a, b) at inOffset + a + b inLd of in) into out, likewise: the pair density
     *  gathered, the fit solved and projected, the pair values scattered into the cartesian matrix and transformed. */
    void launchCoulombMatrix(ComputeArray& in, int inOffset, int inLd, double scale, ComputeArray& out, int outOffset, int outLd) {
        gatherKernel->setArg(6, in);
        gatherKernel->setArg(7, inOffset);
        gatherKernel->setArg(8, inLd);
        gatherKernel->setArg(9, scale);
        gatherKernel->execute(columns);
        launchSolveAndProject();
        scatterKernel->execute(columns);
        transformKernel->setArg(6, out);
        transformKernel->setArg(7, outOffset);
        transformKernel->setArg(8, outLd);
        transformKernel->execute(preparedMap->size() * preparedMap->size());
    }
    /**
     * The pair map's tables on the device for coulombMatrix (once per geometry: this object serves one): the function
     * pairs, T by columns (the gather) and by rows (the transformation of the scattered cartesian matrix), and the
     * kernels with their fixed arguments.
     */
    void preparePairMap(const QM::PairDensityMap& map) {
        if (preparedMap == &map)
            return;
        const int n = map.size(), nc = map.cartesianSize();
        vector<int> first(columns), second(columns);
        for (int k = 0; k < columns; k++) {
            first[k] = map.pairs()[k].first;
            second[k] = map.pairs()[k].second;
        }
        // T's rows from its columns: function a's terms (cartesian u, T_au) in the order of u.
        const vector<int>& termStart = map.termStart();
        vector<int> rowStart(n + 1, 0), rowCartesian(termStart[nc]);
        vector<double> rowValue(termStart[nc]);
        for (int p = 0; p < termStart[nc]; p++)
            rowStart[map.termFunction()[p] + 1]++;
        for (int a = 0; a < n; a++)
            rowStart[a + 1] += rowStart[a];
        vector<int> filled(rowStart.begin(), rowStart.end() - 1);
        for (int u = 0; u < nc; u++)
            for (int p = termStart[u]; p < termStart[u + 1]; p++) {
                const int slot = filled[map.termFunction()[p]]++;
                rowCartesian[slot] = u;
                rowValue[slot] = map.termValue()[p];
            }
        functionPairFirst.upload(pool, cc, first, "qmDFFunctionPairFirst", kept);
        functionPairSecond.upload(pool, cc, second, "qmDFFunctionPairSecond", kept);
        columnTermStart.upload(pool, cc, termStart, "qmDFTermStart", kept);
        columnTermFunction.upload(pool, cc, map.termFunction(), "qmDFTermFunction", kept);
        columnTermValue.upload(pool, cc, map.termValue(), "qmDFTermValue", kept);
        rowTermStart.upload(pool, cc, rowStart, "qmDFRowTermStart", kept);
        rowTermCartesian.upload(pool, cc, rowCartesian, "qmDFRowTermCartesian", kept);
        rowTermValue.upload(pool, cc, rowValue, "qmDFRowTermValue", kept);
        cartesianJ.take(pool, cc, "qmDFCartesianCoulomb", (size_t) nc * nc);
        // Zero once per map: every build's scatter writes the same elements (the map's pairs), the rest stay zero.
        cc.clearBuffer(*cartesianJ);
        gatherKernel = program->createKernel("gatherPairDensity");
        gatherKernel->addArg(columns);
        for (ComputeArray* a : {functionPairFirst.get(), functionPairSecond.get(), columnTermStart.get(), columnTermFunction.get(),
                                columnTermValue.get()})
            gatherKernel->addArg(*a);
        for (int i = 0; i < 4; i++)
            gatherKernel->addArg();  // the density's array, offset and leading dimension, the scale: per call
        gatherKernel->addArg(*pairVector);
        scatterKernel = program->createKernel("scatterPairValues");
        scatterKernel->addArg(columns);
        scatterKernel->addArg(nc);
        for (ComputeArray* a : {functionPairFirst.get(), functionPairSecond.get(), pairVector.get(), cartesianJ.get()})
            scatterKernel->addArg(*a);
        transformKernel = program->createKernel("transformPairMatrix");
        transformKernel->addArg(n);
        transformKernel->addArg(nc);
        for (ComputeArray* a : {rowTermStart.get(), rowTermCartesian.get(), rowTermValue.get(), cartesianJ.get()})
            transformKernel->addArg(*a);
        for (int i = 0; i < 3; i++)
            transformKernel->addArg();  // J's array, offset and leading dimension: per call
        kept.mark();
        preparedMap = &map;
    }
    /** gamma = B d into auxVector from the pair density in pairVector: partial sums over slices, then in order. */
    void launchFit() {
        fitKernel->execute(rows * slices);
        fitSumKernel->execute(rows);
    }
    /** A kernel of densityFittingProject's shape: one work group (DF_GROUP_SIZE) per column of its matrix. */
    void launchByColumns(ComputeKernel& kernel, int count) {
        kernel->execute(DF_GROUP_SIZE * min(count, 65536), DF_GROUP_SIZE);
    }
    Eigen::VectorXd downloadPairVector() {
        const vector<double> j = pairVector.downloadFirst<double>(columns);
        return Eigen::Map<const Eigen::VectorXd>(j.data(), columns);
    }
    Eigen::VectorXd downloadAuxVector() {
        const vector<double> gamma = auxVector.downloadFirst<double>(rows);
        return Eigen::Map<const Eigen::VectorXd>(gamma.data(), rows);
    }
    /**
     * The metric gradient's work (startThreeCentreGradient): every fitting shell P paired with a unit s function
     * (exponent 0, coefficient 1, cartesian offset 0, no derivative), so that the three-centre gradient kernel of the
     * classes (l_P, 0) gives sum_PQ c_P c_Q d(P|Q) with c_P as the pair's density; runs of fitting shells for these
     * fewer pairs.
     */
    void prepareMetricGradient(const QM::ThreeCentreTask& task) {
        QM::FlatShells shells = task.aux;
        const int unit = numAuxShells;
        shells.l.push_back(0);
        shells.atom.push_back(0);
        shells.primStart.push_back((int) shells.exponent.size());
        shells.numPrim.push_back(1);
        shells.offset.push_back(task.rows);
        shells.cartesianOffset.push_back(0);
        shells.center.insert(shells.center.end(), {0.0, 0.0, 0.0});
        shells.exponent.push_back(0.0);
        shells.coefficient.push_back(1.0);
        metricShells.upload(pool, cc, shells, task.rows + 1, kept);
        vector<int> first(numAuxShells), second(numAuxShells, unit);
        for (int q = 0; q < numAuxShells; q++)
            first[q] = q;
        const PairClasses classes = PairClasses::of(first, second, shells.l, shells.numPrim);
        metricClasses = classes.ranges;
        metricFirst.upload(pool, cc, classes.sorted(first), "qmDFMetricPairFirst", kept);
        metricSecond.upload(pool, cc, classes.sorted(second), "qmDFMetricPairSecond", kept);
        uploadGradientWork(metricGroups, metricClasses, task.aux, "qmDFMetricGroupStart");
    }
    /**
     * The gradient's launches for the pair classes over the fitting shells (gradientShellLists): each launch's runs of
     * its shells on at most THREE_CENTRE_MAX_FITTING_CENTRES_PER_ITEM atoms, for about TARGET_GRADIENT_ITEMS items.
     */
    void uploadGradientWork(GradientWork& work, const vector<PairClassRange>& classes, const QM::FlatShells& fitting, const char* name) {
        work.upload(pool, cc, classes.size(), [&](size_t c) { return gradientShellLists(classes[c].la, classes[c].lb, fitting.l); },
                    [&](size_t c, const vector<int>& shells) {
                        vector<int> atoms(shells.size());
                        for (size_t i = 0; i < shells.size(); i++)
                            atoms[i] = fitting.atom[shells[i]];
                        return centreGroups(atoms, classes[c].end - classes[c].begin, TARGET_GRADIENT_ITEMS,
                                            THREE_CENTRE_MAX_FITTING_CENTRES_PER_ITEM);
                    }, name, kept);
    }
    /** Room for B (rows x columns, column-major) and the contraction kernels; false if it does not fit. */
    bool allocate(int numRows, int numColumns) {
        rows = numRows;
        columns = numColumns;
        const double bytes = (double) rows * columns * sizeof(double);
        if (rows == 0 || columns == 0 || bytes > MAX_TENSOR_BYTES)
            return false;
        try {
            tensor.take(pool, cc, "qmDensityFittingTensor", (size_t) rows * columns);
        }
        catch (const OpenMMException&) {
            return false;  // no room on the device: the host keeps B
        }
        pairVector.take(pool, cc, "qmDensityFittingPairs", columns);
        auxVector.take(pool, cc, "qmDensityFittingAuxiliary", rows);
        // Enough work items for B d: about 1e5 (row, slice) sums, at most 256 slices.
        slices = max(1, min(256, min(columns, (100000 + rows - 1) / rows)));
        fitPartial.take(pool, cc, "qmDensityFittingPartialFit", (size_t) rows * slices);
        fitKernel = program->createKernel("densityFittingFit");
        fitSumKernel = program->createKernel("sumPartialColumns");
        projectKernel = program->createKernel("densityFittingProject");
        fitKernel->addArg(rows);
        fitKernel->addArg(columns);
        fitKernel->addArg(slices);
        fitKernel->addArg(*tensor);
        fitKernel->addArg(*pairVector);
        fitKernel->addArg(*fitPartial);
        fitSumKernel->addArg(rows);
        fitSumKernel->addArg(slices);
        fitSumKernel->addArg(*fitPartial);
        fitSumKernel->addArg(*auxVector);
        projectKernel->addArg(rows);
        projectKernel->addArg(columns);
        projectKernel->addArg(*tensor);
        projectKernel->addArg(*auxVector);
        projectKernel->addArg(*pairVector);
        return true;
    }
    static constexpr int DF_GROUP_SIZE = XC_DENSITY_FITTING_GROUP;  // DF_GROUP of densityFittingProject
    ComputeContext& cc;
    ComputeProgram program, integrals;
    ThreeCentreProgramSource integralProgram;
    // Every device array from the factory's pool (DeviceArrayPool: kept from one geometry to the next instead of
    // allocated and freed per MD step; at least as long as asked, the kernels take the counts).
    shared_ptr<DeviceArrayPool> pool;
    int rows = 0, columns = 0, slices = 1;
    PooledArray tensor, pairVector, auxVector, fitPartial;
    ComputeKernel fitKernel, fitSumKernel, projectKernel;
    // The metric and its inverse with the refinement's vectors and kernels in order (storeMetric).
    PooledArray metricArray, inverseArray, firstFit, fitResidual, fitCorrection;
    bool metricStored = false;
    ComputeKernel firstFitKernel, metricProductKernel, residualKernel, correctionKernel, refinedFitKernel;
    // The pair map's tables and kernels for builds on held matrices (preparePairMap).
    const QM::PairDensityMap* preparedMap = nullptr;
    PooledArray densityMatrix, coulombResult;  // D and J of the builds from host matrices
    PooledArray functionPairFirst, functionPairSecond, columnTermStart, columnTermFunction, columnTermValue, rowTermStart,
        rowTermCartesian, rowTermValue, cartesianJ;
    ComputeKernel gatherKernel, scatterKernel, transformKernel;
    // The integrals' inputs, kept for the gradient of the same geometry.
    bool integralsHere = false;
    int numPairs = 0, numAuxShells = 0, numAuxPrimitives = 0, numAtoms = 0;
    vector<PairClassRange> pairClasses;  // of pairFirst and pairSecond, sorted by class
    BoysParameters boys;
    DeviceShells basis, aux;
    PooledArray pairFirst, pairSecond, pairColumn, auxShellsByL, auxTransform, auxTransformStart, boysTable;
    GradientWork pairGroups;  // the gradient's runs of fitting shells per class of pairs
    PooledArray densityArray, coefficientArray, gradientArray;
    // Hermite coefficients per fitting primitive: of its cartesian functions (per geometry: the tensor and the gradient)
    // and of the fitted density (per gradient); the program's largest fitting l sizes them.
    int auxMaxL = 0;
    PooledArray fittingHermite, fittedHermite;
    // The metric's gradient (prepareMetricGradient): fitting shells and the unit function, their pairs by class, runs.
    DeviceShells metricShells;
    vector<PairClassRange> metricClasses;
    GradientWork metricGroups;
    PooledArray metricFirst, metricSecond, metricDensity;
    PooledArray tensorCounter, gradientCounter;  // the kernels' work items handed out
    bool gradientStarted = false;
    KeptUploads kept;  // last: it waits for the queue to read the tables before the arrays go back to the pool
};


} // namespace

unique_ptr<QM::DensityFittingContractions> OpenMMDFT::createDensityFittingContractions(ComputeContext& cc, ComputeProgram contractionProgram,
                                                                                       ThreeCentreProgramSource integralProgram,
                                                                                       shared_ptr<DeviceArrayPool> pool) {
    return unique_ptr<QM::DensityFittingContractions>(
        new CommonDensityFittingContractions(cc, contractionProgram, integralProgram, std::move(pool)));
}
