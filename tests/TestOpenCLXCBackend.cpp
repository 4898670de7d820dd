/* The device XC back end (CommonXCBackend, the Compute API kernels of kernels/qmXC.cc) on OpenMM's
 * OpenCL platform against the host back end, through the QM engine itself: the same SCF energy and the
 * same analytic gradient (grid response included), with the basis values kept on the device, recomputed,
 * and recomputed in many small chunks (a tiny memory budget), for spherical and cartesian d and f shells,
 * Becke's and SSF's partitions (their weights and weight derivatives run on the device too).
 * Bounds: 1e-9 Eh and 1e-8 Eh/bohr (the same arithmetic in another summation order). */
#include "PluginLoading.h"
#include "CommonXCBackend.h"
#include "OpenCLQMMMKernelFactory.h"
#include "openmmdft/internal/ContextImplAccess.h"
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Grid.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include "openmm/Context.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include "openmm/opencl/OpenCLContext.h"
#include "openmm/opencl/OpenCLPlatform.h"
#include <gtest/gtest.h>
#include <memory>
#include <string>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace OpenMMDFT::QM;

namespace {

struct Case {
    std::string basis;
    BasisFunctionStorage storage;
    double budgetMiB;
    AngularConvention angular;
    AtomicPartition partition = AtomicPartition::Becke;
    AtomicSizeAdjustment sizeAdjustment = AtomicSizeAdjustment::None;
};

void PrintTo(const Case& c, std::ostream* os) {
    *os << c.basis << (c.storage == BasisFunctionStorage::Precompute ? " precompute " : " recompute ") << c.budgetMiB << " MiB"
        << (c.angular == AngularConvention::Cartesian ? " cartesian" : "")
        << (c.partition == AtomicPartition::StratmannScuseriaFrisch ? " SSF" : "")
        << (c.sizeAdjustment != AtomicSizeAdjustment::None ? " size-adjusted" : "");
}

std::vector<QMAtom> methanol() {
    const double a = 1.0 / 0.529177210903;
    return {{6, {-0.047 * a, 0.663 * a, 0}}, {8, {-0.047 * a, -0.758 * a, 0}}, {1, {-1.035 * a, 1.086 * a, 0}},
            {1, {0.504 * a, 1.004 * a, 0.89 * a}}, {1, {0.504 * a, 1.004 * a, -0.89 * a}}, {1, {0.88 * a, -1.013 * a, 0}}};
}

} // namespace

class OpenCLXCBackend : public ::testing::TestWithParam<Case> {};

TEST_P(OpenCLXCBackend, MatchesTheHostThroughTheEngine) {
    QMMMTest::loadPlatformOnce("libOpenMMOpenCL.so", registerQMMMOpenCLKernelFactories);
    std::unique_ptr<Context> context;
    System system;
    system.addParticle(1.0);
    VerletIntegrator integrator(0.001);
    try {
        context.reset(new Context(system, integrator, Platform::getPlatformByName("OpenCL"), {{"Precision", "double"}}));
    }
    catch (const std::exception& e) {
        GTEST_SKIP() << "no OpenCL device with double precision: " << e.what();
    }
    OpenCLPlatform::PlatformData* data = static_cast<OpenCLPlatform::PlatformData*>(ContextImplAccess().of(*context).getPlatformData());
    ComputeContext& cc = *data->contexts[0];
    ASSERT_TRUE(CommonXCBackendFactory::supported(cc));
    QMSettings s;
    s.basisSet = GetParam().basis;
    s.angular = GetParam().angular;
    s.grid.radialPoints = 30;
    s.grid.angularPoints = 110;
    s.storage = GetParam().storage;
    s.grid.maxStoredBasisMiB = GetParam().budgetMiB;
    s.convergence = 1e-9;
    s.grid.partition = GetParam().partition;
    s.grid.sizeAdjustment = GetParam().sizeAdjustment;
    const std::vector<PointCharge> mm = {{{5.0, 0.5, 0.0}, -0.8}, {{-4.0, 3.0, 1.0}, 0.4}};
    KohnShamLDA host(s), device(s, std::make_shared<CommonXCBackendFactory>(cc));
    const QMResult h = host.compute(methanol(), 0, mm), d = device.compute(methanol(), 0, mm);
    EXPECT_EQ(d.xcBackend, "device");
    EXPECT_NEAR(d.total, h.total, 1e-9);
    EXPECT_NEAR(d.xc, h.xc, 1e-9);
    EXPECT_NEAR(d.gridElectrons, h.gridElectrons, 1e-9);
    const QMGradient gh = host.gradient(h), gd = device.gradient(d);
    EXPECT_LT((gd.atoms - gh.atoms).cwiseAbs().maxCoeff(), 1e-8);
    EXPECT_LT((gd.mm - gh.mm).cwiseAbs().maxCoeff(), 1e-8);
    const QMGradient fh = host.gradientFixedGrid(h), fd = device.gradientFixedGrid(d);
    EXPECT_LT((fd.atoms - fh.atoms).cwiseAbs().maxCoeff(), 1e-8);
    const bool kept = GetParam().storage == BasisFunctionStorage::Precompute && GetParam().budgetMiB > 1;
    EXPECT_EQ(d.storedBasisBytes > 0, kept);

    // The grid's partition weights computed on the device equal the host's point by point (the same arithmetic;
    // 1e-14 relative), so the grids hold the same points in the same batches.
    CommonXCBackendFactory factory(cc);
    const BasisSet basis(loadBasisDefinition(s.basisSet, QMSettings().dataDirectory), methanol(), true);
    const MolecularGrid onHost(methanol(), basis, s.grid, 2), onDevice(methanol(), basis, s.grid, 2, factory.partitionWeights());
    ASSERT_EQ(onHost.numPoints(), onDevice.numPoints());
    ASSERT_EQ(onHost.batches().size(), onDevice.batches().size());
    double worst = 0;
    for (size_t b = 0; b < onHost.batches().size(); b++) {
        ASSERT_EQ(onHost.batches()[b].size(), onDevice.batches()[b].size());
        for (size_t p = 0; p < onHost.batches()[b].size(); p++)
            worst = std::max(worst, std::abs(onDevice.batches()[b].w[p] / onHost.batches()[b].w[p] - 1));
    }
    EXPECT_LT(worst, 1e-14);
}

INSTANTIATE_TEST_SUITE_P(Cases, OpenCLXCBackend,
                         ::testing::Values(Case{"6-31G*", BasisFunctionStorage::Precompute, 2048, AngularConvention::BasisDefault},
                                           Case{"6-31G*", BasisFunctionStorage::Recompute, 2048, AngularConvention::BasisDefault},
                                           Case{"6-31G*", BasisFunctionStorage::Precompute, 0.05, AngularConvention::BasisDefault},
                                           Case{"def2-TZVP", BasisFunctionStorage::Recompute, 0.2, AngularConvention::Spherical},
                                           Case{"DZVP", BasisFunctionStorage::Precompute, 2048, AngularConvention::Cartesian},
                                           // The partition-weight derivatives with SSF's cells and with Becke's size adjustment.
                                           Case{"6-31G*", BasisFunctionStorage::Precompute, 2048, AngularConvention::BasisDefault,
                                                AtomicPartition::StratmannScuseriaFrisch},
                                           Case{"6-31G*", BasisFunctionStorage::Precompute, 2048, AngularConvention::BasisDefault,
                                                AtomicPartition::Becke, AtomicSizeAdjustment::TreutlerRadii}));
