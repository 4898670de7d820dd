#include "CommonXCBackend.h"
#include "XCProgram.h"
#include "SideQueueWork.h"
#include "CommonDensityFitting.h"
#include "CommonPointCharges.h"
#include "DeviceShellTables.h"
#include "ThreeCentreProgram.h"
#include "openmmdft/qm/ShellTables.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/Grid.h"
#include "openmmdft/qm/EnvironmentSwitch.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeKernel.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>
#include <chrono>
#include <climits>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

namespace {

double now() {
    return chrono::duration<double>(chrono::steady_clock::now().time_since_epoch()).count();
}

/**
 * Launches a grid-stride kernel (evaluateBasis, gradientPoints, gradientFunctions, partitionWeights) over items work
 * items in OpenMM's default work groups (64 threads on CUDA). Larger groups (256, so that registers rather than
 * OpenMM's cap of 6 work groups per multiprocessor limit the occupancy) were measured against it on an H200 in one
 * lease: the SCF's and the grid's kernels took the same time, the XC gradient's basis values and point terms 0.050
 * instead of 0.040 s of an n = 24 step (docs/PERFORMANCE.md).
 */
void executeGridStride(ComputeKernel& kernel, int items) {
    if (items > 0)
        kernel->execute(items);
}

/** The grid and basis of one geometry as flat arrays, in the layout kernels/qmXC.cc describes. */
struct XCLayout {
    vector<double> x, y, z, w;
    vector<int> pointBatch;
    vector<int> batchPointStart, batchNumPoints, batchNumFunctions, batchFunctionStart, batchFunctions;
    vector<int> batchShellStart, batchNumShells, batchShells, batchShellColumn, batchPhiStart;
    // Work lists of the tiled kernels: density blocks of XC_BLOCK points, and the lower-triangle V tiles of
    // XC_TILE x XC_TILE functions, each in batch order (batchFirstBlock/batchFirstTile: prefix sums).
    vector<int> blockBatch, blockFirstPoint, batchFirstBlock, tileBatch, tileRow, tileColumn, batchFirstTile;
    vector<int> parentAtom, gridBatch;  // host only: each point's atom, each device batch's grid batch
    size_t phiSize = 0;

    static constexpr int BLOCK = XC_BLOCK_POINTS, TILE = XC_TILE_FUNCTIONS;

