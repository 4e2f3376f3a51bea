/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train — on-the-fly NEP training (docs/fix_nep_train.rst)

   Step cycle on a sampling step (ntimestep % every == 0, never in setup):
     pre_reverse  teacher forces of this step (all force styles, before fixes add theirs in
                  post_force), ghost parts folded onto owners by our own reverse comm; energy and
                  virial of the pair (+ kspace) style summed over ranks; atoms gathered to rank 0
                  in tag order; rank 0 checks, selects and appends the frame to the buffer.
     end_of_step  round bookkeeping: when a round is due (every `train_every` buffered frames)
                  the running one is joined and adopted (model written, optionally deployed),
                  then the next starts on a snapshot of the buffer's reservoirs.
   Rounds run on a background thread on rank 0 that never calls MPI; all collective work
   happens here on the main thread. A round's model is adopted only when the next round is due
   or at the end of a run, so the trajectory and the model bytes never depend on timing.
   This file: set-up, sampling and thermo output. Keywords: fix_nep_train_args.cpp; rounds:
   fix_nep_train_rounds.cpp; restart files: fix_nep_train_restart.cpp; mode active:
   fix_nep_train_active.cpp.
------------------------------------------------------------------------- */

#include "fix_nep_train.h"

#include "atom.h"
#include "atom_masks.h"
#include "comm.h"
#include "compute.h"
#include "domain.h"
#include "error.h"
#include "force.h"
#include "kspace.h"
#include "memory.h"
#include "modify.h"
#include "pair.h"
#include "update.h"
#include "utils.h"

#include "nep/calculator.hpp"
#include "nep/error.hpp"
#include "nep/host_core.hpp"
#include "nep/model.hpp"
#include "nep/train/otf_buffer.hpp"
#include "nep/train/otf_round.hpp"
#include "nep/train/config.hpp"
#include "fix_nep_train_impl.h"
#include "nep_lammps_compat.h"
#include "nep_plugin_common.h"
#include "pair_nep.h"

#include <algorithm>
#include <fstream>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <strings.h>

using namespace LAMMPS_NS;
using namespace FixConst;

// rank 0's string (e.g. an error message, empty = fine) on every rank
std::string LAMMPS_NS::nep_bcast_string(std::string s, MPI_Comm world)
{
  int me = 0;
  MPI_Comm_rank(world, &me);
  long long n = static_cast<long long>(s.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, world);
  s.resize(static_cast<size_t>(n));
  if (n) MPI_Bcast(&s[0], static_cast<int>(n), MPI_CHAR, 0, world);
  return s;
}

/* ---------------------------------------------------------------------- */

