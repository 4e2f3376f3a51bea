#include "nep/carve.hpp"

#include <algorithm>
#include <cmath>

#include "nep/error.hpp"

namespace nep {
namespace {
// inverse of the row matrix h (rows a, b, c): s = d h^-1 gives fractional coordinates
void invert3(const double h[9], double inv[9]) {
  const double det = h[0] * (h[4] * h[8] - h[5] * h[7]) - h[1] * (h[3] * h[8] - h[5] * h[6]) +
                     h[2] * (h[3] * h[7] - h[4] * h[6]);
  inv[0] = (h[4] * h[8] - h[5] * h[7]) / det;
  inv[1] = (h[2] * h[7] - h[1] * h[8]) / det;
  inv[2] = (h[1] * h[5] - h[2] * h[4]) / det;
  inv[3] = (h[5] * h[6] - h[3] * h[8]) / det;
  inv[4] = (h[0] * h[8] - h[2] * h[6]) / det;
  inv[5] = (h[2] * h[3] - h[0] * h[5]) / det;
  inv[6] = (h[3] * h[7] - h[4] * h[6]) / det;
  inv[7] = (h[1] * h[6] - h[0] * h[7]) / det;
  inv[8] = (h[0] * h[4] - h[1] * h[3]) / det;
}
}  // namespace

double carve_outer_radius(double core, double cutoff) { return core + 2.0 * cutoff; }

MinimumImage::MinimumImage(const double cell[9], const bool pbc[3]) {
  std::copy(cell, cell + 9, h_);
  std::copy(pbc, pbc + 3, pbc_);
  if (pbc[0] || pbc[1] || pbc[2]) invert3(cell, inv_);
}

void MinimumImage::apply(double d[3]) const {
  if (!pbc_[0] && !pbc_[1] && !pbc_[2]) return;
  double s[3];
  for (int k = 0; k < 3; ++k) s[k] = d[0] * inv_[k] + d[1] * inv_[3 + k] + d[2] * inv_[6 + k];
  for (int k = 0; k < 3; ++k)
    if (pbc_[k]) s[k] -= std::round(s[k]);
  for (int c = 0; c < 3; ++c) d[c] = s[0] * h_[c] + s[1] * h_[3 + c] + s[2] * h_[6 + c];
}

void minimum_image(const double cell[9], const bool pbc[3], double d[3]) { MinimumImage(cell, pbc).apply(d); }

bool carve_fits(const double cell[9], const bool pbc[3], double radius) {
  const double* a = cell;
  const double* b = cell + 3;
  const double* c = cell + 6;
  auto cross = [](const double* u, const double* v, double* w) {
    w[0] = u[1] * v[2] - u[2] * v[1];
    w[1] = u[2] * v[0] - u[0] * v[2];
    w[2] = u[0] * v[1] - u[1] * v[0];
  };
  double bc[3], ca[3], ab[3];
  cross(b, c, bc);
  cross(c, a, ca);
  cross(a, b, ab);
  const double vol = std::fabs(a[0] * bc[0] + a[1] * bc[1] + a[2] * bc[2]);
  const double* normal[3] = {bc, ca, ab};
  for (int k = 0; k < 3; ++k) {
    if (!pbc[k]) continue;
    const double area = std::sqrt(normal[k][0] * normal[k][0] + normal[k][1] * normal[k][1] + normal[k][2] * normal[k][2]);
    if (!(2.0 * radius < vol / area)) return false;
  }
  return true;
}

TrainingFrame carved_frame(std::vector<CarvedAtom> atoms, double core, double outer) {
  std::sort(atoms.begin(), atoms.end(), [](const CarvedAtom& x, const CarvedAtom& y) { return x.key < y.key; });
  TrainingFrame fr;
  const size_t n = atoms.size();
  const double half = outer + 0.5;
  fr.species.resize(n);
  fr.pos.resize(3 * n);
  fr.forces.resize(3 * n);
  fr.force_weight.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const CarvedAtom& a = atoms[i];
    fr.species[i] = a.species;
    double r2 = 0.0;
    for (int k = 0; k < 3; ++k) {
      fr.pos[3 * i + k] = a.d[k] + half;
      fr.forces[3 * i + k] = a.f[k];
      r2 += a.d[k] * a.d[k];
    }
    fr.force_weight[i] = r2 <= core * core ? 1.0 : 0.0;
  }
  for (int k = 0; k < 3; ++k) {
    fr.cell[4 * k] = 2.0 * half;
    fr.pbc[k] = false;
  }
  fr.has_forces = true;
  fr.has_energy = fr.has_virial = false;
  return fr;
}

TrainingFrame carve_frame(const TrainingFrame& full, int centre, double core, double cutoff) {
  const double outer = carve_outer_radius(core, cutoff);
  if (!full.has_forces) throw Error("carve_frame: the frame has no forces");
  if (centre < 0 || centre >= full.natoms()) throw Error("carve_frame: centre atom out of range");
  if (!carve_fits(full.cell, full.pbc, outer))
    throw Error("carve_frame: a region of radius " + std::to_string(outer) + " A does not fit the cell");
  std::vector<CarvedAtom> atoms;
  const MinimumImage mi(full.cell, full.pbc);
  const double* xc = &full.pos[3 * static_cast<size_t>(centre)];
  for (int i = 0; i < full.natoms(); ++i) {
    CarvedAtom a;
    for (int k = 0; k < 3; ++k) a.d[k] = full.pos[3 * static_cast<size_t>(i) + k] - xc[k];
    mi.apply(a.d);
    if (a.d[0] * a.d[0] + a.d[1] * a.d[1] + a.d[2] * a.d[2] >= outer * outer) continue;
    a.key = i;
    a.species = full.species[i];
    for (int k = 0; k < 3; ++k) a.f[k] = full.forces[3 * static_cast<size_t>(i) + k];
    atoms.push_back(std::move(a));
  }
  return carved_frame(std::move(atoms), core, outer);
}

}  // namespace nep
