/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train's labelled frames: the teacher's forces, energy and virial of every
   rank gathered to rank 0 in atom-ID order, checked (finite, fmax), scored with the current model
   (the honest fresh-frame error, select error X) and appended to the buffer.
------------------------------------------------------------------------- */

#include "fix_nep_train.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "error.h"
#include "update.h"

#include "fix_nep_train_impl.h"
#include "nep/timing.hpp"
#include "nep_plugin_common.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

using namespace LAMMPS_NS;

// Atoms of all ranks on rank 0 in atom-ID order as a labelled frame (teacher forces from fcopy,
// energy and virial the sums of `ev_total`); `types` receives their LAMMPS types. Collective; the
// frame is filled on rank 0 only. Returns whether every label and position is finite (rank 0).
bool FixNEPTrain::gather_frame(const double ev_total[7], nep::TrainingFrame &fr, std::vector<int> &types)
{
  nep::ScopedStage stage("otf_gather_frame");    // NEP_TIMING=1: per-stage times at exit
  const int nlocal = atom->nlocal;
  double **x = atom->x;
  // per atom: tag, type, position (wrapped) relative to the box origin, teacher force
  constexpr int W = 8;
  std::vector<double> mine(static_cast<size_t>(W) * nlocal);
  for (int i = 0; i < nlocal; ++i) {
    double *m = &mine[static_cast<size_t>(W) * i];
    m[0] = static_cast<double>(atom->tag[i]);
    m[1] = atom->type[i];
    // wrapped into the periodic cell as LAMMPS itself would (domain->remap), so a frame does not
    // depend on when LAMMPS last re-neighboured (e.g. after read_restart)
    double xi[3] = {x[i][0], x[i][1], x[i][2]};
    domain->remap(xi);
    for (int d = 0; d < 3; ++d) m[2 + d] = xi[d] - domain->boxlo[d];
    for (int d = 0; d < 3; ++d) m[5 + d] = fcopy[3 * i + d];
  }
  std::vector<int> counts, displs;
  const std::vector<double> all = nep_lmp::gather_to_root(mine, world, counts, displs);
  if (comm->me != 0) return true;

  const bigint natoms = static_cast<bigint>(all.size() / W);
  std::vector<bigint> order(natoms);
  for (bigint k = 0; k < natoms; ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](bigint a, bigint b) { return all[W * a] < all[W * b]; });
  fr.species.resize(natoms);
  fr.pos.resize(3 * natoms);
  fr.forces.resize(3 * natoms);
  types.resize(natoms);
  bool finite = std::isfinite(ev_total[0]);
  for (bigint k = 0; k < natoms; ++k) {
    const double *m = &all[W * order[k]];
    types[k] = static_cast<int>(m[1]);
    fr.species[k] = opt->type_elements[types[k] - 1];
    for (int d = 0; d < 3; ++d) {
      fr.pos[3 * k + d] = m[2 + d];
      fr.forces[3 * k + d] = m[5 + d];
      finite = finite && std::isfinite(m[2 + d]) && std::isfinite(m[5 + d]);
    }
  }
  nep_lmp::cell_rows(domain, fr.cell, fr.pbc);
  fr.has_energy = fr.has_forces = fr.has_virial = true;
  fr.energy = ev_total[0];
  // LAMMPS order xx yy zz xy xz yz -> row-major 3x3 (symmetric)
  const int map9[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};
  for (int c = 0; c < 9; ++c) {
    fr.virial[c] = ev_total[1 + map9[c]];
    finite = finite && std::isfinite(fr.virial[c]);
  }
  return finite;
}

// Rank 0: the current model on a frame it has never seen (honest error, and the selection rule):
// the frame's summed squared force error and the largest per-atom force error, over its labelled
// atoms (a carved frame: its core); `n` receives the labelled force components
void FixNEPTrain::score_frame(const nep::TrainingFrame &fr, const std::vector<int> &types, double &se,
                              double &max_err, bigint &n)
{
  const size_t natoms = types.size();
  nep::Structure s;
  s.type.resize(natoms);
  for (size_t k = 0; k < natoms; ++k) s.type[k] = impl->model_type[types[k]];
  s.x = fr.pos;
  std::copy(fr.cell, fr.cell + 9, s.cell.h);
  for (int d = 0; d < 3; ++d) s.cell.pbc[d] = fr.pbc[d];
  const nep::Prediction p = impl->calc->compute(s, false);
  se = 0.0;
  max_err = 0.0;
  for (size_t k = 0; k < natoms; ++k) {
    const double w = fr.force_weight_of(static_cast<int>(k));
    if (w == 0.0) continue;
    double e2 = 0.0;
    for (int d = 0; d < 3; ++d) e2 += std::pow(p.force[3 * k + d] - fr.forces[3 * k + d], 2);
    se += w * e2;
    max_err = std::max(max_err, std::sqrt(e2));
  }
  n = 3 * static_cast<bigint>(fr.force_labelled_atoms());
}