FixNEPTrain::FixNEPTrain(LAMMPS *lmp, int narg, char **arg) : Fix(lmp, narg, arg), impl(new Impl)
{
  created_at = MPI_Wtime();
  parse_args(narg, arg);


  // nep.in: read on rank 0, errors on every rank (nep.in:LINE: ... messages)
  std::string err;
  if (comm->me == 0) {
    try {
      impl->cfg = nep::read_train_config(input_path);
      impl->cfg.seed = static_cast<uint64_t>(seed);
      for (const auto &w : impl->cfg.warnings) error->warning(FLERR, "fix nep/train: {}", w);
    } catch (std::exception &e) {
      err = e.what();
    }
  }
  err = nep_bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "fix nep/train: {}", err);
  const std::string elements = nep_bcast_string(comm->me == 0 ? nep_lmp::join(impl->cfg.elements) : "", world);
  std::vector<std::string> nep_elements = utils::split_words(elements);
  if (type_elements.empty()) {
    if ((int) nep_elements.size() != atom->ntypes)
      error->all(FLERR, "fix nep/train: {} atom types but {} lists {} elements ({}): give 'elements El1 ... El{}'",
                 atom->ntypes, input_path, nep_elements.size(), elements, atom->ntypes);
    type_elements = nep_elements;
  }
  for (int t = 0; t < atom->ntypes; ++t)
    if (std::find(nep_elements.begin(), nep_elements.end(), type_elements[t]) == nep_elements.end())
      error->all(FLERR, "fix nep/train: element '{}' (atom type {}) is not in {}'s type list ({})", type_elements[t],
                 t + 1, input_path, elements);
  if (atom->tag_enable == 0) error->all(FLERR, "fix nep/train needs atom IDs");

  // threads: the training thread shares the cores with MD; spinning OpenMP workers starve it
  if (comm->me == 0) {
    const char *wp = getenv("OMP_WAIT_POLICY");
    const bool passive = wp && strcasecmp(wp, "passive") == 0;
    if (!passive && (comm->nthreads > 1 || lmp->kokkos || threads > 1))
      error->warning(FLERR, "fix nep/train: OMP_WAIT_POLICY is not 'passive': spin-waiting OpenMP threads can slow "
                            "MD and training many times over on a shared core (export OMP_WAIT_POLICY=passive)");
  }
  nep::ensure_kokkos_initialized();

  vector_flag = 1;
  size_vector = act ? 14 : 7;
  global_freq = 1;
  extvector = 0;
  restart_global = 1;
  nevery = every;
  comm_reverse = act ? 3 * std::max(1, act->members) : 3;
  if (act) {    // per-atom committee deviation (eV/A), for dump: updated on check steps
    peratom_flag = 1;
    size_peratom_cols = 0;
    peratom_freq = every;
  }
  // under the KOKKOS package LAMMPS syncs datamask_read to the host around every call of this
  // fix and marks datamask_modify as changed there: nothing on ordinary steps (the default, all
  // data, would be a full device-host round trip per step); on a sampling step what sample()
  // reads (set_sampling_masks). The fix never changes atom data.
  datamask_read = EMPTY_MASK;
  datamask_modify = EMPTY_MASK;

  // computes that make the integrator tally the global energy and virial on sampling steps
  id_pe = std::string(id) + "_nep_train_pe";
  id_press = std::string(id) + "_nep_train_press";
  c_pe = modify->add_compute(id_pe + " all pe");
  c_press = modify->add_compute(id_press + " all pressure NULL virial");
}

FixNEPTrain::~FixNEPTrain()
{
  if (impl) impl->worker.request_stop();    // a round still running is abandoned (joined by ~OtfWorker)
  // mode active: both sub-styles are computed again (as before the fix), if they still exist
  if (act && act->teacher && act->student && force && force->pair &&
      force->pair_match(act->teacher_name, 1, 0) == act->teacher) {
    act->teacher->compute_flag = 1;
    act->student->compute_flag = 1;
  }
  if (modify) {
    if (modify->find_compute(id_pe) >= 0) modify->delete_compute(id_pe);
    if (modify->find_compute(id_press) >= 0) modify->delete_compute(id_press);
  }
}

int FixNEPTrain::setmask()
{
  return PRE_REVERSE | END_OF_STEP | POST_RUN;
}