    XCLayout(const QM::BasisSet& basis, const QM::MolecularGrid& grid) {
        for (size_t index = 0; index < grid.batches().size(); index++) {
            const QM::GridBatch& g = grid.batches()[index];
            if (g.size() == 0 || g.functions.empty())
                continue;  // no significant function: rho = 0 there, as on the host
            const int b = batchPointStart.size();
            gridBatch.push_back(index);
            parentAtom.insert(parentAtom.end(), g.parentAtom.begin(), g.parentAtom.end());
            const int nf = g.functions.size();
            batchPointStart.push_back(x.size());
            batchNumPoints.push_back(g.size());
            batchNumFunctions.push_back(nf);
            batchFunctionStart.push_back(batchFunctions.size());
            batchFunctions.insert(batchFunctions.end(), g.functions.begin(), g.functions.end());
            batchShellStart.push_back(batchShells.size());
            batchNumShells.push_back(g.shells.size());
            int column = 0;
            for (int s : g.shells) {
                batchShells.push_back(s);
                batchShellColumn.push_back(column);
                column += basis.shells()[s].size();
            }
            if (column != nf)
                throw OpenMMException("QMMMForce: a grid batch's functions do not match its shells (internal error)");
            batchPhiStart.push_back((int) phiSize);
            phiSize += (size_t) g.size() * nf;
            if (phiSize > (size_t) INT_MAX)
                throw OpenMMException("QMMMForce: the grid's basis values exceed 2^31 entries; use a coarser grid or fewer QM atoms");
            if (!is_sorted(g.functions.begin(), g.functions.end()))
                throw OpenMMException("QMMMForce: a grid batch's functions are not in basis order (internal error)");
            batchFirstBlock.push_back(blockBatch.size());
            for (int p = 0; p < (int) g.size(); p += BLOCK) {
                blockBatch.push_back(b);
                blockFirstPoint.push_back((int) x.size() + p);
            }
            batchFirstTile.push_back(tileBatch.size());
            const int tiles = (nf + TILE - 1) / TILE;
            for (int row = 0; row < tiles; row++)
                for (int column = 0; column <= row; column++) {
                    tileBatch.push_back(b);
                    tileRow.push_back(row);
                    tileColumn.push_back(column);
                }
            x.insert(x.end(), g.x.begin(), g.x.end());
            y.insert(y.end(), g.y.begin(), g.y.end());
            z.insert(z.end(), g.z.begin(), g.z.end());
            w.insert(w.end(), g.w.begin(), g.w.end());
            pointBatch.insert(pointBatch.end(), g.size(), b);
        }
        batchFirstBlock.push_back(blockBatch.size());
        batchFirstTile.push_back(tileBatch.size());
        batchPhiStart.push_back((int) phiSize);
        batchPointStart.push_back(x.size());
        batchFunctionStart.push_back(batchFunctions.size());
    }
    int numBatches() const {
        return batchNumPoints.size();
    }
};

/** The atoms and the pair data of the atomic partition on the device (kernels partitionWeights and
 * partitionWeightGradient): positions (bohr), 1/R_ij, size adjustments a_ij, nearest-neighbour distances and every
 * atom's neighbours nearest first (the order of the cell screening's products). */
struct PartitionArrays {
    PooledArray atoms, invR, sizeAdjustment, nearest, order;
    /** blocking = false: uploads queued on the current queue, from the host tables kept here. */
    void upload(const shared_ptr<DeviceArrayPool>& pool, ComputeContext& cc, const vector<QM::QMAtom>& qmAtoms,
                const QM::GridSettings& settings, bool blocking = true) {
        xyz.clear();
        for (const QM::QMAtom& atom : qmAtoms)
            xyz.insert(xyz.end(), atom.xyz, atom.xyz + 3);
        QM::partitionPairData(qmAtoms, settings, inverse, adjustment, neighbour, neighbourOrder);
        order.upload(pool, cc, neighbourOrder, "qmPartitionNeighbourOrder", blocking);
        for (double& d : neighbour)
            d = min(d, 1e300);  // one atom: no neighbour (the kernels never read it then)
        atoms.upload(pool, cc, xyz, "qmPartitionAtoms", blocking);
        invR.upload(pool, cc, inverse, "qmPartitionPairInverseDistance", blocking);
        sizeAdjustment.upload(pool, cc, adjustment, "qmPartitionPairSizeAdjustment", blocking);
        nearest.upload(pool, cc, neighbour, "qmPartitionNearestNeighbour", blocking);
    }
private:
    vector<double> xyz, inverse, adjustment, neighbour;
    vector<int> neighbourOrder;
};

class CommonXCBackend : public QM::XCBackend {
public:
    /** xcQueue: where the set-up's, the SCF's and the gradient's work runs (null: the default queue, in order with the rest). */
    CommonXCBackend(ComputeContext& cc, ComputeProgram program, const QM::XCGeometry& geometry,
                    shared_ptr<DeviceArrayPool> arrays, ComputeQueue xcQueue)
        : cc(cc), geometry(geometry), layout(geometry.basis, geometry.grid), shellTables(geometry.basis), pool(std::move(arrays)),
          sideQueue(cc, std::move(xcQueue)) {
        ContextSelector selector(cc);
        const int nbf = geometry.basis.size();
        // The set-up's uploads and basis values on the back end's own queue, beside the fitting tensor's kernels on the
        // default one (uploads there would wait for them), from host tables kept until the queue has read them.
        SideQueueWork::Scope queue(sideQueue, false);
        const bool blocking = !queue.nonBlocking();
        const QM::ShellTables& shells = shellTables;
        pointX.upload(pool, cc, layout.x, "qmXCPointX", blocking);
        pointY.upload(pool, cc, layout.y, "qmXCPointY", blocking);
        pointZ.upload(pool, cc, layout.z, "qmXCPointZ", blocking);
        pointW.upload(pool, cc, layout.w, "qmXCPointW", blocking);
        pointBatch.upload(pool, cc, layout.pointBatch, "qmXCPointBatch", blocking);
        batchPointStart.upload(pool, cc, layout.batchPointStart, "qmXCBatchPointStart", blocking);
        batchNumPoints.upload(pool, cc, layout.batchNumPoints, "qmXCBatchNumPoints", blocking);
        batchNumFunctions.upload(pool, cc, layout.batchNumFunctions, "qmXCBatchNumFunctions", blocking);
        batchFunctionStart.upload(pool, cc, layout.batchFunctionStart, "qmXCBatchFunctionStart", blocking);
        batchFunctions.upload(pool, cc, layout.batchFunctions, "qmXCBatchFunctions", blocking);
        batchShellStart.upload(pool, cc, layout.batchShellStart, "qmXCBatchShellStart", blocking);
        batchNumShells.upload(pool, cc, layout.batchNumShells, "qmXCBatchNumShells", blocking);
        batchShells.upload(pool, cc, layout.batchShells, "qmXCBatchShells", blocking);
        batchShellColumn.upload(pool, cc, layout.batchShellColumn, "qmXCBatchShellColumn", blocking);
        batchPhiStart.upload(pool, cc, layout.batchPhiStart, "qmXCBatchPhiStart", blocking);
        blockBatch.upload(pool, cc, layout.blockBatch, "qmXCBlockBatch", blocking);
        blockFirstPoint.upload(pool, cc, layout.blockFirstPoint, "qmXCBlockFirstPoint", blocking);
        tileBatch.upload(pool, cc, layout.tileBatch, "qmXCTileBatch", blocking);
        tileRow.upload(pool, cc, layout.tileRow, "qmXCTileRow", blocking);
        tileColumn.upload(pool, cc, layout.tileColumn, "qmXCTileColumn", blocking);
        shellCenter.upload(pool, cc, shells.center, "qmXCShellCenter", blocking);
        shellL.upload(pool, cc, shells.l, "qmXCShellL", blocking);
        shellPure.upload(pool, cc, shells.pure, "qmXCShellPure", blocking);
        shellPrimStart.upload(pool, cc, shells.primStart, "qmXCShellPrimStart", blocking);
        shellNumPrim.upload(pool, cc, shells.numPrim, "qmXCShellNumPrim", blocking);
        primExponent.upload(pool, cc, shells.exponent, "qmXCPrimExponent", blocking);
        primCoefficient.upload(pool, cc, shells.coefficient, "qmXCPrimCoefficient", blocking);
        pureMatrixArray.upload(pool, cc, shells.pureMatrix, "qmXCPureMatrix", blocking);
        const size_t numPoints = max<size_t>(layout.w.size(), 1);
        wv.take(pool, cc, "qmXCWeightedPotential", numPoints);
        pointEnergy.take(pool, cc, "qmXCPointEnergy", numPoints);
        pointElectrons.take(pool, cc, "qmXCPointElectrons", numPoints);
        sums.take(pool, cc, "qmXCBatchSums", max(2 * layout.numBatches(), 1));
        density.take(pool, cc, "qmXCDensity", (size_t) nbf * nbf);
        occupied.take(pool, cc, "qmXCOccupiedOrbitals", (size_t) nbf * nbf);  // at most nbf of them
        matrix.take(pool, cc, "qmXCMatrix", (size_t) nbf * nbf);
        fixedMatrix.zeros<long long>(pool, cc, "qmXCFixedPointMatrix", (size_t) nbf * nbf);
        planChunks();
        phi.take(pool, cc, "qmXCBasisValues", max<size_t>(largestChunk, 1));
        createKernels(program);
        if (keepBasisValues && !chunks.empty())
            evaluateBasis(chunks[0]);
    }

