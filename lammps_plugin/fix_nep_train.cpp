/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train — on-the-fly NEP training (docs/fix_nep_train.rst)

   Step cycle on a sampling step (ntimestep % every == 0, never in setup):
     pre_reverse  teacher forces of this step (all force styles, before fixes add theirs in
                  post_force), ghost parts folded onto owners by our own reverse comm; energy and
                  virial of the pair (+ kspace) style summed over ranks; atoms gathered to rank 0
                  in tag order; rank 0 checks, selects and appends the frame to the buffer.
     end_of_step  round bookkeeping: when a round is due (opt->every `opt->train_every` buffered frames)
                  the running one is joined and adopted (model written, optionally deployed),
                  then the next starts on a snapshot of the buffer's reservoirs.
   Rounds run on a background thread on rank 0 that never calls MPI; all collective work
   happens here on the main thread. A round's model is adopted only when the next round is due
   or at the end of a run, so the trajectory and the model bytes never depend on timing.
   This file: set-up, the step cycle and thermo output. Keywords and nep.in:
   fix_nep_train_args.cpp (the table: fix_nep_train_settings.cpp); labelled frames (gather, score,
   buffer): fix_nep_train_frames.cpp; rounds: fix_nep_train_rounds.cpp; restart files:
   fix_nep_train_restart.cpp (encoding: fix_nep_train_state.cpp); mode active:
   fix_nep_train_active.cpp (the policy: nep::ActiveController in the trainer library).
------------------------------------------------------------------------- */

#include "fix_nep_train.h"
#include "fix_nep_train_settings.h"

#include "atom.h"
#include "atom_masks.h"
#include "comm.h"
#include "compute.h"
#include "error.h"
#include "force.h"
#include "kspace.h"
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


/* ---------------------------------------------------------------------- */