void FixNEPTrain::init()
{
  if (!force->pair) error->all(FLERR, "fix nep/train needs a pair style (the teacher)");
  c_pe = modify->compute[modify->find_compute(id_pe)];
  c_press = modify->compute[modify->find_compute(id_press)];
  if (act) active_init();
  if (buffer_open_done) {    // the buffer is opened (and the state broadcast) once
    if (act) active_setup();
    return;
  }
  buffer_open_done = true;
  std::string err;
  double state[2] = {0, 0};
  if (comm->me == 0) {
    try {
      nep::OtfBufferOptions bo;
      bo.path = buffer_path;
      bo.seed = static_cast<uint64_t>(seed);
      bo.capacity = capacity;
      bo.heldout = heldout;
      impl->buffer = std::make_unique<nep::OtfBuffer>(bo, restart_frames);
      state[0] = static_cast<double>(impl->buffer->frames());
      state[1] = static_cast<double>(impl->buffer->dropped());
      // the model rounds start from: the restart's, else `start`, else nep.in's fine_tune
      if (!model_text.empty()) {
        impl->set_model(nep::parse_model(model_text, "restart file model"), type_elements);
      } else {
        std::string path = !start_path.empty() ? start_path : impl->cfg.fine_tune;
        if (!path.empty()) {
          impl->set_model(nep::read_model(path), type_elements);
          model_text = nep::format_model(*impl->model);
          // mode active: the committee written beside that model by an earlier run (MODEL.memberK)
          if (act) {
            std::vector<std::string> texts;
            for (int k = 1; k < act->members; ++k) {
              const std::string mp = fmt::format("{}.member{}", path, k);
              if (!std::ifstream(mp).good()) break;    // (utils:: or platform::file_is_readable by LAMMPS release)
              impl->members.push_back(nep::read_model(mp));
              texts.push_back(nep::format_model(impl->members.back()));
            }
            if (static_cast<int>(texts.size()) == act->members - 1) {
              act->member_text = texts;
              utils::logmesg(lmp, "fix nep/train: committee of {} from {} and {}.member1..{}\n", act->members, path,
                             path, act->members - 1);
            } else {
              impl->members.clear();
            }
          }
        }
      }
    } catch (std::exception &e) {
      err = e.what();
    }
  }
  err = nep_bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "fix nep/train: {}", err);
  MPI_Bcast(state, 2, MPI_DOUBLE, 0, world);
  frames = static_cast<bigint>(state[0]);
  model_text = nep_bcast_string(model_text, world);
  if (act) {    // the committee members (start model's, or the restart's) on every rank
    int n = static_cast<int>(act->member_text.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, world);
    act->member_text.resize(n);
    for (auto &t : act->member_text) t = nep_bcast_string(t, world);
  }
  if (comm->me == 0) {
    if (state[1] > 0)
      error->warning(FLERR, "fix nep/train: dropped {} frames of {} written after the restart point (they will be "
                     "sampled again)", static_cast<bigint>(state[1]), buffer_path);
    utils::logmesg(lmp, "fix nep/train: buffer {} holds {} frames; sampling every {} steps, a round every {} frames\n",
                   buffer_path, frames, every, train_every);
    std::string els;
    for (const auto &e : type_elements) els += (els.empty() ? "\"" : ",\"") + e + "\"";
    history_event(fmt::format("\"event\":\"start\",\"step\":{},\"natoms\":{},\"elements\":[{}],\"buffer\":\"{}\","
                              "\"model\":\"{}\",\"input\":\"{}\",\"seed\":{},\"every\":{},\"train_every\":{},"
                              "\"frames\":{},\"rounds\":{}",
                              update->ntimestep, atom->natoms, els, nep_lmp::json_escape(buffer_path),
                              nep_lmp::json_escape(model_path), nep_lmp::json_escape(input_path), seed, every,
                              train_every, frames, rounds));
  }
  if (restart_frames < 0) next_round_at = std::max<bigint>(train_every, 1);
  if (act && !act->have_committee() && !model_text.empty()) {
    adopt_committee(act->member_text);    // from the restart file, or the start model's files
    deploy_model();                       // the student continues with the model it had
  }
  // a new run (not a restart) starts with the student driving only if a committee exists already
  if (act && restart_frames < 0) act->teacher_drives = !act->have_committee();
  if (restart_round_running) {    // the round in flight when the restart was written: run it again
    restart_round_running = false;
    start_round();
  }
  // mode active: the compute flags of the sub-styles before the run's first force call (setup)
  if (act) active_setup();
}

void FixNEPTrain::setup(int)
{
  schedule_next_sample();
}

void FixNEPTrain::request_tally(bigint step)
{
  c_pe->addstep(step);
  c_press->addstep(step);
}

void FixNEPTrain::schedule_next_sample()
{
  next_sample = (update->ntimestep / every + 1) * every;
  request_tally(next_sample);
  set_sampling_masks(update->ntimestep + 1 == next_sample);
}