    QM::XCContribution compute(const Eigen::MatrixXd& D, const Eigen::MatrixXd* factor) override {
        return startCompute(D, factor)->finish();
    }

    unique_ptr<QM::XCComputeInFlight> startCompute(const Eigen::MatrixXd& D, const Eigen::MatrixXd* factor) override;

    /** The XC matrix, energy and electron count, once the kernels startCompute queued are done. */
    QM::XCContribution finishCompute() {
        ContextSelector selector(cc);
        const int nbf = geometry.basis.size();
        QM::XCContribution out;
        out.matrix = Eigen::MatrixXd::Zero(nbf, nbf);
        if (layout.numBatches() == 0)
            return out;
        waitForOwnQueue();  // the downloads go through the default queue, which does not know of the back end's
        const vector<double> v = matrix.downloadFirst<double>((size_t) nbf * nbf);
        const vector<double> s = sums.downloadFirst<double>(2 * (size_t) layout.numBatches());
        out.matrix = Eigen::Map<const Eigen::MatrixXd>(v.data(), nbf, nbf);
        for (int b = 0; b < layout.numBatches(); b++) {  // in batch order: deterministic
            out.energy += s[2 * b];
            out.electrons += s[2 * b + 1];
        }
        return out;
    }

    /** Waits for the work on the back end's own queue (without one, the default queue's downloads wait for it). */
    void waitForOwnQueue() {
        sideQueue.wait();
    }

    Eigen::MatrixXd gradient(const Eigen::MatrixXd& D, bool gridResponse) override {
        return startGradient(D, gridResponse)->finish();
    }

    unique_ptr<QM::XCGradientInFlight> startGradient(const Eigen::MatrixXd& D, bool gridResponse) override;

    /** The gradient's sums, once its kernels are done (its work in flight's finish()). */
    Eigen::MatrixXd finishGradient(bool gridResponse, double launchSeconds) {
        ContextSelector selector(cc);
        const int numAtoms = geometry.atoms.size();
        Eigen::MatrixXd G = Eigen::MatrixXd::Zero(numAtoms, 3);
        timings.clear();
        timings["launch"] = launchSeconds;
        if (layout.numBatches() == 0)
            return G;
        double t = now();
        waitForOwnQueue();  // the downloads below go through the default queue, which does not know of the back end's
        // The basis functions move with their atoms.
        const int numFunctions = layout.batchFunctions.size();
        const vector<double> perFunction = functionGradient.downloadFirst<double>(3 * (size_t) numFunctions);
        timings["wait"] = now() - t;  // the download waited for the kernels (all of them, with their own queue)
        t = now();
        for (int k = 0; k < numFunctions; k++)
            for (int c = 0; c < 3; c++)
                G(atomOf[layout.batchFunctions[k]], c) -= perFunction[3 * (size_t) k + c];
        if (!gridResponse)
            return G;
        // On the moving grid each point moves with its parent atom, and the partition weights change; their
        // derivatives need only f = rho eps_xc per point, already on the device.
        const size_t numPoints = layout.w.size();
        const vector<double> perPoint = pointGradient.downloadFirst<double>(3 * numPoints);
        for (size_t p = 0; p < numPoints; p++)
            for (int c = 0; c < 3; c++)
                G(layout.parentAtom[p], c) += perPoint[3 * p + c];
        if (!partitionOnDevice()) {
            // More atoms than a work item's private gradient holds: on the host.
            const QM::QMSettings& s = geometry.settings;
            const vector<double> f = pointF.downloadFirst<double>(numPoints);
            G += QM::xcPartitionWeightGradient(geometry.grid, geometry.atoms, s.grid, layout.gridBatch, f, s.threads);
            timings["partitionWeightsOnHost"] = now() - t;
            return G;
        }
        const vector<double> weightGradient = partitionGradient.downloadFirst<double>(3 * (size_t) numAtoms);
        for (int atom = 0; atom < numAtoms; atom++)
            for (int c = 0; c < 3; c++)
                G(atom, c) += weightGradient[3 * atom + c];
        timings["sums"] = now() - t;
        return G;
    }

    map<string, double> gradientTimings() const override {
        return timings;
    }

    size_t storedBytes() const override {
        return keepBasisValues ? layout.phiSize * sizeof(double) : 0;
    }
    const char* name() const override {
        return "device";
    }
    std::string notice() const override {
        if (geometry.settings.storage != QM::BasisFunctionStorage::Precompute || keepBasisValues)
            return "";
        return "Precompute needs " + std::to_string(layout.phiSize * sizeof(double) / 1048576.0) + " MiB of device memory for the " +
               "basis values, more than the limit of " + std::to_string(geometry.settings.grid.maxStoredBasisMiB) +
               " MiB (setBasisStorageLimit): they are recomputed every SCF iteration, in " + std::to_string(chunks.size()) +
               " chunks";
    }

private:
    struct Chunk {
        int firstBatch, lastBatch;  // batches [first, last)
    };

    /** Batches in chunks whose `perPoint` arrays of basis-value size fit the budget (at least one batch each). */
    vector<Chunk> chunkBatches(double budgetEntries, bool oneChunk, size_t& largest) const {
        vector<Chunk> out;
        largest = 0;
        int first = 0;
        while (first < layout.numBatches()) {
            int last = first + 1;
            while (last < layout.numBatches() &&
                   (oneChunk || layout.batchPhiStart[last + 1] - layout.batchPhiStart[first] <= budgetEntries))
                last++;
            out.push_back({first, last});
            largest = max<size_t>(largest, (size_t) (layout.batchPhiStart[last] - layout.batchPhiStart[first]));
            first = last;
        }
        return out;
    }

