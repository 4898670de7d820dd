#include "EwaldLongRange.h"
#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include "openmm/OpenMMException.h"
#include <thread>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

/** Runs body(first, end, chunk) over [0, n) in contiguous chunks on up to hardware_concurrency threads. */
static int forChunks(size_t n, const function<void(size_t, size_t, int)>& body) {
    const int chunks = (int) max<size_t>(1, min<size_t>(max(1u, thread::hardware_concurrency()), n / 256));
    vector<thread> workers;
    for (int c = 1; c < chunks; c++)
        workers.emplace_back(body, n * c / chunks, n * (c + 1) / chunks, c);
    body(0, n / chunks, 0);
    for (thread& t : workers)
        t.join();
    return chunks;
}

static Vec3 cross(const Vec3& a, const Vec3& b) {
    return Vec3(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]);
}

EwaldLongRange::EwaldLongRange(const Vec3* boxVectors, double tolerance) {
    for (int d = 0; d < 3; d++)
        box[d] = boxVectors[d];
    // Real space reaches half the smallest box width (the minimum image is then the only one within it): the
    // QM atoms are few, so real-space pairs are cheap, and the smaller alpha this allows cuts the wave vectors,
    // whose count times the MM atoms is the cost, by (width / 2 cutoff)^3 against NonbondedForce's choice.
    cutoff = 0.5 * min(box[0][0], min(box[1][1], box[2][2]));
    volume = box[0].dot(cross(box[1], box[2]));
    reciprocal[0] = cross(box[1], box[2]) / volume;
    reciprocal[1] = cross(box[2], box[0]) / volume;
    reciprocal[2] = cross(box[0], box[1]) / volume;
    // alpha as NonbondedForce chooses it for that cutoff (erfc(alpha rc) ~ tolerance); the wave vectors whose
    // Gaussian factor exp(-k^2 / 4 alpha^2) is above the tolerance.
    alpha_ = sqrt(-log(2 * tolerance)) / cutoff;
    const double kCut = 2 * alpha_ * sqrt(-log(tolerance));
    // The reciprocal sum's cost is its number of wave vectors times the charges; a box or tolerance that asks for
    // more than MAX_WAVE_VECTORS (about (2 m + 1)^3 / 2 with m per direction) is refused rather than allocated.
    double extent[3], count = 0.5;
    for (int d = 0; d < 3; d++) {
        extent[d] = ceil(kCut * sqrt(box[d].dot(box[d])) / (2 * M_PI));
        count *= 2 * extent[d] + 1;
    }
    if (!(count <= MAX_WAVE_VECTORS)) {
        std::stringstream msg;
        msg << "QMMMForce: the Ewald sum of the QM region would need about " << count << " wave vectors (more than "
            << MAX_WAVE_VECTORS << ") for the error tolerance " << tolerance << " and the periodic box (" << box[0] << ", "
            << box[1] << ", " << box[2] << " bohr); raise the tolerance or check the box";
        throw OpenMM::OpenMMException(msg.str());
    }
    for (int d = 0; d < 3; d++)
        maxIndex[d] = (int) extent[d];
    for (int n0 = 0; n0 <= maxIndex[0]; n0++)
        for (int n1 = (n0 == 0 ? 0 : -maxIndex[1]); n1 <= maxIndex[1]; n1++)
            for (int n2 = (n0 == 0 && n1 == 0 ? 1 : -maxIndex[2]); n2 <= maxIndex[2]; n2++) {
                const Vec3 k = (reciprocal[0] * n0 + reciprocal[1] * n1 + reciprocal[2] * n2) * (2 * M_PI);
                const double k2 = k.dot(k);
                if (k2 > kCut * kCut)
                    continue;
                waves.push_back({{n0, n1, n2}, k, 2 * (4 * M_PI / volume) * exp(-k2 / (4 * alpha_ * alpha_)) / k2});
            }
    // Real space is force-shifted to zero at the cutoff (value and slope), so that a charge crossing it changes
    // neither energy nor force abruptly (the shift is of the order of the tolerance, like what truncation leaves out).
    realShift = erfc(alpha_ * cutoff) / cutoff;
    realSlope = realSpaceSlope(cutoff);
}

