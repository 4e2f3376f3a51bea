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

}  // namespace

NeighborList build_neighbor_list(const std::vector<double>& x, const std::vector<int>& type,
                                 const Cell& cell, double cutoff) {
  const int n = static_cast<int>(type.size());
  if (x.size() != 3 * type.size()) throw Error("build_neighbor_list: positions and types differ in length");
  const double* a = cell.h;
  const double* b = cell.h + 3;
  const double* c = cell.h + 6;
  // reciprocal rows: frac_k = r . recip[k];  recip[k] = (b x c)/V etc.
  const Vec3 bxc = cross(b, c), cxa = cross(c, a), axb = cross(a, b);
  const double vol = dot(bxc, a);
  if (!(std::fabs(vol) > 1e-12)) throw Error("build_neighbor_list: cell volume is zero or not finite");
  const Vec3 recip[3] = {{bxc[0] / vol, bxc[1] / vol, bxc[2] / vol},
                         {cxa[0] / vol, cxa[1] / vol, cxa[2] / vol},
                         {axb[0] / vol, axb[1] / vol, axb[2] / vol}};
  // number of image shells along each lattice direction: thickness h_k = 1/|recip_k|
  int shells[3];
  for (int k = 0; k < 3; ++k) {
    const double inv_thick = std::sqrt(recip[k][0] * recip[k][0] + recip[k][1] * recip[k][1] + recip[k][2] * recip[k][2]);
    shells[k] = cell.pbc[k] ? static_cast<int>(std::ceil(cutoff * inv_thick)) : 0;
  }

  NeighborList nl;
  nl.nlocal = n;
  nl.x.reserve(3 * n);
  std::vector<Vec3> frac(n);
  // locals, wrapped into [0,1) along periodic directions
  for (int i = 0; i < n; ++i) {
    const double* r = &x[3 * i];
    if (!std::isfinite(r[0]) || !std::isfinite(r[1]) || !std::isfinite(r[2]))
      throw Error("build_neighbor_list: atom " + std::to_string(i) + " has a non-finite position");
    Vec3 p = {r[0], r[1], r[2]};
    for (int k = 0; k < 3; ++k) {
      double f = dot(recip[k], r);
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
  // ghosts: images whose fractional coordinate lies within cutoff/thickness of [0,1)
  double margin[3];
  for (int k = 0; k < 3; ++k) {
    const double inv_thick = std::sqrt(recip[k][0] * recip[k][0] + recip[k][1] * recip[k][1] + recip[k][2] * recip[k][2]);
    margin[k] = cell.pbc[k] ? cutoff * inv_thick : 0.0;
  }
  for (int ia = -shells[0]; ia <= shells[0]; ++ia)
    for (int ib = -shells[1]; ib <= shells[1]; ++ib)
      for (int ic = -shells[2]; ic <= shells[2]; ++ic) {
        if (ia == 0 && ib == 0 && ic == 0) continue;
        const int s[3] = {ia, ib, ic};
        const Vec3 shift = {ia * a[0] + ib * b[0] + ic * c[0], ia * a[1] + ib * b[1] + ic * c[1],
                            ia * a[2] + ib * b[2] + ic * c[2]};
        for (int i = 0; i < n; ++i) {
          bool keep = true;
          for (int k = 0; k < 3 && keep; ++k) {
            const double f = frac[i][k] + s[k];
            keep = f >= -margin[k] && f < 1.0 + margin[k];
          }
          if (!keep) continue;
          for (int d = 0; d < 3; ++d) nl.x.push_back(nl.x[3 * i + d] + shift[d]);
          nl.type.push_back(type[i]);
          nl.owner.push_back(i);
        }
      }
  nl.nall = static_cast<int>(nl.type.size());

  // Cartesian cell list over all atoms
  double lo[3], hi[3];
  for (int d = 0; d < 3; ++d) lo[d] = hi[d] = nl.x[d];
  for (int i = 0; i < nl.nall; ++i)
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], nl.x[3 * i + d]);
      hi[d] = std::max(hi[d], nl.x[3 * i + d]);
    }
  // bins at least cutoff/2 wide, searched over +-2 bins: ~40% fewer candidates than cutoff-wide bins
  constexpr int kReach = 2;
  int nb[3];
  double binw[3];
  for (int d = 0; d < 3; ++d) {
    nb[d] = std::max(1, std::min(1 << 10, static_cast<int>(kReach * (hi[d] - lo[d]) / cutoff)));
    binw[d] = std::max((hi[d] - lo[d]) / nb[d], 1e-12);
  }
  auto bin_of = [&](int i, int d) {
    return std::min(nb[d] - 1, std::max(0, static_cast<int>((nl.x[3 * i + d] - lo[d]) / binw[d])));
  };
  const long nbins = static_cast<long>(nb[0]) * nb[1] * nb[2];
  std::vector<int> head(nbins + 1, 0), order(nl.nall);
  std::vector<long> bin_index(nl.nall);
  for (int i = 0; i < nl.nall; ++i) {
    bin_index[i] = (static_cast<long>(bin_of(i, 2)) * nb[1] + bin_of(i, 1)) * nb[0] + bin_of(i, 0);
    ++head[bin_index[i] + 1];
  }
  for (long k = 0; k < nbins; ++k) head[k + 1] += head[k];
  {
    std::vector<int> fill(head.begin(), head.end() - 1);
    for (int i = 0; i < nl.nall; ++i) order[fill[bin_index[i]]++] = i;
  }

  // coordinates in bin order, so the candidate scan below reads memory contiguously
  std::vector<double> xs(3 * static_cast<size_t>(nl.nall));
  for (int p = 0; p < nl.nall; ++p)
    for (int d = 0; d < 3; ++d) xs[3 * p + d] = nl.x[3 * order[p] + d];
  // two passes (count, then fill) so the list goes straight into its padded row-major array;
  // each atom's row is written by one thread in bin order, so the result is thread-count independent
  const double rc2 = cutoff * cutoff;
  auto for_each_neighbor = [&](int i, auto&& visit) {
    const int bx = bin_of(i, 0), by = bin_of(i, 1), bz = bin_of(i, 2);
    const double xi = nl.x[3 * i], yi = nl.x[3 * i + 1], zi = nl.x[3 * i + 2];
    for (int z = std::max(0, bz - kReach); z <= std::min(nb[2] - 1, bz + kReach); ++z)
      for (int y = std::max(0, by - kReach); y <= std::min(nb[1] - 1, by + kReach); ++y) {
        const long row = (static_cast<long>(z) * nb[1] + y) * nb[0];
        const int p0 = head[row + std::max(0, bx - kReach)], p1 = head[row + std::min(nb[0] - 1, bx + kReach) + 1];
        for (int p = p0; p < p1; ++p) {
          const double dx = xs[3 * p] - xi, dy = xs[3 * p + 1] - yi, dz = xs[3 * p + 2] - zi;
          if (dx * dx + dy * dy + dz * dz < rc2 && order[p] != i) visit(order[p]);
        }
      }
  };
  // one search pass into per-thread buffers (each row in bin order), then a copy into the padded
  // row-major array: the result does not depend on the thread count
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
  return nl;
}

}  // namespace nep
