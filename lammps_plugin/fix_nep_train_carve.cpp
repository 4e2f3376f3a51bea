/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train's carved frames (keyword carve CORE K): the teacher's labels of the
   regions around the K most uncertain atoms instead of the whole frame. Each rank finds its own
   candidates and its own atoms inside the regions; only those rows travel to rank 0 (nep/carve.hpp
   gives the region's radius, core + 2 rc, and builds its frame).
------------------------------------------------------------------------- */

#include "fix_nep_train.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "pair.h"

#include "fix_nep_train_impl.h"
#include "nep/carve.hpp"
#include "nep/timing.hpp"
#include "nep_plugin_common.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace LAMMPS_NS;

using nep_lmp::cell_rows;

bool FixNEPTrain::carve_fits_box() const
{
  double h[9];
  bool pbc[3];
  cell_rows(domain, h, pbc);
  return nep::carve_fits(h, pbc, carve_outer);
}

// Centres: the atoms of largest `key` (the committee's per-atom deviation; the teacher's force
// magnitude without a committee), ties by atom ID, each more than 2 CORE from those chosen before
// (disjoint cores), at most K. Each rank proposes its best 8K; rank 0 keeps the best 8K of all of
// them before choosing, so the choice does not depend on the number of ranks.
std::vector<double> FixNEPTrain::carve_centres(const double *key)
{
  const int nlocal = atom->nlocal, K = opt->carve_regions, C = 8 * K;
  std::vector<double> k(nlocal);
  for (int i = 0; i < nlocal; ++i)
    k[i] = key ? key[i] : std::sqrt(fcopy[3 * i] * fcopy[3 * i] + fcopy[3 * i + 1] * fcopy[3 * i + 1] +
                                    fcopy[3 * i + 2] * fcopy[3 * i + 2]);
  auto better = [](double ka, double ta, double kb, double tb) { return ka > kb || (ka == kb && ta < tb); };
  std::vector<int> idx(nlocal);
  std::iota(idx.begin(), idx.end(), 0);
  const int take = std::min(nlocal, C);
  std::partial_sort(idx.begin(), idx.begin() + take, idx.end(), [&](int a, int b) {
    return better(k[a], static_cast<double>(atom->tag[a]), k[b], static_cast<double>(atom->tag[b]));
  });
  constexpr int W = 5;    // key, tag, position (wrapped, relative to boxlo)
  std::vector<double> mine(static_cast<size_t>(W) * take);
  for (int c = 0; c < take; ++c) {
    const int i = idx[c];
    double xi[3] = {atom->x[i][0], atom->x[i][1], atom->x[i][2]};
    domain->remap(xi);
    const double row[W] = {k[i], static_cast<double>(atom->tag[i]), xi[0] - domain->boxlo[0], xi[1] - domain->boxlo[1],
                           xi[2] - domain->boxlo[2]};
    std::copy(row, row + W, &mine[static_cast<size_t>(W) * c]);
  }
  std::vector<int> counts, displs;
  const std::vector<double> all = nep_lmp::gather_to_root(mine, world, counts, displs);
  std::vector<double> centres;    // 3 per centre
  carved_centres.clear();         // (kept by gather_carved when the teacher's plan chose them)
  if (comm->me == 0) {
    const size_t n = all.size() / W;
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return better(all[W * a], all[W * a + 1], all[W * b], all[W * b + 1]);
    });
    order.resize(std::min(n, static_cast<size_t>(C)));
    double h[9];
    bool pbc[3];
    cell_rows(domain, h, pbc);
    const double sep2 = 4.0 * opt->carve_core * opt->carve_core;
    for (size_t o : order) {
      if (static_cast<int>(centres.size()) == 3 * K) break;
      const double *x = &all[W * o + 2];
      bool apart = true;
      for (size_t c = 0; apart && c < centres.size(); c += 3) {
        double d[3] = {x[0] - centres[c], x[1] - centres[c + 1], x[2] - centres[c + 2]};
        nep::minimum_image(h, pbc, d);
        apart = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > sep2;
      }
      if (!apart) continue;
      centres.insert(centres.end(), x, x + 3);
      carved_centres.push_back(static_cast<bigint>(all[W * o + 1]));
    }
  }
  int nc = static_cast<int>(centres.size());
  MPI_Bcast(&nc, 1, MPI_INT, 0, world);
  centres.resize(nc);
  MPI_Bcast(centres.data(), nc, MPI_DOUBLE, 0, world);
  return centres;
}