FixNEPTrain::FrameOutcome FixNEPTrain::take_frame(const double ev[7], bool active_frame, const double *scored)
{
  double mine_ev[7], tot[7];    // a copy: LAMMPS's STUBS MPI_Allreduce takes a non-const buffer
  std::copy(ev, ev + 7, mine_ev);
  MPI_Allreduce(mine_ev, tot, 7, MPI_DOUBLE, MPI_SUM, world);
  // carve CORE K: the regions around the most uncertain atoms (a box too small for a region:
  // the whole frame, warned once); else the whole frame
  std::vector<nep::TrainingFrame> frs;
  std::vector<std::vector<int>> types;
  bool finite;
  if (!carve_cut) carved_centres.clear();
  if (opt->carve_regions > 0 && carve_fits_box()) {
    finite = gather_carved(act && act->have_committee() ? act->sigma.data() : nullptr, frs, types);
    finite = finite && std::isfinite(tot[0]);
  } else {
    if (opt->carve_regions > 0 && !carve_warned && comm->me == 0)
      error->warning(FLERR, "fix nep/train: a carved region ({:.4g} Angstrom) does not fit the periodic box: whole "
                     "frames are buffered", carve_outer);
    carve_warned = true;
    frs.resize(1);
    types.resize(1);
    finite = gather_frame(tot, frs[0], types[0]);
  }

  // rank 0: check, select, append. st: frames, rejected, fresh_se, fresh_n, kept, max error, rmse, exploded
  double st[8] = {static_cast<double>(frames), static_cast<double>(rejected), fresh_se, static_cast<double>(fresh_n),
                  0, 0, 0, 0};
  std::string err, warn;
  if (comm->me == 0) {
    nep::ScopedStage stage("otf_check_buffer_frame");    // rank 0: check, score (if not scored), append
    double max_err = 0.0, call_se = 0.0;                 // the call's: max per-atom error, squared sum
    bigint call_n = 0;
    bool any_kept = false;
    if (!finite) {
      ++rejected;
      warn = fmt::format("fix nep/train: step {}: the teacher gave non-finite energy, virial, forces or positions; "
                         "frame rejected (nothing else changed)", update->ntimestep);
    }
    if (finite && scored) {    // the whole frame's error, reduced over ranks (mode active)
      call_se = scored[0];
      max_err = scored[1];
      call_n = 3 * static_cast<bigint>(scored[2]);
    }
    for (size_t f = 0; finite && f < frs.size() && err.empty(); ++f) {
      const nep::TrainingFrame &fr = frs[f];
      double fbig = 0.0;    // largest teacher force component
      for (double v : fr.forces) fbig = std::max(fbig, std::fabs(v));
      bool keep = true;
      if (active_frame && !act->ctl.within_fmax(fbig)) {
        keep = false;    // an exploded structure: its labels would teach the model nothing it can use
        ++rejected;
        st[7] = 1.0;
        warn = fmt::format("fix nep/train: step {}: a teacher force of {:.3g} eV/Angstrom exceeds fmax {:.3g}; frame "
                           "not buffered", update->ntimestep, fbig, act->ctl.settings().fmax);
      }
      if (!scored && impl->calc) {
        try {
          double se = 0.0, mx = 0.0;
          bigint n = 0;
          score_frame(fr, types[f], se, mx, n);
          call_se += se;
          call_n += n;
          max_err = std::max(max_err, mx);
          if (keep && opt->select_threshold >= 0.0 && n > 0 && std::sqrt(se / n) <= opt->select_threshold) {
            keep = false;
            ++rejected;
          }
        } catch (std::exception &e) {
          err = e.what();
        }
      }
      if (keep && err.empty()) {
        try {
          impl->buffer->add(fr);
          frames = impl->buffer->frames();
          any_kept = true;
        } catch (std::exception &e) {
          err = e.what();
        }
      }
    }
    if (finite && (scored || impl->calc)) {
      fresh_se += call_se;
      fresh_n += call_n;
    }
    st[0] = static_cast<double>(frames);
    st[1] = static_cast<double>(rejected);
    st[2] = fresh_se;
    st[3] = static_cast<double>(fresh_n);
    st[4] = any_kept && err.empty() ? 1.0 : 0.0;
    st[5] = max_err;
    st[6] = call_n > 0 ? std::sqrt(call_se / call_n) : 0.0;
  }
  carve_cut = false;    // this call's centres are spent
  carve_pre.clear();
  carve_hits.clear();
  err = nep_lmp::bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "fix nep/train: step {}: {}", update->ntimestep, err);
  if (comm->me == 0 && !warn.empty()) error->warning(FLERR, warn);
  MPI_Bcast(st, 8, MPI_DOUBLE, 0, world);
  frames = static_cast<bigint>(st[0]);
  rejected = static_cast<bigint>(st[1]);
  fresh_se = st[2];
  fresh_n = static_cast<bigint>(st[3]);
  if (st[7] != 0.0) act->ctl.count_exploded();
  FrameOutcome out;
  out.kept = st[4] != 0.0;
  out.max_err = st[5];
  out.rmse = st[6];
  return out;
}