// Data the next call of this fix reads (KOKKOS package): positions, types, IDs and the teacher's
// forces (ghosts included) when the next step samples, else nothing. Set by each step's
// pre_reverse (and by setup and end_of_step when they schedule) for the next step.
void FixNEPTrain::set_sampling_masks(bool sampling_next)
{
  datamask_read = sampling_next ? (X_MASK | F_MASK | TYPE_MASK | TAG_MASK) : EMPTY_MASK;
}

void FixNEPTrain::pre_reverse(int eflag, int vflag)
{
  if (act) {
    active_pre_reverse(eflag, vflag);
    return;
  }
  // called every step (end_of_step only every N): declare what the next step's call reads
  set_sampling_masks(update->ntimestep + 1 == next_sample);
  if (update->ntimestep != next_sample) return;
  if (update->eflag_global != update->ntimestep || update->vflag_global != update->ntimestep)
    error->all(FLERR, "fix nep/train: energy and virial were not tallied on step {} (a fix or run option "
               "suppressed them)", update->ntimestep);
  sample();
  sampled_now = true;
}

// fcopy <- the forces LAMMPS holds now (local + ghost atoms), ghost parts folded onto owners
void FixNEPTrain::copy_forces()
{
  const int nall = atom->nlocal + atom->nghost;
  double **f = atom->f;
  fcopy.resize(3 * static_cast<size_t>(nall));
  for (int i = 0; i < nall; ++i)
    for (int d = 0; d < 3; ++d) fcopy[3 * i + d] = f[i][d];
  reverse_width = 3;
  if (force->newton) nep_lmp::reverse_comm_fix(lmp, this, 3);    // ghost parts onto their owners
}

void FixNEPTrain::sample()
{
  copy_forces();
  // teacher energy and virial (xx yy zz xy xz yz) of this rank: pair + kspace
  double ev[7] = {force->pair->eng_vdwl + force->pair->eng_coul, 0, 0, 0, 0, 0, 0};
  for (int c = 0; c < 6; ++c) ev[1 + c] = force->pair->virial[c];
  if (force->kspace) {
    ev[0] += force->kspace->energy;
    for (int c = 0; c < 6; ++c) ev[1 + c] += force->kspace->virial[c];
  }
  take_frame(ev, false);
}

