/* ----------------------------------------------------------------------
   lammps-nep: fix nep/train mode active (docs/fix_nep_train.rst, "Mode active")

   pair_style hybrid/overlay holds the student (a nep sub-style, the latest model) and the teacher
   (any other sub-style). This fix owns both sub-styles' compute flags: the one that drives is
   computed by pair hybrid as usual, the other is not.

   Check step (every N steps, energy and virial tallied), in pre_reverse:
     a committee (the driving model + M-1 members, each on this fix's full neighbour list, ghost
     forces folded) gives the per-atom force deviation sigma_i and its max over atoms sigma;
     student driving: sigma >= hi -> the teacher is computed and its forces replace the student's
                      for this step; it drives from the next step
                      lo <= sigma < hi -> the teacher is computed (labels), the student's forces
                      stay; a seeded audit draw, whatever the deviation, calls the teacher
                      on some steps: only those frames calibrate the deviation
     teacher driving: its forces are LAMMPS's already; the frame is labelled; the student takes
                      over again once a round adopted after the handover brings sigma below lo
                      on a check step (positions the new models were not trained on).
   The budget caps teacher evaluations whatever drives: spent while the teacher drives, the student
   drives from the next step (budget_check).
   Every teacher frame is buffered (unless exploded: a force above fmax) and pairs the committee's
   prediction with the student's true error (calibration). Rounds: a round starts when train_every
   frames arrived since the last one started (first_round while the teacher drives), and is adopted
   (MD waiting if needed) adopt_after steps later (0: at once): fixed points, so the run does not
   depend on timing.
------------------------------------------------------------------------- */

#include "fix_nep_train_impl.h"

#include "atom.h"
#include "comm.h"
#include "error.h"
#include "force.h"
#include "kspace.h"
#include "memory.h"
#include "neigh_list.h"
#include "pair.h"
#include "pair_hybrid.h"
#include "update.h"
#include "utils.h"

#include "nep/timing.hpp"
#include "nep_lammps_compat.h"
#include "nep_plugin_common.h"
#include "pair_nep.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace LAMMPS_NS;

namespace {
// pair hybrid's sub-styles (protected members, stable from 29Sep2021 to 4Jul2026), read through
// pointers to members formed in a derived class
struct HybridSubStyles : PairHybrid {
  static int count(PairHybrid *h) { return h->*(&HybridSubStyles::nstyles); }
  static Pair *style(PairHybrid *h, int k) { return (h->*(&HybridSubStyles::styles))[k]; }
  static const char *keyword(PairHybrid *h, int k) { return (h->*(&HybridSubStyles::keywords))[k]; }
};
}    // namespace

void FixNEPTrain::active_init()
{
  if (lmp->kokkos)
    error->all(FLERR, "fix nep/train mode active does not support the KOKKOS package yet: run without -k on "
                      "(pair styles nep or nep/gpu evaluate on the host then)");
  if (force->kspace)
    error->all(FLERR, "fix nep/train mode active: the teacher must be the only force (no kspace style)");
  if (atom->molecular != Atom::ATOMIC)
    error->all(FLERR, "fix nep/train mode active: the teacher must be the only force (no bonds)");
  if (strncmp(force->pair_style, "hybrid", 6) != 0)
    error->all(FLERR, "fix nep/train mode active needs pair_style hybrid/overlay with the nep student and the "
                      "teacher '{}' as sub-styles (pair_style is {})", opt->teacher, force->pair_style);
  act->teacher = force->pair_match(opt->teacher, 1, 0);
  if (!act->teacher)
    error->all(FLERR, "fix nep/train: teacher '{}' is not a sub-style of pair_style {} (give it once)",
               opt->teacher, force->pair_style);
  act->student = nullptr;
  for (int nsub = 1;; ++nsub) {
    Pair *p = force->pair_match("^nep", 0, nsub);
    if (!p) break;
    auto *pn = dynamic_cast<PairNEP *>(p);
    if (!pn || pn == act->student) break;
    if (act->student)
      error->all(FLERR, "fix nep/train mode active: pair_style {} has more than one nep sub-style", force->pair_style);
    act->student = pn;
  }
  if (!act->student)
    error->all(FLERR, "fix nep/train mode active: no nep sub-style (the student) in pair_style {}", force->pair_style);
  if (act->student == act->teacher) error->all(FLERR, "fix nep/train: the teacher cannot be the nep student");
  // any third sub-style would add its forces to the MD but not to the teacher's labels
  auto *hybrid = dynamic_cast<PairHybrid *>(force->pair);
  for (int k = 0; hybrid && k < HybridSubStyles::count(hybrid); ++k) {
    Pair *p = HybridSubStyles::style(hybrid, k);
    if (p != act->teacher && p != act->student)
      error->all(FLERR, "fix nep/train mode active: pair_style {} has the sub-style {} besides the nep student and "
                 "the teacher '{}': its forces would enter the MD but not the labels. Give one teacher sub-style, "
                 "or train in mode passive on the whole pair style", force->pair_style,
                 HybridSubStyles::keyword(hybrid, k), opt->teacher);
  }
  nep_lmp::request_full_list(lmp, this, instance_me);
}