    /** Buffers and kernels of the gradient, made on its first use (values, three gradients and X per chunk). */
    void prepareGradient() {
        if (gradientBasisKernel)
            return;
        const double budget = geometry.settings.grid.maxStoredBasisMiB * 1048576.0 / sizeof(double) / 5;
        size_t largest;
        gradientChunks = chunkBatches(budget, false, largest);
        largest = max<size_t>(largest, 1);
        gradientPhi.take(pool, cc, "qmXCGradientPhi", largest);
        gradientX.take(pool, cc, "qmXCGradientX", largest);
        for (int c = 0; c < 3; c++)
            basisGradient[c].take(pool, cc, "qmXCBasisGradient", largest);
        const size_t numPoints = max<size_t>(layout.w.size(), 1);
        pointF.take(pool, cc, "qmXCPointF", numPoints);
        pointGradient.take(pool, cc, "qmXCPointGradient", 3 * numPoints);
        functionGradient.take(pool, cc, "qmXCFunctionGradient", 3 * max<size_t>(layout.batchFunctions.size(), 1));
        functionGradientSlices.take(pool, cc, "qmXCFunctionGradientSlices",
                                    3 * FUNCTION_GRADIENT_SLICES * max<size_t>(layout.batchFunctions.size(), 1));
        atomOf.resize(geometry.basis.size());
        for (int s = 0; s < geometry.basis.numShells(); s++)
            for (int i = 0; i < geometry.basis.shells()[s].size(); i++)
                atomOf[geometry.basis.offset(s) + i] = geometry.basis.shells()[s].atom;

        gradientBasisKernel = basisKernelFor(*gradientPhi, basisGradient);

        // X = Phi D, rho, the functional and f by the SCF's tiled density kernel, on the gradient's chunk buffers.
        gradientDensityKernel = program->createKernel("densityBlocks");
        gradientDensityKernel->addArg(0);  // firstBlock
        gradientDensityKernel->addArg(0);  // lastBlock
        for (ComputeArray* a : {blockBatch.get(), blockFirstPoint.get(), pointW.get(), batchPointStart.get(),
                                batchNumPoints.get(), batchNumFunctions.get(), batchPhiStart.get()})
            gradientDensityKernel->addArg(*a);
        gradientDensityKernel->addArg(0);  // phiBase (argument 9)
        for (ComputeArray* a : {batchFunctionStart.get(), batchFunctions.get(), density.get()})
            gradientDensityKernel->addArg(*a);
        gradientDensityKernel->addArg(geometry.basis.size());
        for (ComputeArray* a : {gradientPhi.get(), wv.get(), pointEnergy.get(), pointElectrons.get()})
            gradientDensityKernel->addArg(*a);
        gradientDensityKernel->addArg(1);
        gradientDensityKernel->addArg(*gradientX);
        gradientDensityKernel->addArg(*pointF);
        gradientDensityKernel->addArg(*occupied);
        gradientDensityKernel->addArg(0);  // X = Phi D: no orbitals

        gradientPointsKernel = program->createKernel("gradientPoints");
        gradientPointsKernel->addArg(0);
        gradientPointsKernel->addArg(0);
        for (ComputeArray* a : {pointBatch.get(), batchPointStart.get(), batchNumFunctions.get(), batchPhiStart.get()})
            gradientPointsKernel->addArg(*a);
        gradientPointsKernel->addArg(0);  // phiBase (argument 6)
        for (ComputeArray* a : {basisGradient[0].get(), basisGradient[1].get(), basisGradient[2].get(), gradientX.get(),
                                wv.get(), pointGradient.get()})
            gradientPointsKernel->addArg(*a);

        gradientFunctionsKernel = program->createKernel("gradientFunctions");
        gradientFunctionsKernel->addArg(0);
        gradientFunctionsKernel->addArg(0);
        for (ComputeArray* a : {batchFunctionStart.get(), batchPointStart.get(), batchNumPoints.get(),
                                batchNumFunctions.get(), batchPhiStart.get()})
            gradientFunctionsKernel->addArg(*a);
        gradientFunctionsKernel->addArg(0);  // phiBase (argument 7)
        for (ComputeArray* a : {basisGradient[0].get(), basisGradient[1].get(), basisGradient[2].get(), gradientX.get(),
                                wv.get(), functionGradientSlices.get()})
            gradientFunctionsKernel->addArg(*a);
        gradientSlicesKernel = program->createKernel("sumPartialColumns");
        gradientSlicesKernel->addArg(3 * (int) layout.batchFunctions.size());
        gradientSlicesKernel->addArg(FUNCTION_GRADIENT_SLICES);
        gradientSlicesKernel->addArg(*functionGradientSlices);
        gradientSlicesKernel->addArg(*functionGradient);
    }

    /** Buffers and kernels of the partition-weight derivatives, made on their first use (blocking = false: the tables
     *  go up on the current queue from the host tables kept here). */
    void preparePartitionGradient(bool blocking) {
        if (partitionKernel)
            return;
        const int numAtoms = geometry.atoms.size(), numPoints = layout.w.size();
        pointParentAtom.upload(pool, cc, layout.parentAtom, "qmXCPointParentAtom", blocking);
        partition.upload(pool, cc, geometry.atoms, geometry.settings.grid, blocking);
        // Columns of PARTITION_GROUP items with about POINTS_PER_ITEM points each, at most a few per work group that
        // OpenMM launches at once (the work groups take them from partitionCounter and sum each one themselves).
        const int wanted = (numPoints + PARTITION_GROUP * POINTS_PER_ITEM - 1) / (PARTITION_GROUP * POINTS_PER_ITEM);
        partitionColumns = max(1, min(wanted, COLUMNS_PER_WORK_GROUP * cc.getNumThreadBlocks()));
        partialGradients.take(pool, cc, "qmXCPartialWeightGradients", (size_t) 3 * numAtoms * partitionColumns);
        initializeWorkCounter(pool, cc, partitionCounter, "qmXCPartitionColumnCounter");
        partitionGradient.take(pool, cc, "qmXCWeightGradient", 3 * numAtoms);
        partitionKernel = program->createKernel("partitionWeightGradient");
        partitionKernel->addArg(numPoints);
        partitionKernel->addArg(partitionColumns);
        partitionKernel->addArg(numAtoms);
        partitionKernel->addArg(geometry.settings.grid.partition == QM::AtomicPartition::StratmannScuseriaFrisch ? 1 : 0);
        partitionKernel->addArg(QM::ssfHalfWidth());
        partitionKernel->addArg(QM::partitionRelativeCellCutoff());
        for (ComputeArray* a : {pointX.get(), pointY.get(), pointZ.get(), pointW.get(), pointF.get(),
                                pointParentAtom.get(), partition.atoms.get(), partition.invR.get(),
                                partition.sizeAdjustment.get(), partition.nearest.get(), partition.order.get(),
                                partialGradients.get(), partitionCounter.get()})
            partitionKernel->addArg(*a);
        partitionSumKernel = program->createKernel("sumPartialColumns");
        partitionSumKernel->addArg(3 * numAtoms);
        partitionSumKernel->addArg(partitionColumns);
        partitionSumKernel->addArg(*partialGradients);
        partitionSumKernel->addArg(*partitionGradient);
    }

