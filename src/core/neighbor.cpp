// Ghost-image generation + cell-list binning for the standalone neighbour list.
#include "nep/neighbor.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "nep/error.hpp"

#ifdef _OPENMP
#include <omp.h>
#else
inline int omp_get_num_threads() { return 1; }
inline int omp_get_thread_num() { return 0; }
#endif

namespace nep {
namespace {

using Vec3 = std::array<double, 3>;

Vec3 cross(const double* a, const double* b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// The cell's reciprocal rows (frac_k = r . recip[k]) and, per lattice direction, the image shells
// and the fractional margin (cutoff / layer thickness) that ghost images must reach
struct Geometry {
  Vec3 recip[3];
  int shells[3];
  double margin[3];
};

Geometry cell_geometry(const Cell& cell, double cutoff) {
  const double* a = cell.h;
  const double* b = cell.h + 3;
  const double* c = cell.h + 6;
  // recip[k] = (b x c)/V etc.
  const Vec3 bxc = cross(b, c), cxa = cross(c, a), axb = cross(a, b);
  const double vol = dot(bxc, a);
  if (!(std::fabs(vol) > 1e-12)) throw Error("build_neighbor_list: cell volume is zero or not finite");
  Geometry g{{{bxc[0] / vol, bxc[1] / vol, bxc[2] / vol},
              {cxa[0] / vol, cxa[1] / vol, cxa[2] / vol},
              {axb[0] / vol, axb[1] / vol, axb[2] / vol}},
             {0, 0, 0},
             {0, 0, 0}};
  // number of image shells along each lattice direction: thickness h_k = 1/|recip_k|
  for (int k = 0; k < 3; ++k) {
    const Vec3& r = g.recip[k];
    const double inv_thick = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    g.shells[k] = cell.pbc[k] ? static_cast<int>(std::ceil(cutoff * inv_thick)) : 0;
    g.margin[k] = cell.pbc[k] ? cutoff * inv_thick : 0.0;
  }
  return g;
}

// The local atoms (wrapped into [0,1) along periodic directions), then the ghost images whose
// fractional coordinate lies within the margin of [0,1), shell by shell
void add_atoms_and_images(NeighborList& nl, const std::vector<double>& x, const std::vector<int>& type,
                          const Cell& cell, const Geometry& g) {
  const int n = static_cast<int>(type.size());
  nl.x.reserve(3 * n);
  std::vector<Vec3> frac(n);
  for (int i = 0; i < n; ++i) {
    const double* r = &x[3 * i];
    if (!std::isfinite(r[0]) || !std::isfinite(r[1]) || !std::isfinite(r[2]))
      throw Error("build_neighbor_list: atom " + std::to_string(i) + " has a non-finite position");
    Vec3 p = {r[0], r[1], r[2]};
    for (int k = 0; k < 3; ++k) {
      double f = dot(g.recip[k], r);
      const double shift = cell.pbc[k] ? std::floor(f) : 0.0;
      if (shift != 0.0) {
        for (int d = 0; d < 3; ++d) p[d] -= shift * cell.h[3 * k + d];
        f -= shift;
      }
      frac[i][k] = f;
    }
    nl.x.insert(nl.x.end(), p.begin(), p.end());
    nl.type.push_back(type[i]);
    nl.owner.push_back(i);
  }
  const double* a = cell.h;
  const double* b = cell.h + 3;
  const double* c = cell.h + 6;
  for (int ia = -g.shells[0]; ia <= g.shells[0]; ++ia)
    for (int ib = -g.shells[1]; ib <= g.shells[1]; ++ib)
      for (int ic = -g.shells[2]; ic <= g.shells[2]; ++ic) {
        if (ia == 0 && ib == 0 && ic == 0) continue;
        const int s[3] = {ia, ib, ic};
        const Vec3 shift = {ia * a[0] + ib * b[0] + ic * c[0], ia * a[1] + ib * b[1] + ic * c[1],
                            ia * a[2] + ib * b[2] + ic * c[2]};
        for (int i = 0; i < n; ++i) {
          bool keep = true;
          for (int k = 0; k < 3 && keep; ++k) {
            const double f = frac[i][k] + s[k];
            keep = f >= -g.margin[k] && f < 1.0 + g.margin[k];
          }
          if (!keep) continue;
          for (int d = 0; d < 3; ++d) nl.x.push_back(nl.x[3 * i + d] + shift[d]);
          nl.type.push_back(type[i]);
          nl.owner.push_back(i);
        }
      }
  nl.nall = static_cast<int>(nl.type.size());
}

// A Cartesian cell list over all atoms: bins at least cutoff/2 wide, searched over +-kReach bins
// (~40% fewer candidates than cutoff-wide bins); coordinates kept in bin order, so the candidate
// scan reads memory contiguously
struct Bins {
  static constexpr int kReach = 2;
  double lo[3], binw[3];
  int nb[3];
  std::vector<int> head, order;   // atoms of bin k: order[head[k] .. head[k+1])
  std::vector<double> xs;         // coordinates in bin order
  int bin_of(const double* r, int d) const {
    return std::min(nb[d] - 1, std::max(0, static_cast<int>((r[d] - lo[d]) / binw[d])));
  }
};

Bins bin_atoms(const NeighborList& nl, double cutoff) {
  Bins bins;
  double hi[3];
  for (int d = 0; d < 3; ++d) bins.lo[d] = hi[d] = nl.x[d];
  for (int i = 0; i < nl.nall; ++i)
    for (int d = 0; d < 3; ++d) {
      bins.lo[d] = std::min(bins.lo[d], nl.x[3 * i + d]);
      hi[d] = std::max(hi[d], nl.x[3 * i + d]);
    }
  for (int d = 0; d < 3; ++d) {
    bins.nb[d] = std::max(1, std::min(1 << 10, static_cast<int>(Bins::kReach * (hi[d] - bins.lo[d]) / cutoff)));
    bins.binw[d] = std::max((hi[d] - bins.lo[d]) / bins.nb[d], 1e-12);
  }
  const int* nb = bins.nb;
  const long nbins = static_cast<long>(nb[0]) * nb[1] * nb[2];
  bins.head.assign(nbins + 1, 0);
  bins.order.resize(nl.nall);
  std::vector<long> bin_index(nl.nall);
  for (int i = 0; i < nl.nall; ++i) {
    const double* r = &nl.x[3 * i];
    bin_index[i] = (static_cast<long>(bins.bin_of(r, 2)) * nb[1] + bins.bin_of(r, 1)) * nb[0] + bins.bin_of(r, 0);
    ++bins.head[bin_index[i] + 1];
  }
  for (long k = 0; k < nbins; ++k) bins.head[k + 1] += bins.head[k];
  std::vector<int> fill(bins.head.begin(), bins.head.end() - 1);
  for (int i = 0; i < nl.nall; ++i) bins.order[fill[bin_index[i]]++] = i;
  bins.xs.resize(3 * static_cast<size_t>(nl.nall));
  for (int p = 0; p < nl.nall; ++p)
    for (int d = 0; d < 3; ++d) bins.xs[3 * p + d] = nl.x[3 * bins.order[p] + d];
  return bins;
}

// Neighbours (within the cutoff) of every local atom into the padded row-major array: one search
// pass into per-thread buffers (each row in bin order), then a copy, so the result does not
// depend on the thread count
void fill_neighbors(NeighborList& nl, const Bins& bins, double cutoff) {
  const int n = nl.nlocal, R = Bins::kReach;
  const int* nb = bins.nb;
  const double rc2 = cutoff * cutoff;
  auto for_each_neighbor = [&](int i, auto&& visit) {
    const double* ri = &nl.x[3 * i];
    const int bx = bins.bin_of(ri, 0), by = bins.bin_of(ri, 1), bz = bins.bin_of(ri, 2);
    const double xi = ri[0], yi = ri[1], zi = ri[2];
    for (int z = std::max(0, bz - R); z <= std::min(nb[2] - 1, bz + R); ++z)
      for (int y = std::max(0, by - R); y <= std::min(nb[1] - 1, by + R); ++y) {
        const long row = (static_cast<long>(z) * nb[1] + y) * nb[0];
        const int p0 = bins.head[row + std::max(0, bx - R)], p1 = bins.head[row + std::min(nb[0] - 1, bx + R) + 1];
        for (int p = p0; p < p1; ++p) {
          const double dx = bins.xs[3 * p] - xi, dy = bins.xs[3 * p + 1] - yi, dz = bins.xs[3 * p + 2] - zi;
          if (dx * dx + dy * dy + dz * dz < rc2 && bins.order[p] != i) visit(bins.order[p]);
        }
      }
  };
  nl.num_neighbors.assign(n, 0);
  std::vector<size_t> row_start(n);
  std::vector<int> row_thread(n);
  std::vector<std::vector<int>> buffers;
#pragma omp parallel
  {
#pragma omp single
    buffers.resize(omp_get_num_threads());
    std::vector<int>& buf = buffers[omp_get_thread_num()];
#pragma omp for schedule(static)
    for (int i = 0; i < n; ++i) {
      row_start[i] = buf.size();
      row_thread[i] = omp_get_thread_num();
      for_each_neighbor(i, [&](int j) { buf.push_back(j); });
      nl.num_neighbors[i] = static_cast<int>(buf.size() - row_start[i]);
    }
  }
  int maxn = 0;
  for (int c : nl.num_neighbors) maxn = std::max(maxn, c);
  nl.max_neighbors = maxn;
  nl.neighbors.assign(static_cast<size_t>(n) * std::max(maxn, 1), 0);
  for (int i = 0; i < n; ++i)
    std::copy_n(buffers[row_thread[i]].data() + row_start[i], nl.num_neighbors[i],
                nl.neighbors.data() + static_cast<size_t>(i) * maxn);
}

}  // namespace

NeighborList build_neighbor_list(const std::vector<double>& x, const std::vector<int>& type,
                                 const Cell& cell, double cutoff) {
  if (x.size() != 3 * type.size()) throw Error("build_neighbor_list: positions and types differ in length");
  const Geometry g = cell_geometry(cell, cutoff);
  NeighborList nl;
  nl.nlocal = static_cast<int>(type.size());
  add_atoms_and_images(nl, x, type, cell, g);
  fill_neighbors(nl, bin_atoms(nl, cutoff), cutoff);
  return nl;
}

}  // namespace nep
