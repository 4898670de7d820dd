// The XC program's source and defines (XCProgram.h).
#include "XCProgram.h"
#include "CommonQMMMKernelSources.h"
#include "openmmdft/qm/EnvironmentSwitch.h"
#include "openmm/OpenMMException.h"
#include <sstream>

using namespace std;

string OpenMMDFT::xcProgramSource() {
    return string(CommonQMMMKernelSources::shellValues) + CommonQMMMKernelSources::qmWorkCounter + CommonQMMMKernelSources::qmXC +
           CommonQMMMKernelSources::qmPairDensity;
}

map<string, string> OpenMMDFT::xcProgramDefines(int parametrization, const XCPartitionSizes& partition) {
    if (parametrization != 0 && parametrization != 1)
        throw OpenMM::OpenMMException("QM: unknown VWN parametrization for the XC program (internal error)");
    if (partition.keptProducts < 1 || partition.cellBlock < 1)
        throw OpenMM::OpenMMException("QM: the partition-weight derivatives' kept products and cell block must be positive (internal error)");
    // VWN's paramagnetic fits: A, x0, b, c of VWN5 and of the RPA parametrization.
    const double parameters[2][4] = {{0.0310907, -0.10498, 3.72744, 12.9352}, {0.0310907, -0.409286, 13.0720, 42.7198}};
    // Double literals in every precision (ComputeContext::doubleToString writes floats in single and mixed).
    auto literal = [](double value) {
        stringstream s;
        s.precision(17);
        s << scientific << value;
        return s.str();
    };
    map<string, string> defines;
    defines["VWN_A"] = literal(parameters[parametrization][0]);
    defines["VWN_X0"] = literal(parameters[parametrization][1]);
    defines["VWN_B"] = literal(parameters[parametrization][2]);
    defines["VWN_C"] = literal(parameters[parametrization][3]);
    defines["XC_BLOCK"] = to_string(XC_BLOCK_POINTS);
    defines["XC_TILE"] = to_string(XC_TILE_FUNCTIONS);
    defines["XC_GROUP"] = to_string(XC_TILED_GROUP);
    defines["BATCH_SUM_GROUP"] = to_string(XC_BATCH_SUM_GROUP);
    defines["FUNCTION_GRADIENT_SLICES"] = to_string(XC_FUNCTION_GRADIENT_SLICES);
    defines["PARTITION_MAX_ATOMS"] = to_string(XC_PARTITION_MAX_ATOMS);
    defines["PARTITION_GROUP"] = to_string(XC_PARTITION_GROUP);
    defines["PARTITION_KEPT_PRODUCTS"] = to_string(partition.keptProducts);
    defines["PARTITION_CELL_BLOCK"] = to_string(partition.cellBlock);
    defines["DF_GROUP"] = to_string(XC_DENSITY_FITTING_GROUP);
    // Temporary (EnvironmentSwitch.h), for a lease's A/B: the partition-weight derivatives' kernel bounded on CUDA to
    // this many work groups per multiprocessor (4: 128 registers, 3: 168), against nvcc's own choice (226 registers,
    // 2 groups; ptxas spills 644 and 340 bytes under the bounds).
    const int partitionBlocks = OpenMMDFT::QM::environmentCount("OPENMMDFT_PARTITION_BLOCKS_PER_SM", 0);
    if (partitionBlocks > 0)
        defines["PARTITION_BLOCKS_PER_SM"] = to_string(partitionBlocks);
    return defines;
}