void FixNEPTrain::init_list(int, NeighList *ptr)
{
  if (act) act->list = ptr;
}

// the driving sub-style is computed by pair hybrid, the other one not
void FixNEPTrain::set_driver(bool teacher)
{
  act->teacher->compute_flag = teacher ? 1 : 0;
  act->student->compute_flag = teacher ? 0 : 1;
}

// in init(), before the run's setup computes forces: who drives from the first force call
void FixNEPTrain::active_setup()
{
  bool teacher = true;
  try {
    teacher = act->ctl.setup_driver(act->have_committee(), !model_text.empty());
  } catch (std::exception &e) {
    error->all(FLERR, "fix nep/train: {}", e.what());
  }
  set_driver(teacher);
  // the per-atom deviation (dump, compute reduce) reads 0 until a check step with a committee
  act->sigma.assign(std::max(atom->nmax, 1), 0.0);
  vector_atom = act->sigma.data();
}

// All models of the committee on this rank, from the driving model's text and the members'
void FixNEPTrain::adopt_committee(const std::vector<std::string> &members)
{
  act->cores.clear();
  act->member_text = members;
  if (model_text.empty() || static_cast<int>(members.size()) != act->members - 1) return;
  std::string err;
  try {
    std::vector<nep::Model> models{nep::parse_model(model_text, opt->model_path)};
    for (size_t k = 0; k < members.size(); ++k)
      models.push_back(nep::parse_model(members[k], fmt::format("{}.member{}", opt->model_path, k + 1)));
    act->type_map.assign(atom->ntypes + 1, -1);
    for (int t = 1; t <= atom->ntypes; ++t)
      for (int k = 0; k < models[0].num_types(); ++k)
        if (models[0].elements[k] == opt->type_elements[t - 1]) act->type_map[t] = k;
    for (const auto &m : models) act->cores.push_back(std::make_unique<nep::HostCore>(m, false));
  } catch (std::exception &e) {
    err = e.what();
  }
  if (!err.empty()) error->one(FLERR, "fix nep/train: cannot set up the committee: {}", err);
}