    /** Batches in chunks whose basis values fit the budget (one chunk for all when they can be kept). */
    void planChunks() {
        const double budget = geometry.settings.grid.maxStoredBasisMiB * 1048576.0 / sizeof(double);
        keepBasisValues = geometry.settings.storage == QM::BasisFunctionStorage::Precompute && layout.phiSize <= budget;
        chunks = chunkBatches(budget, keepBasisValues, largestChunk);
    }

    /** An evaluateBasis kernel writing values to phi and, when gradients are given, gradients to them too
     * (firstPoint, numPoints and phiBase, argument 9, are set per chunk). */
    ComputeKernel basisKernelFor(ComputeArray& phi, const PooledArray* gradients) {
        ComputeKernel kernel = program->createKernel("evaluateBasis");
        kernel->addArg(0);  // firstPoint
        kernel->addArg(0);  // numPoints
        for (ComputeArray* a : {pointX.get(), pointY.get(), pointZ.get(), pointBatch.get(), batchPointStart.get(),
                                batchNumFunctions.get(), batchPhiStart.get()})
            kernel->addArg(*a);
        kernel->addArg(0);  // phiBase
        for (ComputeArray* a : {batchShellStart.get(), batchNumShells.get(), batchShells.get(), batchShellColumn.get(),
                                shellCenter.get(), shellL.get(), shellPure.get(), shellPrimStart.get(),
                                shellNumPrim.get(), primExponent.get(), primCoefficient.get(), pureMatrixArray.get()})
            kernel->addArg(*a);
        kernel->addArg(gradients != nullptr ? 1 : 0);
        kernel->addArg(phi);
        for (int c = 0; c < 3; c++)
            kernel->addArg(gradients != nullptr ? *gradients[c] : phi);  // not touched without gradients
        return kernel;
    }

    void createKernels(ComputeProgram program) {
        this->program = program;
        basisKernel = basisKernelFor(*phi, nullptr);

        densityKernel = program->createKernel("densityBlocks");
        densityKernel->addArg(0);  // firstBlock
        densityKernel->addArg(0);  // lastBlock
        for (ComputeArray* a : {blockBatch.get(), blockFirstPoint.get(), pointW.get(), batchPointStart.get(),
                                batchNumPoints.get(), batchNumFunctions.get(), batchPhiStart.get()})
            densityKernel->addArg(*a);
        densityKernel->addArg(0);  // phiBase (argument 9)
        for (ComputeArray* a : {batchFunctionStart.get(), batchFunctions.get(), density.get()})
            densityKernel->addArg(*a);
        densityKernel->addArg(geometry.basis.size());
        for (ComputeArray* a : {phi.get(), wv.get(), pointEnergy.get(), pointElectrons.get()})
            densityKernel->addArg(*a);
        densityKernel->addArg(0);   // no X: the SCF needs rho only
        densityKernel->addArg(*wv);  // (X and f are not written)
        densityKernel->addArg(*wv);
        densityKernel->addArg(*occupied);
        densityKernel->addArg(0);  // numOccupied (argument 22): set by compute()

        matricesKernel = program->createKernel("matrixTiles");
        matricesKernel->addArg(0);  // firstTile
        matricesKernel->addArg(0);  // lastTile
        for (ComputeArray* a : {tileBatch.get(), tileRow.get(), tileColumn.get(), batchPointStart.get(),
                                batchNumPoints.get(), batchNumFunctions.get(), batchPhiStart.get()})
            matricesKernel->addArg(*a);
        matricesKernel->addArg(0);  // phiBase (argument 9)
        for (ComputeArray* a : {batchFunctionStart.get(), batchFunctions.get()})
            matricesKernel->addArg(*a);
        matricesKernel->addArg(geometry.basis.size());
        for (ComputeArray* a : {phi.get(), wv.get(), fixedMatrix.get()})
            matricesKernel->addArg(*a);

        fixedToMatrixKernel = program->createKernel("fixedToMatrix");
        fixedToMatrixKernel->addArg(geometry.basis.size());
        fixedToMatrixKernel->addArg(*fixedMatrix);
        fixedToMatrixKernel->addArg(*matrix);

        sumsKernel = program->createKernel("batchSums");
        sumsKernel->addArg(layout.numBatches());
        for (ComputeArray* a : {batchPointStart.get(), batchNumPoints.get(), pointEnergy.get(), pointElectrons.get(),
                                sums.get()})
            sumsKernel->addArg(*a);
    }

    void evaluateBasis(const Chunk& chunk) {
        const int firstPoint = layout.batchPointStart[chunk.firstBatch];
        const int numPoints = layout.batchPointStart[chunk.lastBatch] - firstPoint;
        basisKernel->setArg(0, firstPoint);
        basisKernel->setArg(1, numPoints);
        basisKernel->setArg(9, layout.batchPhiStart[chunk.firstBatch]);
        executeGridStride(basisKernel, numPoints);
    }

