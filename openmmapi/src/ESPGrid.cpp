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

// Far beyond any QM region (a 2 nm region at the default spacing has under a million lattice
// points): more means coordinates in the wrong unit or a vanishing spacing, and a count that
// would overflow an int, or a loop that would not end in practice.
const double MAX_POINTS = 1e8;

/** One finite position per atom: a NaN would make the lattice bounds NaN and the grid silently empty. */
void checkInput(const vector<Vec3>& positions, const vector<int>& atomicNumbers) {
    if (positions.empty())
        throw OpenMMException("ESP grid: no atoms");
    if (positions.size() != atomicNumbers.size()) {
        stringstream msg;
        msg << "ESP grid: " << positions.size() << " positions but " << atomicNumbers.size() << " atomic numbers";
        throw OpenMMException(msg.str());
    }
    for (size_t a = 0; a < positions.size(); a++)
        for (int d = 0; d < 3; d++)
            if (!isfinite(positions[a][d])) {
                stringstream msg;
                msg << "ESP grid: the position of atom " << a << " is not finite (" << positions[a][0] << ", "
                    << positions[a][1] << ", " << positions[a][2] << ")";
                throw OpenMMException(msg.str());
            }
}

void checkPositive(double value, const char* what) {
    if (!(value > 0) || !isfinite(value)) {
        stringstream msg;
        msg << "ESP grid: the " << what << " must be a finite positive number, not " << value;
        throw OpenMMException(msg.str());
    }
}

/** Radii of all atoms, the message naming the atom whose element has none. */
vector<double> atomRadii(const vector<int>& atomicNumbers, double (*radius)(int)) {
    vector<double> r(atomicNumbers.size());
    for (size_t a = 0; a < atomicNumbers.size(); a++) {
        try {
            r[a] = radius(atomicNumbers[a]);
        }
        catch (const OpenMMException& e) {
            stringstream msg;
            msg << e.what() << " (atom " << a << ")";
            throw OpenMMException(msg.str());
        }
    }
    return r;
}

void checkPointCount(double count, const char* method) {
    if (!(count <= MAX_POINTS)) {
        stringstream msg;
        msg << "ESP grid: the " << method << " grid would have " << count << " points (at most " << MAX_POINTS
            << "); are the positions in nm and the grid parameters as meant?";
        throw OpenMMException(msg.str());
    }
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
    checkPositive(spacing, "CHELPG spacing");
    checkPositive(margin, "CHELPG margin");
    vector<double> r2 = atomRadii(atomicNumbers, chelpgRadius);
    for (double& r : r2)
        r *= r;
    Vec3 lo = positions[0], hi = positions[0];
    for (const Vec3& p : positions)
        for (int d = 0; d < 3; d++) {
            lo[d] = min(lo[d], p[d]);
            hi[d] = max(hi[d], p[d]);
        }
    // Centre the lattice on the box, so that the grid does not depend on which corner it starts from.
    double steps[3];
    for (int d = 0; d < 3; d++)
        steps[d] = floor((hi[d] - lo[d] + 2 * margin) / spacing + 1e-9) + 1;
    checkPointCount(steps[0] * steps[1] * steps[2], "CHELPG");
    int n[3];
    Vec3 start;
    for (int d = 0; d < 3; d++) {
        n[d] = (int) steps[d];
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
    if (scales.empty())
        throw OpenMMException("ESP grid: Merz-Kollman needs at least one shell");
    checkPositive(density, "Merz-Kollman point density");
    for (double scale : scales)
        checkPositive(scale, "Merz-Kollman shell scale");
    const vector<double> radii = atomRadii(atomicNumbers, merzKollmanRadius);
    double total = 0;
    for (double scale : scales)
        for (double r : radii)
            total += max(1.0, round(4 * M_PI * scale * r * scale * r * density));
    checkPointCount(total, "Merz-Kollman");
    const double goldenAngle = M_PI * (3.0 - sqrt(5.0));
    vector<Vec3> points;
    for (double scale : scales) {
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