double EwaldLongRange::realSpace(double r) const {
    return erfc(alpha_ * r) / r - realShift - (r - cutoff) * realSlope;
}

vector<Vec3> EwaldLongRange::periodicImages(const Vec3& d) const {
    // The images of a QM pair other than itself within the real-space cutoff (the QM region is whole, so its pairs
    // are short: the neighbouring cells hold every image closer than half the width).
    vector<Vec3> images;
    for (int i = -1; i <= 1; i++)
        for (int j = -1; j <= 1; j++)
            for (int k = -1; k <= 1; k++) {
                if (i == 0 && j == 0 && k == 0)
                    continue;
                const Vec3 image = d + box[0] * i + box[1] * j + box[2] * k;
                if (image.dot(image) < cutoff * cutoff)
                    images.push_back(image);
            }
    return images;
}

double EwaldLongRange::realSpaceSlope(double r) const {
    return -erfc(alpha_ * r) / (r * r) - 2 / sqrt(M_PI) * alpha_ * exp(-alpha_ * alpha_ * r * r) / r;
}

Vec3 EwaldLongRange::minimumImage(Vec3 d) const {
    d -= box[2] * floor(d[2] / box[2][2] + 0.5);
    d -= box[1] * floor(d[1] / box[1][1] + 0.5);
    d -= box[0] * floor(d[0] / box[0][0] + 0.5);
    return d;
}

void EwaldLongRange::phases(const Vec3& r, vector<complex<double> >& out) const {
    vector<complex<double> > table[3];
    for (int d = 0; d < 3; d++) {
        const int m = maxIndex[d];
        table[d].resize(2 * m + 1);
        const double f = 2 * M_PI * r.dot(reciprocal[d]);
        for (int n = -m; n <= m; n++)
            table[d][n + m] = polar(1.0, n * f);
    }
    out.resize(waves.size());
    for (size_t w = 0; w < waves.size(); w++) {
        const int* n = waves[w].n;
        out[w] = table[0][n[0] + maxIndex[0]] * table[1][n[1] + maxIndex[1]] * table[2][n[2] + maxIndex[2]];
    }
}

QM::MullikenElectrostatics EwaldLongRange::terms(const vector<Vec3>& qmPositions, const vector<Charge>& allCharges,
                                                 const vector<Charge>& explicitList) {
    qm = qmPositions;
    all = allCharges;
    explicitCharges = explicitList;
    const int na = qm.size();
    // The structure factor, the costly part (charges x wave vectors): partial sums per thread, added in order.
    const int maxChunks = max(1u, thread::hardware_concurrency());
    vector<vector<complex<double> > > partial(maxChunks, vector<complex<double> >(waves.size(), 0.0));
    const int chunks = forChunks(all.size(), [&](size_t first, size_t end, int chunk) {
        vector<complex<double> > e;
        for (size_t j = first; j < end; j++) {
            phases(all[j].position, e);
            for (size_t w = 0; w < waves.size(); w++)
                partial[chunk][w] += all[j].charge * e[w];
        }
    });
    structureFactor.assign(waves.size(), 0.0);
    for (int c = 0; c < chunks; c++)
        for (size_t w = 0; w < waves.size(); w++)
            structureFactor[w] += partial[c][w];
    double total = 0;
    for (const Charge& c : all)
        total += c.charge;
    const double background = -M_PI / (alpha_ * alpha_ * volume);
    QM::MullikenElectrostatics out;
    out.potential = Eigen::VectorXd::Constant(na, background * total);
    out.kernel = Eigen::MatrixXd::Constant(na, na, background);
    qmPhases.assign(na, vector<complex<double> >());
    for (int a = 0; a < na; a++) {
        phases(qm[a], qmPhases[a]);
        double phi = 0;
        for (const Charge& c : all) {
            const Vec3 d = minimumImage(qm[a] - c.position);
            const double r = sqrt(d.dot(d));
            if (r < cutoff && r > 0)
                phi += c.charge * realSpace(r);
        }
        for (size_t w = 0; w < waves.size(); w++)
            phi += waves[w].coefficient * real(qmPhases[a][w] * conj(structureFactor[w]));
        for (const Charge& c : explicitCharges) {
            const Vec3 d = qm[a] - c.position;
            phi -= c.charge / sqrt(d.dot(d));
        }
        out.potential[a] += phi;
    }
    for (int a = 0; a < na; a++)
        for (int b = 0; b <= a; b++) {
            double k = 0;
            for (size_t w = 0; w < waves.size(); w++)
                k += waves[w].coefficient * real(qmPhases[a][w] * conj(qmPhases[b][w]));
            const Vec3 d = qm[a] - qm[b];
            if (a == b)
                k -= 2 * alpha_ / sqrt(M_PI);  // the charge's own Gaussian screening, without the 1/r self term
            else {
                const double r = sqrt(d.dot(d));
                k -= erf(alpha_ * r) / r;  // the pair itself is in the QM energy already
            }
            for (const Vec3& image : periodicImages(d))
                k += realSpace(sqrt(image.dot(image)));
            out.kernel(a, b) += k;
            if (a != b)
                out.kernel(b, a) += k;
        }
    return out;
}