    map<string, double> timings;  // of the last gradient
    ComputeContext& cc;
    QM::XCGeometry geometry;
    XCLayout layout;
    QM::ShellTables shellTables;  // of the shared shell evaluation (qmengine/src/shared/shellValues.cc), as the host's
    vector<Chunk> chunks;
    size_t largestChunk = 0;
    bool keepBasisValues = false;
    // Every device array from the factory's pool: kept from one geometry to the next instead of allocated and freed
    // per MD step (at least as long as asked: the kernels take the counts).
    shared_ptr<DeviceArrayPool> pool;
    PooledArray pointX, pointY, pointZ, pointW, pointBatch;
    PooledArray batchPointStart, batchNumPoints, batchNumFunctions, batchFunctionStart, batchFunctions;
    PooledArray batchShellStart, batchNumShells, batchShells, batchShellColumn, batchPhiStart;
    PooledArray blockBatch, blockFirstPoint, tileBatch, tileRow, tileColumn;
    PooledArray shellCenter, shellL, shellPure, shellPrimStart, shellNumPrim, primExponent, primCoefficient;
    PooledArray pureMatrixArray;
    PooledArray phi;
    PooledArray wv, pointEnergy, pointElectrons, sums, density, occupied, matrix, fixedMatrix;
    ComputeKernel basisKernel, densityKernel, matricesKernel, fixedToMatrixKernel, sumsKernel;
    static constexpr int GROUP_SIZE = XC_TILED_GROUP, BATCH_SUM_GROUP = XC_BATCH_SUM_GROUP;
    ComputeProgram program;
    vector<Chunk> gradientChunks;
    vector<int> atomOf;  // the atom of every basis function
    PooledArray gradientPhi, gradientX, basisGradient[3];
    // The matrices it uploads without blocking (OpenCL reads them when the queue comes to them).
    vector<double> uploadedDensity, uploadedOrbitals;
    PooledArray pointF, pointGradient, functionGradient, functionGradientSlices;
    ComputeKernel gradientBasisKernel, gradientDensityKernel, gradientPointsKernel, gradientFunctionsKernel, gradientSlicesKernel;
    static constexpr int FUNCTION_GRADIENT_SLICES = XC_FUNCTION_GRADIENT_SLICES;
    // The partition-weight derivatives (XCProgram.h); POINTS_PER_ITEM and COLUMNS_PER_WORK_GROUP size the kernel's
    // columns of partial sums (see preparePartitionGradient).
    static constexpr int PARTITION_MAX_ATOMS = XC_PARTITION_MAX_ATOMS, PARTITION_GROUP = XC_PARTITION_GROUP, POINTS_PER_ITEM = 4,
                         COLUMNS_PER_WORK_GROUP = 4;
    int partitionColumns = 0;
    bool partitionOnDevice() const {
        return (int) geometry.atoms.size() <= PARTITION_MAX_ATOMS;
    }
    PooledArray pointParentAtom, partialGradients, partitionGradient, partitionCounter;
    PartitionArrays partition;
    ComputeKernel partitionKernel, partitionSumKernel;
    // The work on the back end's own queue (null: the default one); last, so that it waits before the arrays go back.
    SideQueueWork sideQueue;
};

/**
 * The back end's work in flight (the XC matrix, the gradient): finish() takes its result once its kernels are done
 * (take waits for them); given up on, it waits for them all the same, since they may still use the back end's arrays.
 */
template <class Result>
class BackendWorkInFlight : public QM::WorkInFlight<Result> {
public:
    BackendWorkInFlight(CommonXCBackend& backend, function<Result()> take) : backend(backend), take(std::move(take)) {
    }
    ~BackendWorkInFlight() override {
        if (!finished)
            backend.waitForOwnQueue();
    }
    Result finish() override {
        finished = true;
        return take();
    }
private:
    CommonXCBackend& backend;
    function<Result()> take;
    bool finished = false;
};
typedef BackendWorkInFlight<QM::XCContribution> ComputeInFlight;
typedef BackendWorkInFlight<Eigen::MatrixXd> GradientInFlight;

unique_ptr<QM::XCComputeInFlight> CommonXCBackend::startCompute(const Eigen::MatrixXd& D, const Eigen::MatrixXd* factor) {
    ContextSelector selector(cc);
    const int nbf = geometry.basis.size();
    if (layout.numBatches() == 0)
        return unique_ptr<QM::XCComputeInFlight>(new ComputeInFlight(*this, [this] { return finishCompute(); }));
    uploadedDensity.assign(D.data(), D.data() + (size_t) nbf * nbf);  // symmetric: either layout
    // The occupied orbitals too (D = F F^T), row-major: batches with more functions than orbitals form rho
    // from them, as the host's integrator does.
    const int numOccupied = factor != nullptr && factor->rows() == nbf && factor->cols() < nbf ? (int) factor->cols() : 0;
    if (numOccupied > 0) {
        uploadedOrbitals.resize((size_t) nbf * numOccupied);
        Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> >(uploadedOrbitals.data(), nbf, numOccupied) =
            *factor;
    }
    SideQueueWork::Scope queue(sideQueue, true);
    (*density).uploadSubArray(uploadedDensity.data(), 0, (int) uploadedDensity.size(), !queue.nonBlocking());
    if (numOccupied > 0)
        (*occupied).uploadSubArray(uploadedOrbitals.data(), 0, (int) uploadedOrbitals.size(), !queue.nonBlocking());
    densityKernel->setArg(22, numOccupied);
    for (const Chunk& chunk : chunks) {
        if (!keepBasisValues)
            evaluateBasis(chunk);
        const int phiBase = layout.batchPhiStart[chunk.firstBatch];
        const int firstBlock = layout.batchFirstBlock[chunk.firstBatch], lastBlock = layout.batchFirstBlock[chunk.lastBatch];
        densityKernel->setArg(0, firstBlock);
        densityKernel->setArg(1, lastBlock);
        densityKernel->setArg(9, phiBase);
        densityKernel->execute(GROUP_SIZE * (lastBlock - firstBlock), GROUP_SIZE);
        const int firstTile = layout.batchFirstTile[chunk.firstBatch], lastTile = layout.batchFirstTile[chunk.lastBatch];
        matricesKernel->setArg(0, firstTile);
        matricesKernel->setArg(1, lastTile);
        matricesKernel->setArg(9, phiBase);
        matricesKernel->execute(GROUP_SIZE * (lastTile - firstTile), GROUP_SIZE);
    }
    fixedToMatrixKernel->execute(nbf * nbf);
    sumsKernel->execute(BATCH_SUM_GROUP * layout.numBatches(), BATCH_SUM_GROUP);
    return unique_ptr<QM::XCComputeInFlight>(new ComputeInFlight(*this, [this] { return finishCompute(); }));
}

unique_ptr<QM::XCGradientInFlight> CommonXCBackend::startGradient(const Eigen::MatrixXd& D, bool gridResponse) {
    ContextSelector selector(cc);
    const double start = now();
    const int nbf = geometry.basis.size();
    if (layout.numBatches() == 0)
        return unique_ptr<QM::XCGradientInFlight>(
            new GradientInFlight(*this, [this, gridResponse] { return finishGradient(gridResponse, 0.0); }));
    prepareGradient();
    uploadedDensity.assign(D.data(), D.data() + (size_t) nbf * nbf);  // symmetric: either layout
    {
        SideQueueWork::Scope queue(sideQueue, true);
        if (gridResponse && partitionOnDevice())
            preparePartitionGradient(!queue.nonBlocking());
        (*density).uploadSubArray(uploadedDensity.data(), 0, (int) uploadedDensity.size(), !queue.nonBlocking());
        for (const Chunk& chunk : gradientChunks) {
            const int firstPoint = layout.batchPointStart[chunk.firstBatch];
            const int numPoints = layout.batchPointStart[chunk.lastBatch] - firstPoint;
            const int phiBase = layout.batchPhiStart[chunk.firstBatch];
            for (ComputeKernel* k : {&gradientBasisKernel, &gradientPointsKernel}) {
                (*k)->setArg(0, firstPoint);
                (*k)->setArg(1, numPoints);
            }
            gradientBasisKernel->setArg(9, phiBase);
            executeGridStride(gradientBasisKernel, numPoints);
            const int firstBlock = layout.batchFirstBlock[chunk.firstBatch], lastBlock = layout.batchFirstBlock[chunk.lastBatch];
            gradientDensityKernel->setArg(0, firstBlock);
            gradientDensityKernel->setArg(1, lastBlock);
            gradientDensityKernel->setArg(9, phiBase);
            gradientDensityKernel->execute(GROUP_SIZE * (lastBlock - firstBlock), GROUP_SIZE);
            gradientPointsKernel->setArg(6, phiBase);
            executeGridStride(gradientPointsKernel, numPoints);
            gradientFunctionsKernel->setArg(0, chunk.firstBatch);
            gradientFunctionsKernel->setArg(1, chunk.lastBatch);
            gradientFunctionsKernel->setArg(7, phiBase);
            executeGridStride(gradientFunctionsKernel, FUNCTION_GRADIENT_SLICES * (layout.batchFunctionStart[chunk.lastBatch] -
                                                                                layout.batchFunctionStart[chunk.firstBatch]));
        }
        gradientSlicesKernel->execute(3 * (int) layout.batchFunctions.size());
        // The partition-weight derivatives need f = rho eps_xc per point, which the chunks' density kernels wrote.
        if (gridResponse && partitionOnDevice()) {
            partitionKernel->execute(min(partitionColumns, cc.getNumThreadBlocks()) * PARTITION_GROUP, PARTITION_GROUP);
            partitionSumKernel->execute(3 * geometry.atoms.size());
        }
    }
    const double launchSeconds = now() - start;
    return unique_ptr<QM::XCGradientInFlight>(
        new GradientInFlight(*this, [this, gridResponse, launchSeconds] { return finishGradient(gridResponse, launchSeconds); }));
}

} // namespace