FixNEPTrain::FixNEPTrain(LAMMPS *lmp, int narg, char **arg) : Fix(lmp, narg, arg), impl(new Impl)
{
  created_at = MPI_Wtime();
  parse_args(narg, arg);
  read_nep_in();
  if (atom->tag_enable == 0) error->all(FLERR, "fix nep/train needs atom IDs");

  // threads: the training thread shares the cores with MD; spinning OpenMP workers starve it
  if (comm->me == 0) {
    const char *wp = getenv("OMP_WAIT_POLICY");
    const bool passive = wp && strcasecmp(wp, "passive") == 0;
    if (!passive && (comm->nthreads > 1 || lmp->kokkos || opt->threads > 1))
      error->warning(FLERR, "fix nep/train: OMP_WAIT_POLICY is not 'passive': spin-waiting OpenMP threads can slow "
                            "MD and training many times over on a shared core (export OMP_WAIT_POLICY=passive)");
  }
  nep::ensure_kokkos_initialized();

  vector_flag = 1;
  size_vector = act ? 18 : 7;
  global_freq = 1;
  extvector = 0;
  restart_global = 1;
  nevery = opt->every;
  comm_reverse = act ? 3 * std::max(1, act->members) : 3;
  if (act) {    // per-atom committee deviation (eV/A), for dump: updated on check steps
    peratom_flag = 1;
    size_peratom_cols = 0;
    peratom_freq = opt->every;
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
      force->pair_match(opt->teacher, 1, 0) == act->teacher) {
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
      bo.path = opt->buffer_path;
      bo.seed = static_cast<uint64_t>(opt->seed);
      bo.capacity = opt->capacity;
      bo.heldout = opt->heldout;
      impl->buffer = std::make_unique<nep::OtfBuffer>(bo, restart_frames);
      state[0] = static_cast<double>(impl->buffer->frames());
      state[1] = static_cast<double>(impl->buffer->dropped());
      // the model rounds start from: the restart's, else `start`, else nep.in's fine_tune
      if (!model_text.empty()) {
        impl->set_model(nep::parse_model(model_text, "restart file model"), opt->type_elements);
      } else {
        std::string path = !opt->start_path.empty() ? opt->start_path : impl->cfg.fine_tune;
        if (!path.empty()) {
          impl->set_model(nep::read_model(path), opt->type_elements);
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
  err = nep_lmp::bcast_string(err, world);
  if (!err.empty()) error->all(FLERR, "fix nep/train: {}", err);
  MPI_Bcast(state, 2, MPI_DOUBLE, 0, world);
  frames = static_cast<bigint>(state[0]);
  model_text = nep_lmp::bcast_string(model_text, world);
  if (act) {    // the committee members (start model's, or the restart's) on every rank
    int n = static_cast<int>(act->member_text.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, world);
    act->member_text.resize(n);
    for (auto &t : act->member_text) t = nep_lmp::bcast_string(t, world);
  }
  if (comm->me == 0) {
    if (state[1] > 0)
      error->warning(FLERR, "fix nep/train: dropped {} frames of {} written after the restart point (they will be "
                     "sampled again)", static_cast<bigint>(state[1]), opt->buffer_path);
    utils::logmesg(lmp, "fix nep/train: buffer {} holds {} frames; sampling every {} steps, a round every {} frames\n",
                   opt->buffer_path, frames, opt->every, opt->train_every);
    std::string els;
    for (const auto &e : opt->type_elements) els += (els.empty() ? "\"" : ",\"") + e + "\"";
    history_event(fmt::format("\"event\":\"start\",\"step\":{},\"natoms\":{},\"elements\":[{}],\"buffer\":\"{}\","
                              "\"model\":\"{}\",\"input\":\"{}\",\"seed\":{},\"every\":{},\"train_every\":{},"
                              "\"frames\":{},\"rounds\":{}",
                              update->ntimestep, atom->natoms, els, nep_lmp::json_escape(opt->buffer_path),
                              nep_lmp::json_escape(opt->model_path), nep_lmp::json_escape(opt->input_path), opt->seed, opt->every,
                              opt->train_every, frames, rounds) +
                  (opt->active ? fmt::format(",\"deviation\":\"{}\"", opt->act.rms ? "rms" : "max") : std::string()));
  }
  if (restart_frames < 0) next_round_at = std::max<bigint>(opt->train_every, 1);
  if (act && !act->have_committee() && !model_text.empty()) {
    adopt_committee(act->member_text);    // from the restart file, or the start model's files
    deploy_model();                       // the student continues with the model it had
  }
  // a new run (not a restart) starts with the student driving only if a committee exists already
  if (act && restart_frames < 0) act->ctl.begin_fresh_run(act->have_committee());
  if (restart_round_running) {    // the round in flight when the restart was written: run it again
    restart_round_running = false;
    start_round();
  }
  // mode active: the compute flags of the sub-styles before the run's first force call (setup)
  if (act) active_setup();
}

// fix_modify ID final_round E [stages S]: the final round of the runs from now on (e.g. only before
// the last run); stages S as the keyword final_stages
int FixNEPTrain::modify_param(int narg, char **arg)
{
  if (strcmp(arg[0], "final_round") != 0) return 0;
  if (narg < 2) error->all(FLERR, "fix_modify {} final_round needs E (epochs; 0: none)", id);
  const int e = utils::inumeric(FLERR, arg[1], false, lmp);
  if (e < 0) error->all(FLERR, "fix_modify {} final_round E needs E >= 0, not {}", id, e);
  opt->final_epochs = e;
  if (narg >= 4 && strcmp(arg[2], "stages") == 0) {
    const int s = utils::inumeric(FLERR, arg[3], false, lmp);
    if (s < 0 || s > 1000) error->all(FLERR, "fix_modify {} final_round E stages S needs 0 <= S <= 1000, not {}", id, s);
    opt->final_stages = s;
    return 4;
  }
  return 2;
}

void FixNEPTrain::setup(int)
{
  if (act) active_after_setup();
  schedule_next_sample();
}

void FixNEPTrain::request_tally(bigint step)
{
  c_pe->addstep(step);
  c_press->addstep(step);
}

void FixNEPTrain::schedule_next_sample()
{
  next_sample = (update->ntimestep / opt->every + 1) * opt->every;
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
      next_round_at = frames + opt->train_every;
    }
  }
  schedule_next_sample();
}

void FixNEPTrain::post_run()
{
  if (round_running) adopt_round();    // finish the round in flight: the model is written now
  if (opt->final_epochs > 0 && frames > 0) {    // final_round E: one more, waited for, inside the run
    start_round(opt->final_epochs);
    if (round_running) {
      final_round_running = true;
      if (act) act->ctl.round_started(update->ntimestep, frames);
      adopt_round();
    }
  }
  if (act && comm->me == 0) {
    const nep::ActiveController &ctl = act->ctl;
    double lo = 0.0, hi = 1.0;
    ctl.miss_rate_interval(lo, hi);
    utils::logmesg(lmp, "fix nep/train: {} teacher evaluations; {} audits of trusted steps, {} misses (rate 95 % "
                   "interval [{:.3f}, {:.3f}]); calibration factor {:.4g} from {} audited frames\n",
                   ctl.teacher_evaluations(), ctl.audits(), ctl.audit_misses(), lo, hi, ctl.calibration_factor(),
                   ctl.calibration().size());
  }
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