// sigma_i of every owned atom into act->sigma (the fix's per-atom vector); returns max_i sigma_i
// over all ranks, or with `deviation rms` sqrt(sum_i sigma_i^2 / N) over all N atoms
double FixNEPTrain::committee_deviation()
{
  nep::ScopedStage stage("otf_committee");    // NEP_TIMING=1: per-stage times at exit
  const int nlocal = atom->nlocal, nall = nlocal + atom->nghost, M = act->members;
  if (!act->list) error->all(FLERR, "fix nep/train: no neighbour list for the committee");
  act->atom_type.resize(nall);
  for (int i = 0; i < nall; ++i) act->atom_type[i] = act->type_map[atom->type[i]];
  act->cforce.resize(M);
  std::string err;
  try {
    for (int m = 0; m < M; ++m) {
      act->cforce[m].assign(3 * static_cast<size_t>(nall), 0.0);
      act->cores[m]->compute(act->list->inum, act->list->ilist, nall, &atom->x[0][0], act->atom_type.data(),
                             act->list->numneigh, act->list->firstneigh, act->cforce[m].data(), nullptr, nullptr);
    }
  } catch (std::exception &e) {
    err = e.what();
  }
  if (!err.empty()) nep_lmp::error_one(lmp, FLERR, "fix nep/train: committee evaluation failed: " + err);
  // reaction forces on ghosts (full list) belong to their owners, newton on or off
  reverse_width = 3 * M;
  nep_lmp::reverse_comm_fix(lmp, this, 3 * M);
  reverse_width = 3;
  std::vector<const double *> fm(M);
  for (int m = 0; m < M; ++m) fm[m] = act->cforce[m].data();
  act->sigma.resize(std::max(atom->nmax, 1));
  nep::force_deviation(fm, nlocal, act->sigma.data());
  vector_atom = act->sigma.data();
  if (act->ctl.settings().rms) {
    double mine = 0.0, all = 0.0;
    for (int i = 0; i < nlocal; ++i) mine += act->sigma[i] * act->sigma[i];
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, world);
    return atom->natoms > 0 ? std::sqrt(all / static_cast<double>(atom->natoms)) : 0.0;
  }
  double mine = 0.0, all = 0.0;
  for (int i = 0; i < nlocal; ++i) mine = std::max(mine, act->sigma[i]);
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, world);
  return all;
}

// The driving model's error on this step's teacher forces (fcopy), from the committee's forces of
// the driving model (cforce[0], owned atoms complete): {sum over atoms and components of the
// squared error, max over atoms of |F_model - F_teacher|, atoms scored}, reduced over ranks. Each
// rank scores its own atoms: the whole frame is never evaluated again on one rank. With the
// teacher computed near the carved centres only (carve_cut), the atoms within CORE of a centre,
// whose teacher forces are exact.
void FixNEPTrain::student_error(double out[3])
{
  nep::ScopedStage stage("otf_student_error");
  const int nlocal = atom->nlocal;
  const std::vector<double> &fm = act->cforce[0];
  const std::vector<char> core = carve_cut ? atoms_near_centres(opt->carve_core) : std::vector<char>();
  double se = 0.0, mx = 0.0, n = 0.0;
  for (int i = 0; i < nlocal; ++i) {
    if (carve_cut && !core[i]) continue;
    double e2 = 0.0;
    for (int d = 0; d < 3; ++d) e2 += (fm[3 * i + d] - fcopy[3 * i + d]) * (fm[3 * i + d] - fcopy[3 * i + d]);
    se += e2;
    mx = std::max(mx, std::sqrt(e2));
    n += 1.0;
  }
  MPI_Allreduce(&se, &out[0], 1, MPI_DOUBLE, MPI_SUM, world);
  MPI_Allreduce(&mx, &out[1], 1, MPI_DOUBLE, MPI_MAX, world);
  MPI_Allreduce(&n, &out[2], 1, MPI_DOUBLE, MPI_SUM, world);
}