void EwaldLongRange::gradient(const Eigen::VectorXd& q, vector<Vec3>& qmGradient, vector<Vec3>& allGradient,
                              vector<Vec3>& explicitGradient, vector<double>& explicitPotential) const {
    const int na = qm.size();
    const double twoOverRootPi = 2 / sqrt(M_PI);
    vector<complex<double> > qmCharges(waves.size(), 0.0);  // T_k = sum_A q_A exp(i k.R_A)
    for (int a = 0; a < na; a++) {
        for (size_t w = 0; w < waves.size(); w++)
            qmCharges[w] += q[a] * qmPhases[a][w];
    }
    explicitPotential.assign(explicitCharges.size(), 0.0);
    for (int a = 0; a < na; a++) {
        Vec3 g;
        // Real space, every periodic charge within the real-space cutoff.
        for (size_t j = 0; j < all.size(); j++) {
            const Vec3 d = minimumImage(qm[a] - all[j].position);
            const double r = sqrt(d.dot(d));
            if (r >= cutoff || r == 0)
                continue;
            const double dpsi = realSpaceSlope(r) - realSlope;
            const Vec3 f = d * (q[a] * all[j].charge * dpsi / r);
            g += f;
            allGradient[j] -= f;
        }
        // Reciprocal space: the periodic charges and the QM charges' images.
        for (size_t w = 0; w < waves.size(); w++)
            g -= waves[w].k * (q[a] * waves[w].coefficient * imag(qmPhases[a][w] * conj(structureFactor[w] + qmCharges[w])));
        // The explicit charges, taken out.
        for (size_t c = 0; c < explicitCharges.size(); c++) {
            const Vec3 d = qm[a] - explicitCharges[c].position;
            const double r = sqrt(d.dot(d));
            const Vec3 f = d * (q[a] * explicitCharges[c].charge / (r * r * r));
            g += f;
            explicitGradient[c] -= f;
            explicitPotential[c] -= q[a] / r;
        }
        // The QM pairs' screening term -erf(alpha r)/r, and their images in real space.
        for (int b = 0; b < na; b++) {
            const Vec3 d = qm[a] - qm[b];
            if (b != a) {
                const double r = sqrt(d.dot(d));
                const double dk = erf(alpha_ * r) / (r * r) - twoOverRootPi * alpha_ * exp(-alpha_ * alpha_ * r * r) / r;
                g += d * (q[a] * q[b] * dk / r);
            }
            for (const Vec3& image : periodicImages(d)) {
                const double r = sqrt(image.dot(image));
                g += image * (q[a] * q[b] * (realSpaceSlope(r) - realSlope) / r);
            }
        }
        qmGradient[a] += g;
    }
    forChunks(all.size(), [&](size_t first, size_t end, int) {
        vector<complex<double> > phase;
        for (size_t j = first; j < end; j++) {
            phases(all[j].position, phase);
            Vec3 g;
            for (size_t w = 0; w < waves.size(); w++)
                g += waves[w].k * (waves[w].coefficient * imag(qmCharges[w] * conj(phase[w])));
            allGradient[j] += g * all[j].charge;
        }
    });
}
