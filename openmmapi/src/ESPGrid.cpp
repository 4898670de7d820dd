/* ESP sampling grids (CHELPG, Merz-Kollman); see ESPGrid.h for the definitions and radii. */
#include "openmmdft/internal/ESPGrid.h"
#include "openmmdft/internal/AtomicUnits.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <cmath>
#include <sstream>

using namespace OpenMM;
using namespace std;

namespace OpenMMDFT {

namespace {

// Angstrom, indexed by atomic number; 0 = no radius.
const double CHELPG_RADII[] = {0, 1.45, 1.45, 1.5, 1.5, 1.5, 1.5, 1.7, 1.7, 1.7, 1.7,
                               2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0};
const double MK_RADII[] = {0, 1.20, 1.20, 1.37, 1.45, 1.45, 1.50, 1.50, 1.40, 1.35, 1.30,
                           1.57, 1.36, 1.24, 1.17, 1.80, 1.75, 1.70};

double radius(const double* table, int size, int z, const char* method) {
    if (z < 1 || z >= size || table[z] == 0) {
        stringstream msg;
        msg << "ESP grid: " << method << " has no radius for atomic number " << z;
        throw OpenMMException(msg.str());
    }
    return table[z] * AtomicUnits::NM_PER_ANGSTROM;
}

void checkInput(const vector<Vec3>& positions, const vector<int>& atomicNumbers) {
    if (positions.empty() || positions.size() != atomicNumbers.size())
        throw OpenMMException("ESP grid: need one atomic number per position, and at least one atom");
}

} // namespace

double chelpgRadius(int z) {
    return radius(CHELPG_RADII, sizeof(CHELPG_RADII) / sizeof(double), z, "CHELPG");
}

double merzKollmanRadius(int z) {
    return radius(MK_RADII, sizeof(MK_RADII) / sizeof(double), z, "Merz-Kollman");
}

vector<Vec3> chelpgGrid(const vector<Vec3>& positions, const vector<int>& atomicNumbers, double spacing, double margin) {
    checkInput(positions, atomicNumbers);
    if (!(spacing > 0) || !(margin > 0))
        throw OpenMMException("ESP grid: CHELPG spacing and margin must be positive");
    vector<double> r2(positions.size());
    for (size_t a = 0; a < positions.size(); a++)
        r2[a] = pow(chelpgRadius(atomicNumbers[a]), 2);
    Vec3 lo = positions[0], hi = positions[0];
    for (const Vec3& p : positions)
        for (int d = 0; d < 3; d++) {
            lo[d] = min(lo[d], p[d]);
            hi[d] = max(hi[d], p[d]);
        }
    // Centre the lattice on the box, so that the grid does not depend on which corner it starts from.
    int n[3];
    Vec3 start;
    for (int d = 0; d < 3; d++) {
        n[d] = (int) floor((hi[d] - lo[d] + 2 * margin) / spacing + 1e-9) + 1;
        start[d] = 0.5 * (lo[d] + hi[d]) - 0.5 * (n[d] - 1) * spacing;
    }
    double margin2 = margin * margin;
    vector<Vec3> points;
    for (int i = 0; i < n[0]; i++)
        for (int j = 0; j < n[1]; j++)
            for (int k = 0; k < n[2]; k++) {
                Vec3 p = start + Vec3(i, j, k) * spacing;
                bool inside = false, near = false;
                for (size_t a = 0; a < positions.size() && !inside; a++) {
                    Vec3 d = p - positions[a];
                    double d2 = d.dot(d);
                    inside = (d2 < r2[a]);
                    near = near || (d2 <= margin2);
                }
                if (near && !inside)
                    points.push_back(p);
            }
    return points;
}

vector<Vec3> merzKollmanGrid(const vector<Vec3>& positions, const vector<int>& atomicNumbers, const vector<double>& scales,
                             double density) {
    checkInput(positions, atomicNumbers);
    if (!(density > 0) || scales.empty())
        throw OpenMMException("ESP grid: Merz-Kollman needs at least one shell and a positive point density");
    vector<double> radii(positions.size());
    for (size_t a = 0; a < positions.size(); a++)
        radii[a] = merzKollmanRadius(atomicNumbers[a]);
    const double goldenAngle = M_PI * (3.0 - sqrt(5.0));
    vector<Vec3> points;
    for (double scale : scales) {
        if (!(scale > 0))
            throw OpenMMException("ESP grid: Merz-Kollman shell scales must be positive");
        for (size_t a = 0; a < positions.size(); a++) {
            double R = scale * radii[a];
            int count = max(1, (int) lround(4 * M_PI * R * R * density));
            for (int i = 0; i < count; i++) {
                // Fibonacci spiral: equal-area bands in z, golden-angle steps in phi (near-uniform, deterministic).
                double z = 1.0 - (2.0 * i + 1.0) / count;
                double rxy = sqrt(max(0.0, 1.0 - z * z)), phi = i * goldenAngle;
                Vec3 p = positions[a] + Vec3(rxy * cos(phi), rxy * sin(phi), z) * R;
                bool inside = false;
                for (size_t b = 0; b < positions.size() && !inside; b++) {
                    Vec3 d = p - positions[b];
                    inside = (b != a && d.dot(d) < pow(scale * radii[b], 2));
                }
                if (!inside)
                    points.push_back(p);
            }
        }
    }
    return points;
}

} // namespace OpenMMDFT