// The teacher's forces, energy and virial for this step, into fcopy (ghosts folded) and `ev`.
// keep_forces: they replace the student's in LAMMPS (this step is teacher-driven); else the
// student's forces are restored. A teacher that can fail without stopping the run (pair_style
// ipi: its "ipi_soft" flag) does so here: false, and the student's forces stay.
bool FixNEPTrain::call_teacher(int eflag, int vflag, bool keep_forces)
{
  nep::ScopedStage stage("otf_teacher");
  carve_cut = false;
  carve_pre.clear();
  const int nall = atom->nlocal + atom->nghost;
  double **f = atom->f;
  act->fbackup.resize(3 * static_cast<size_t>(nall));
  for (int i = 0; i < nall; ++i)
    for (int d = 0; d < 3; ++d) {
      act->fbackup[3 * i + d] = f[i][d];
      f[i][d] = 0.0;
    }
  int dim = 0;
  int *failed = static_cast<int *>(act->teacher->extract("ipi_failed", dim));
  {
    // soft while this call lasts, also if it throws (LAMMPS errors are exceptions in library use)
    struct Soft {
      int *flag;
      explicit Soft(int *f) : flag(f) { if (flag) *flag = 1; }
      ~Soft() { if (flag) *flag = 0; }
    } soft(static_cast<int *>(act->teacher->extract("ipi_soft", dim)));
    // carve CORE K, the student driving: the teacher's list cut to the regions' atoms while it
    // computes (restored also if it throws); its energy and virial are then partial, and unused
    struct ListCut {
      NeighList *list = nullptr;
      int inum = 0;
      int *ilist = nullptr;
      ~ListCut() {
        if (list) {
          list->inum = inum;
          list->ilist = ilist;
        }
      }
    } cut;
    std::vector<int> sub;
    if (!keep_forces && carve_teacher_plan()) {
      NeighList *l = act->teacher->list;
      const std::vector<char> near = atoms_near_centres(opt->carve_core + teacher_cutoff());
      for (int ii = 0; ii < l->inum; ++ii)
        if (l->ilist[ii] < atom->nlocal && near[l->ilist[ii]]) sub.push_back(l->ilist[ii]);
      cut.list = l;
      cut.inum = l->inum;
      cut.ilist = l->ilist;
      l->inum = static_cast<int>(sub.size());
      l->ilist = sub.data();
    }
    act->teacher->compute(eflag, vflag);    // its own tallies (ev_init), virial by fdotr on its forces alone
  }
  const bool ok = !(failed && *failed);
  if (ok) copy_forces();
  if (ok && keep_forces) {    // this step's energy and virial are the teacher's too
    Pair *pair = force->pair;
    pair->eng_vdwl = act->teacher->eng_vdwl;
    pair->eng_coul = act->teacher->eng_coul;
    for (int c = 0; c < 6; ++c) pair->virial[c] = act->teacher->virial[c];
    if (pair->eflag_atom && pair->eatom && act->teacher->eatom)
      for (int i = 0; i < nall; ++i) pair->eatom[i] = act->teacher->eatom[i];
    if (pair->vflag_atom && pair->vatom && act->teacher->vatom)
      for (int i = 0; i < nall; ++i)
        for (int c = 0; c < 6; ++c) pair->vatom[i][c] = act->teacher->vatom[i][c];
    if (pair->cvflag_atom && pair->cvatom && act->teacher->cvatom)
      for (int i = 0; i < nall; ++i)
        for (int c = 0; c < 9; ++c) pair->cvatom[i][c] = act->teacher->cvatom[i][c];
  } else {
    for (int i = 0; i < nall; ++i)
      for (int d = 0; d < 3; ++d) f[i][d] = act->fbackup[3 * i + d];
  }
  return ok;
}