// The regions around the centres as frames on rank 0 (one per centre, atoms in ID order, `types`
// their LAMMPS types); collective. Returns whether every position and teacher force is finite.
bool FixNEPTrain::gather_carved(const double *key, std::vector<nep::TrainingFrame> &out,
                                std::vector<std::vector<int>> &types)
{
  nep::ScopedStage stage("otf_gather_frame");
  if (!carve_cut) {    // centres not chosen before the teacher ran: now, and the scan with them
    carve_pre = carve_centres(key);
    carve_scan(carve_outer);
  }
  const double outer2 = carve_outer * carve_outer;
  constexpr int W = 9;    // centre, tag, type, displacement from the centre, teacher force
  std::vector<double> mine;
  for (const CarveHit &hit : carve_hits) {
    if (!(hit.r2 < outer2)) continue;
    const int i = hit.i;
    const double row[W] = {static_cast<double>(hit.c), static_cast<double>(atom->tag[i]), static_cast<double>(atom->type[i]),
                           hit.d[0], hit.d[1], hit.d[2], fcopy[3 * i], fcopy[3 * i + 1], fcopy[3 * i + 2]};
    mine.insert(mine.end(), row, row + W);
  }
  std::vector<int> counts, displs;
  const std::vector<double> all = nep_lmp::gather_to_root(mine, world, counts, displs);
  if (comm->me != 0) return true;
  const size_t n = all.size() / W;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return all[W * a] < all[W * b] || (all[W * a] == all[W * b] && all[W * a + 1] < all[W * b + 1]);
  });
  out.clear();
  types.clear();
  bool finite = true;
  std::vector<nep::CarvedAtom> atoms;
  std::vector<int> ty;
  for (size_t k = 0; k <= n; ++k) {
    const int c = k < n ? static_cast<int>(all[W * order[k]]) : -1;
    if (!atoms.empty() && (k == n || c != static_cast<int>(all[W * order[k - 1]]))) {
      out.push_back(nep::carved_frame(std::move(atoms), opt->carve_core, carve_outer));    // keeps ID order
      types.push_back(std::move(ty));
      atoms.clear();
      ty.clear();
    }
    if (k == n) break;
    const double *m = &all[W * order[k]];
    nep::CarvedAtom a;
    a.key = static_cast<int64_t>(m[1]);
    const int t = static_cast<int>(m[2]);
    a.species = opt->type_elements[t - 1];
    for (int d = 0; d < 3; ++d) {
      a.d[d] = m[3 + d];
      a.f[d] = m[6 + d];
      finite = finite && std::isfinite(m[3 + d]) && std::isfinite(m[6 + d]);
    }
    atoms.push_back(std::move(a));
    ty.push_back(t);
  }
  return finite;
}

// Mode active, the student driving: the centres of this call's regions chosen before the teacher
// is called (by the committee's deviation), and the teacher computed for the atoms within CORE +
// its cutoff of a centre only. For a local teacher (E = sum_i E_i, E_i from the neighbours within
// its cutoff: sw, snap, eam, ...) the forces on the atoms within CORE of a centre are then those of
// the whole system: every E_i that moves them belongs to an atom in the list. Not for a Kokkos
// teacher or pair_style ipi (whole system). Returns whether the list was cut; `centres` (every
// rank) are reused by gather_carved.
bool FixNEPTrain::carve_teacher_plan()
{
  carve_pre.clear();
  carve_cut = false;
  if (!(opt->carve_regions > 0 && act && act->have_committee() && carve_fits_box())) return false;
  int dim = 0;
  if (act->teacher->kokkosable || act->teacher->ghostneigh || act->teacher->extract("ipi_soft", dim) ||
      !act->teacher->list)
    return false;
  carve_pre = carve_centres(act->sigma.data());
  carve_cut = !carve_pre.empty();
  if (carve_cut) carve_scan(std::max(carve_outer, opt->carve_core + teacher_cutoff()));
  return carve_cut;
}

// This call's owned atoms near the centres of carve_pre, scanned once (the teacher's cut, the true
// error and the gather read it): each owned atom and centre within `radius`, the displacement
// from the centre (minimum image; positions need not be wrapped) and its square
void FixNEPTrain::carve_scan(double radius)
{
  double h[9];
  bool pbc[3];
  cell_rows(domain, h, pbc);
  const nep::MinimumImage mi(h, pbc);
  const int nc = static_cast<int>(carve_pre.size() / 3);
  const double r2max = radius * radius;
  carve_hits.clear();
  for (int i = 0; i < atom->nlocal; ++i)
    for (int c = 0; c < nc; ++c) {
      CarveHit hit;
      for (int d = 0; d < 3; ++d) hit.d[d] = atom->x[i][d] - domain->boxlo[d] - carve_pre[3 * c + d];
      mi.apply(hit.d);
      hit.r2 = hit.d[0] * hit.d[0] + hit.d[1] * hit.d[1] + hit.d[2] * hit.d[2];
      if (!(hit.r2 <= r2max)) continue;
      hit.i = i;
      hit.c = c;
      carve_hits.push_back(hit);
    }
}

// Per owned atom: 1 within `radius` (<= the scan's) of a centre, else 0
std::vector<char> FixNEPTrain::atoms_near_centres(double radius) const
{
  std::vector<char> out(atom->nlocal, 0);
  for (const CarveHit &hit : carve_hits)
    if (hit.r2 <= radius * radius) out[hit.i] = 1;
  return out;
}