CommonXCBackendFactory::CommonXCBackendFactory(ComputeContext& cc, DeviceSymmetricInverse inverse, const XCPartitionSizes& partition)
    : cc(cc), partitionSizes(partition) {
    charges.reset(new CommonPointCharges(cc, threeCentreSource(), arrayPool, [this] { return ownQueue(); }));
    if (inverse != nullptr)
        deviceInverse = inverse(cc);
    products.reset(new CommonMatrixProducts(cc));
}

CommonXCBackendFactory::~CommonXCBackendFactory() {
    ContextSelector selector(cc);  // the queue is the device's object
    xcQueue.reset();
}

ComputeQueue CommonXCBackendFactory::ownQueue() const {
    // Temporary (EnvironmentSwitch.h), for a lease's A/B: the XC work on the default queue, in order with the point
    // charges, the fitting tensor, the Coulomb builds and the density fitting's gradients instead of beside them.
    static const bool separate = QM::environmentCount("OPENMMDFT_XC_ON_DEFAULT_QUEUE", 0) == 0;
    if (separate && !xcQueue) {
        ContextSelector selector(cc);
        xcQueue = cc.createQueue();
    }
    return xcQueue;
}

unique_ptr<QM::DensityFittingContractions> CommonXCBackendFactory::densityFittingContractions() const {
    return createDensityFittingContractions(cc, programFor(0), threeCentreSource(), arrayPool);
}

ComputeProgram CommonXCBackendFactory::threeCentreProgram(int basisL, int auxL, bool pointCharges) const {
    auto& compiled = threeCentrePrograms[make_tuple(basisL, auxL, pointCharges)];
    if (!compiled) {
        ContextSelector selector(cc);
        compiled = cc.compileProgram(threeCentreProgramSource(basisL, auxL, pointCharges), threeCentreDefines(basisL, auxL, pointCharges));
    }
    return compiled;
}