void FixNEPTrain::active_pre_reverse(int eflag, int vflag)
{
  nep::ActiveController &ctl = act->ctl;
  const bigint step = update->ntimestep;
  ctl.count_step();
  if (step != next_sample) {
    if (ctl.probe_due(step, act->have_committee())) active_probe(step);
    budget_check(step);
    return;
  }
  if (update->eflag_global != step || update->vflag_global != step)
    error->all(FLERR, "fix nep/train: energy and virial were not tallied on step {} (a fix or run option "
               "suppressed them)", step);
  const bool committee = act->have_committee();
  if (!committee) {    // no committee yet: per-atom deviation 0 (the vector stays valid for dumps)
    act->sigma.assign(std::max(atom->nmax, 1), 0.0);
    vector_atom = act->sigma.data();
  }
  const double sigma = committee ? committee_deviation() : 0.0;
  const nep::CheckPlan plan = ctl.plan_check(step, sigma, committee, rounds);
  if (plan.warn_budget && comm->me == 0)
    error->warning(FLERR, "fix nep/train: step {}: the teacher budget ({} evaluations) is spent; the student keeps "
                   "driving although the deviation {:.3g} exceeds the upper threshold", step, ctl.settings().budget,
                   plan.deviation);
  if (plan.reason == nep::TeacherReason::Driving) copy_forces();    // the teacher's own forces, this step's driver
  const bool failed = plan.compute_teacher && !call_teacher(eflag, vflag, plan.teacher_forces);
  const bool teacher_drove = plan.teacher_drove && !(failed && plan.teacher_forces);
  if (failed) {
    ctl.record_teacher_failure(plan);    // no labels; the student's forces stay; a take-over is called off
    if (comm->me == 0)
      history_event(fmt::format("\"event\":\"teacher_failed\",\"step\":{},\"reason\":\"{}\",\"max_dev_eV_per_A\":{:.9g},"
                                "\"teacher_failures\":{}", step, nep::reason_name(plan.reason), sigma,
                                ctl.teacher_failures()));
  } else if (plan.reason != nep::TeacherReason::None) {
    const Pair *src = plan.compute_teacher ? act->teacher : force->pair;
    double ev[7] = {src->eng_vdwl + src->eng_coul, 0, 0, 0, 0, 0, 0};
    for (int c = 0; c < 6; ++c) ev[1 + c] = src->virial[c];
    double scored[3] = {0.0, 0.0, 0.0};
    if (committee) student_error(scored);
    const FrameOutcome out = take_frame(ev, true, committee ? scored : nullptr);
    ctl.record_label(plan, committee, sigma, ctl.settings().rms ? out.rmse : out.max_err);
    if (comm->me == 0)
      history_event(fmt::format("\"event\":\"teacher\",\"step\":{},\"reason\":\"{}\",\"max_dev_eV_per_A\":{:.9g},"
                                "\"true_max_err_eV_per_A\":{:.9g},\"true_rmse_f_eV_per_A\":{:.9g},\"kept\":{},"
                                "\"driver\":\"{}\",\"teacher_evaluations\":{},\"audited\":{},"
                                "\"calibration_factor\":{:.9g}",
                                step, nep::reason_name(plan.reason), sigma, out.max_err, out.rmse,
                                out.kept ? "true" : "false", plan.teacher_drove ? "teacher" : "student",
                                ctl.teacher_evaluations(), plan.audited ? "true" : "false", ctl.calibration_factor()) +
                    carved_json());
    if (out.kept) sampled_now = true;
  }
  if (comm->me == 0 && committee)
    history_event(fmt::format("\"event\":\"check\",\"step\":{},\"max_dev_eV_per_A\":{:.9g},\"driver\":\"{}\"", step,
                              sigma, teacher_drove ? "teacher" : "student") +
                  (ctl.reference() > 0.0 ? fmt::format(",\"grade\":{:.9g}", sigma / ctl.reference()) : ""));
  budget_check(step);
}

// probe P: the committee on a step between check steps while the teacher drives; trusted, the
// student drives from the next step (nothing is labelled: the teacher's forces drove this step)
void FixNEPTrain::active_probe(bigint step)
{
  const double sigma = committee_deviation();
  act->ctl.probe_handback(sigma, true, rounds);
  if (comm->me == 0)
    history_event(fmt::format("\"event\":\"probe\",\"step\":{},\"max_dev_eV_per_A\":{:.9g}", step, sigma));
  active_handover(step);
}

// ,"carved_centres":[IDs] of the last teacher call's regions (carve CORE K), else nothing
std::string FixNEPTrain::carved_json() const
{
  if (carved_centres.empty()) return "";
  std::string s = ",\"carved_centres\":[";
  for (size_t k = 0; k < carved_centres.size(); ++k) s += (k ? "," : "") + std::to_string(carved_centres[k]);
  return s + "]";
}

// The teacher sub-style's largest cutoff over the type pairs it was given (hybrid sets its cutsq)
double FixNEPTrain::teacher_cutoff() const
{
  double c2 = 0.0;
  for (int i = 1; i <= atom->ntypes; ++i)
    for (int j = i; j <= atom->ntypes; ++j)
      if (act->teacher->setflag && (act->teacher->setflag[i][j] || act->teacher->setflag[j][i]))
        c2 = std::max(c2, act->teacher->cutsq[i][j]);
  return std::sqrt(c2);
}