FixNEPTrain::FrameOutcome FixNEPTrain::take_frame(const double ev[7], bool active_frame)
{
  const int nlocal = atom->nlocal;
  double **x = atom->x;
  double mine_ev[7], tot[7];    // a copy: LAMMPS's STUBS MPI_Allreduce takes a non-const buffer
  std::copy(ev, ev + 7, mine_ev);
  MPI_Allreduce(mine_ev, tot, 7, MPI_DOUBLE, MPI_SUM, world);

  // atoms to rank 0: tag, type, position (wrapped) relative to the box origin, teacher force
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
  int n = W * nlocal;
  std::vector<int> counts(comm->nprocs), displs(comm->nprocs);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world);
  std::vector<double> all;
  if (comm->me == 0) {
    int total = 0;
    for (int r = 0; r < comm->nprocs; ++r) {
      displs[r] = total;
      total += counts[r];
    }
    all.resize(total);
  }
  MPI_Gatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, world);

  // rank 0: build, check, select, append. state: frames, rejected, fresh_se, fresh_n, kept, errors
  double st[7] = {static_cast<double>(frames), static_cast<double>(rejected), fresh_se, static_cast<double>(fresh_n),
                  0, 0, 0};
  double max_err = 0.0, frame_se = 0.0;
  std::string err, warn;
  if (comm->me == 0) {
    const bigint natoms = static_cast<bigint>(all.size() / W);
    std::vector<bigint> order(natoms);
    for (bigint k = 0; k < natoms; ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](bigint a, bigint b) { return all[W * a] < all[W * b]; });
    nep::TrainingFrame fr;
    fr.species.resize(natoms);
    fr.pos.resize(3 * natoms);
    fr.forces.resize(3 * natoms);
    bool finite = std::isfinite(tot[0]);
    std::vector<int> types(natoms);
    for (bigint k = 0; k < natoms; ++k) {
      const double *m = &all[W * order[k]];
      types[k] = static_cast<int>(m[1]);
      fr.species[k] = type_elements[types[k] - 1];
      for (int d = 0; d < 3; ++d) {
        fr.pos[3 * k + d] = m[2 + d];
        fr.forces[3 * k + d] = m[5 + d];
        finite = finite && std::isfinite(m[2 + d]) && std::isfinite(m[5 + d]);
      }
    }
    const double h[9] = {domain->xprd, 0, 0, domain->xy, domain->yprd, 0, domain->xz, domain->yz, domain->zprd};
    std::copy(h, h + 9, fr.cell);
    fr.pbc[0] = domain->xperiodic;
    fr.pbc[1] = domain->yperiodic;
    fr.pbc[2] = domain->zperiodic;
    fr.has_energy = fr.has_forces = fr.has_virial = true;
    fr.energy = tot[0];
    // LAMMPS order xx yy zz xy xz yz -> row-major 3x3 (symmetric)
    const int map9[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};
    for (int c = 0; c < 9; ++c) {
      fr.virial[c] = tot[1 + map9[c]];
      finite = finite && std::isfinite(fr.virial[c]);
    }
    bool keep = true;
    double fbig = 0.0;    // largest teacher force component
    for (double v : fr.forces) fbig = std::max(fbig, std::fabs(v));
    if (!finite) {
      keep = false;
      ++rejected;
      warn = fmt::format("fix nep/train: step {}: the teacher gave non-finite energy, virial, forces or positions; "
                         "frame rejected (nothing else changed)", update->ntimestep);
    } else if (active_frame && fbig > act->fmax) {
      keep = false;    // an exploded structure: its labels would teach the model nothing it can use
      ++rejected;
      ++act->exploded;
      warn = fmt::format("fix nep/train: step {}: a teacher force of {:.3g} eV/Angstrom exceeds fmax {:.3g}; frame "
                         "not buffered", update->ntimestep, fbig, act->fmax);
    }
    if (finite && impl->calc) {
      // the current model on a frame it has never seen: honest error, and the selection rule
      try {
        nep::Structure s;
        s.type.resize(natoms);
        for (bigint k = 0; k < natoms; ++k) s.type[k] = impl->model_type[types[k]];
        s.x = fr.pos;
        std::copy(fr.cell, fr.cell + 9, s.cell.h);
        for (int d = 0; d < 3; ++d) s.cell.pbc[d] = fr.pbc[d];
        const nep::Prediction p = impl->calc->compute(s, false);
        double se = 0.0;
        for (bigint k = 0; k < 3 * natoms; ++k) se += (p.force[k] - fr.forces[k]) * (p.force[k] - fr.forces[k]);
        for (bigint k = 0; k < natoms; ++k) {
          double e2 = 0.0;
          for (int d = 0; d < 3; ++d) e2 += std::pow(p.force[3 * k + d] - fr.forces[3 * k + d], 2);
          max_err = std::max(max_err, std::sqrt(e2));
        }
        frame_se = se;
        fresh_se += se;
        fresh_n += 3 * natoms;
        if (keep && select_threshold >= 0.0 && std::sqrt(se / (3.0 * natoms)) <= select_threshold) {
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
      } catch (std::exception &e) {
        err = e.what();
      }
    }
    st[0] = static_cast<double>(frames);
    st[1] = static_cast<double>(rejected);
    st[2] = fresh_se;
    st[3] = static_cast<double>(fresh_n);
    st[4] = keep && err.empty() ? 1.0 : 0.0;
    st[5] = max_err;
    st[6] = natoms > 0 ? std::sqrt(frame_se / (3.0 * natoms)) : 0.0;
  }
  err = nep_bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "fix nep/train: step {}: {}", update->ntimestep, err);
  if (comm->me == 0 && !warn.empty()) error->warning(FLERR, warn);
  MPI_Bcast(st, 7, MPI_DOUBLE, 0, world);
  frames = static_cast<bigint>(st[0]);
  rejected = static_cast<bigint>(st[1]);
  fresh_se = st[2];
  fresh_n = static_cast<bigint>(st[3]);
  if (act) MPI_Bcast(&act->exploded, 1, MPI_LMP_BIGINT, 0, world);
  FrameOutcome out;
  out.kept = st[4] != 0.0;
  out.max_err = st[5];
  out.rmse = st[6];
  return out;
}