bool CommonXCBackendFactory::supported(ComputeContext& cc) {
    return cc.getSupportsDoublePrecision();
}

ComputeProgram CommonXCBackendFactory::programFor(int index) const {
    if (!program[index]) {
        ContextSelector selector(cc);
        program[index] = cc.compileProgram(xcProgramSource(), xcProgramDefines(index, partitionSizes));
    }
    return program[index];
}

unique_ptr<QM::XCBackend> CommonXCBackendFactory::create(const QM::XCGeometry& geometry) const {
    const int index = geometry.settings.functional == QM::Functional::SVWN5 ? 0 : 1;
    return unique_ptr<QM::XCBackend>(new CommonXCBackend(cc, programFor(index), geometry, arrayPool, ownQueue()));
}

void CommonXCBackendFactory::weights(const vector<QM::QMAtom>& atoms, const QM::GridSettings& settings,
                                     const vector<QM::RadialGrid>& radial, const vector<vector<int>>& angularSizes,
                                     vector<double>& partition) const {
    partition = startWeights(atoms, settings, radial, angularSizes)->finish();
}

namespace {
/**
 * The raw grid's partition weights in flight on the device: the shells' radii and Lebedev grids, the atoms' pair data,
 * the kernel and its arrays (from the pool, given back when this goes), the host tables they are uploaded from (kept
 * until the queue has read them), and the events of the XC queue's work.
 */
class DevicePartitionWeights : public QM::PartitionWeightsInFlight {
public:
    DevicePartitionWeights(ComputeContext& cc, ComputeProgram program, const shared_ptr<DeviceArrayPool>& pool, ComputeQueue queue,
                           const vector<QM::QMAtom>& atoms, const QM::GridSettings& settings, const vector<QM::RadialGrid>& radial,
                           const vector<vector<int>>& angularSizes)
        : cc(cc), work(cc, std::move(queue)) {
        ContextSelector selector(cc);
        const int numAtoms = atoms.size(), numRadial = settings.radialPoints;
        // Per radial shell: its radius, where its Lebedev grid starts among the distinct grids uploaded, its size and
        // where its weights go.
        map<int, int> gridStart;  // Lebedev size -> first row in angularXYZ
        int maxAngular = 1;
        for (int a = 0; a < numAtoms; a++)
            for (int i = 0; i < numRadial; i++) {
                const int size = angularSizes[a][i];
                if (gridStart.find(size) == gridStart.end()) {
                    gridStart[size] = angularXYZ.size()/3;
                    for (const auto& u : QM::lebedevGrid(size).xyz)
                        angularXYZ.insert(angularXYZ.end(), u.begin(), u.end());
                }
                shellRadius.push_back(radial[a].r[i]);
                shellAngularStart.push_back(gridStart[size]);
                shellAngularCount.push_back(size);
                shellFirstPoint.push_back(numPoints);
                numPoints += size;
                maxAngular = max(maxAngular, size);
            }
        // On the XC queue (after what the default queue held: nothing, at the start of a geometry's set-up), beside the
        // point charges' integrals and the fitting tensor that the default queue gets next.
        SideQueueWork::Scope onQueue(work, true);
        const bool blocking = !onQueue.nonBlocking();
        pairs.upload(pool, cc, atoms, settings, blocking);
        radiusArray.upload(pool, cc, shellRadius, "qmGridShellRadius", blocking);
        startArray.upload(pool, cc, shellAngularStart, "qmGridShellAngularStart", blocking);
        countArray.upload(pool, cc, shellAngularCount, "qmGridShellAngularCount", blocking);
        firstArray.upload(pool, cc, shellFirstPoint, "qmGridShellFirstPoint", blocking);
        angularArray.upload(pool, cc, angularXYZ, "qmGridAngular", blocking);
        weightArray.take(pool, cc, "qmGridPartitionWeights", max(numPoints, 1));
        kernel = program->createKernel("partitionWeights");
        for (int value : {numAtoms, numRadial, maxAngular, settings.partition == QM::AtomicPartition::StratmannScuseriaFrisch ? 1 : 0})
            kernel->addArg(value);
        kernel->addArg(QM::ssfHalfWidth());
        kernel->addArg(QM::partitionRelativeCellCutoff());
        for (ComputeArray* a : {radiusArray.get(), startArray.get(), countArray.get(), firstArray.get(), angularArray.get(),
                                pairs.atoms.get(), pairs.invR.get(), pairs.sizeAdjustment.get(), pairs.nearest.get(),
                                pairs.order.get(), weightArray.get()})
            kernel->addArg(*a);
        executeGridStride(kernel, numAtoms*numRadial*maxAngular);
    }
    ~DevicePartitionWeights() override {
        ContextSelector selector(cc);
        work.wait();  // before the kernel goes (and, with work's own wait, before the arrays go back to the pool)
        kernel = ComputeKernel();
    }
    vector<double> finish() override {
        ContextSelector selector(cc);
        work.wait();  // the download goes through the default queue, which does not know of the XC queue's work
        return weightArray.downloadFirst<double>(numPoints);
    }
private:
    ComputeContext& cc;
    int numPoints = 0;
    vector<double> shellRadius, angularXYZ;
    vector<int> shellAngularStart, shellAngularCount, shellFirstPoint;
    PartitionArrays pairs;
    PooledArray radiusArray, startArray, countArray, firstArray, angularArray, weightArray;
    ComputeKernel kernel;
    SideQueueWork work;  // last: it waits before the arrays go back to the pool
};
} // namespace

unique_ptr<QM::PartitionWeightsInFlight> CommonXCBackendFactory::startWeights(const vector<QM::QMAtom>& atoms,
                                                                              const QM::GridSettings& settings,
                                                                              const vector<QM::RadialGrid>& radial,
                                                                              const vector<vector<int>>& angularSizes) const {
    return unique_ptr<QM::PartitionWeightsInFlight>(
        new DevicePartitionWeights(cc, programFor(0), arrayPool, ownQueue(), atoms, settings, radial, angularSizes));
}