// The budget is a hard cap: spent while the teacher drives, the student drives from the next force
// call (a clear error if it has no model yet)
void FixNEPTrain::budget_check(bigint step)
{
  nep::ActiveController &ctl = act->ctl;
  bool hand_back = false;
  try {
    hand_back = ctl.budget_hand_back(!model_text.empty());
  } catch (std::exception &e) {
    error->all(FLERR, "fix nep/train: step {}: {}", step, e.what());
  }
  if (!hand_back) return;
  set_driver(false);
  if (comm->me == 0) {
    utils::logmesg(lmp, "fix nep/train: step {}: the teacher budget ({} evaluations) is spent: the student drives "
                   "from the next step\n", step, ctl.settings().budget);
    history_event(fmt::format("\"event\":\"handover\",\"step\":{},\"to\":\"student\",\"reason\":\"budget\","
                              "\"max_dev_eV_per_A\":{:.9g}", step, ctl.last_deviation()));
  }
}

// after the run's setup force call (the driver computed it: a teacher evaluation if the teacher)
void FixNEPTrain::active_after_setup()
{
  act->ctl.count_setup_evaluation();
  budget_check(update->ntimestep);
}

// the hand-over the controller planned on this step, if any: the driver flips from the next step
void FixNEPTrain::active_handover(bigint step)
{
  nep::ActiveController &ctl = act->ctl;
  if (!ctl.take_handover(step, round_running)) return;
  set_driver(ctl.teacher_drives());
  if (comm->me == 0) {
    utils::logmesg(lmp, "fix nep/train: step {}: the {} drives from the next step (deviation {:.4g} eV/A)\n",
                   step, ctl.teacher_drives() ? "teacher" : "student", ctl.last_deviation());
    history_event(fmt::format("\"event\":\"handover\",\"step\":{},\"to\":\"{}\",\"max_dev_eV_per_A\":{:.9g}", step,
                              ctl.teacher_drives() ? "teacher" : "student", ctl.last_deviation()));
  }
}

// A round due now is adopted (the MD waits for it if it is not done). The student takes over again
// only on a later check step: trust is measured on positions the new models were not trained on
// (on the take-over's own positions a committee that just fitted them agrees whatever it learnt).
void FixNEPTrain::active_adopt(bigint step)
{
  if (act->ctl.adoption_due(step, round_running)) adopt_round();
}

void FixNEPTrain::active_end_of_step()
{
  nep::ActiveController &ctl = act->ctl;
  const bigint step = update->ntimestep;
  active_handover(step);
  sampled_now = false;
  active_adopt(step);
  if (ctl.round_due(frames, round_running)) {
    start_round();
    if (round_running) ctl.round_started(step, frames);
    active_adopt(step);    // adopt_after 0: on the step it started, the MD waiting for it
  }
  schedule_next_sample();
}

double FixNEPTrain::active_vector(int i) const
{
  const nep::ActiveController &ctl = act->ctl;
  switch (i) {
    case 7: return static_cast<double>(ctl.teacher_evaluations());
    case 8: return ctl.teacher_step_fraction();
    case 9: return ctl.last_deviation();
    case 10: return ctl.teacher_drives() ? 1.0 : 0.0;
    case 11: return static_cast<double>(ctl.audit_misses());
    case 12: return ctl.calibration_factor();
    case 13: return static_cast<double>(ctl.audits());
    case 14: return static_cast<double>(ctl.teacher_failures());
    case 15:
    case 16: {    // the audit miss rate's 95 % Wilson interval
      double lo = 0.0, hi = 1.0;
      ctl.miss_rate_interval(lo, hi);
      return i == 15 ? lo : hi;
    }
    case 17: return static_cast<double>(ctl.calibration().size());
    default: return 0.0;
  }
}