void FixNEPTrain::end_of_step()
{
  if (act) {
    active_end_of_step();
    return;
  }
  if (sampled_now) {
    sampled_now = false;
    if (frames >= next_round_at) {
      if (round_running) adopt_round();
      start_round();
      next_round_at = frames + train_every;
    }
  }
  schedule_next_sample();
}

void FixNEPTrain::post_run()
{
  if (round_running) adopt_round();    // finish the round in flight: the model is written now
}

double FixNEPTrain::compute_vector(int i)
{
  switch (i) {
    case 0: return static_cast<double>(frames);
    case 1: return rounds;
    case 2: return metrics[0];    // train force RMSE of the latest model, meV/A
    case 3: return metrics[1];    // held-out force RMSE, meV/A
    case 4: return metrics[2];    // held-out energy RMSE, meV/atom
    case 5: return fresh_n > 0 ? 1e3 * std::sqrt(fresh_se / fresh_n) : 0.0;    // never-seen frames, meV/A
    case 6: return static_cast<double>(rejected);
    default: return act ? active_vector(i) : 0.0;
  }
}

/* ---- reverse comm of the teacher's ghost forces (newton on) ---- */

// reverse_width 3: the teacher's forces (fcopy); 3M: the committee's forces (one block per model)
int FixNEPTrain::pack_reverse_comm(int n, int first, double *buf)
{
  int m = 0;
  for (int i = first; i < first + n; ++i) {
    if (reverse_width == 3) {
      for (int d = 0; d < 3; ++d) buf[m++] = fcopy[3 * static_cast<size_t>(i) + d];
    } else {
      for (auto &fm : act->cforce)
        for (int d = 0; d < 3; ++d) buf[m++] = fm[3 * static_cast<size_t>(i) + d];
    }
  }
  return m;
}

void FixNEPTrain::unpack_reverse_comm(int n, int *list, double *buf)
{
  int m = 0;
  for (int k = 0; k < n; ++k) {
    const size_t j = static_cast<size_t>(list[k]);
    if (reverse_width == 3) {
      for (int d = 0; d < 3; ++d) fcopy[3 * j + d] += buf[m++];
    } else {
      for (auto &fm : act->cforce)
        for (int d = 0; d < 3; ++d) fm[3 * j + d] += buf[m++];
    }
  }
}

double FixNEPTrain::memory_usage()
{
  double bytes = fcopy.capacity() * sizeof(double) + model_text.capacity();
  if (act) {
    for (const auto &fm : act->cforce) bytes += fm.capacity() * sizeof(double);
    bytes += (act->fbackup.capacity() + act->sigma.capacity()) * sizeof(double);
    for (const auto &c : act->cores) bytes += c->memory_bytes();
  }
  if (impl->buffer) {
    for (const auto *set : {&impl->buffer->train(), &impl->buffer->heldout()})
      for (const auto &fr : *set) bytes += fr.pos.capacity() * 2 * sizeof(double) + fr.species.size() * 32.0;
  }
  return bytes;
}

// The entry point of nepplugin_train.so: nepplugin.so registers fix nep/train and loads this
// library (and with it LibTorch and HDF5) only when a deck first defines the fix (nepplugin.cpp).
extern "C" Fix *nep_fix_train_create(LAMMPS *lmp, int narg, char **arg)
{
  return new FixNEPTrain(lmp, narg, arg);
}
