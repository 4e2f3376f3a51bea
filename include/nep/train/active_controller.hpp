// The active-learning policy of fix nep/train mode active, free of LAMMPS and MPI
// (docs/fix_nep_train.rst, "Mode active"). It owns the thresholds, gap, budget, audits,
// calibration, who drives the MD and every counter, and decides on each check step what happens;
// the fix does what only LAMMPS can (evaluate the committee and the teacher, gather atoms, MPI,
// thermo). Every rank keeps an identical copy: each is fed the same reduced values.
//
// A check step (every `every` steps), given sigma = max over atoms of the committee's force
// deviation, or its RMS over atoms with `deviation rms` (the fix reduces it; the true error paired
// with it on audits is then the student's force RMSE), compared as sigma (eV/A), as k * sigma with
// `threshold ... true` (k the calibration factor), or as sigma / reference with `threshold ... grade`
// (no reference yet: above every threshold):
//   teacher driving:   its frame is labelled ("driving"); the student takes over again once a round
//                      adopted after the take-over brings the deviation below LO (handback H) on a
//                      check step: on positions the new models were not trained on. With probe P
//                      the committee is also evaluated every P steps between check steps (a probe:
//                      nothing labelled), and the student drives from the next step when it trusts
//                      the probe's positions: a take-over then costs as few teacher steps as the
//                      committee needs, not the rest of a check interval.
//   student driving:   deviation >= HI (budget left)            -> "upper": the teacher is computed,
//                                                                 its forces replace the student's
//                                                                 this step, it drives from the next
//                      LO <= deviation < HI (budget, gap ok)    -> "lower": teacher computed for labels
//                      deviation < LO (budget, gap ok, audit draw of (seed, Audit, step) < P)
//                                                               -> "audit": same, to measure misses
// The audit draw is made on every student-driven check step whatever the deviation: a drawn step
// (budget and gap ok) is "audited" and the teacher is called on it (as "audit" when trusted, else
// as the call its deviation asks for). Only audited frames calibrate the deviation: a sample that
// does not depend on the deviation, so the factor is not biased by the selection of calls.
// The budget is a hard cap on teacher evaluations, whatever drives: when it is spent while the
// teacher drives, the student drives from the next step (budget_hand_back).
// Rounds in mode active start when `first_round` (teacher driving) or `train_every` frames arrived
// since the last start and are adopted `adopt_after` (teacher) or `adopt_after_student` steps
// later, rounded up to a check step: fixed points, so a run never depends on timing. adopt_after 0
// (the default while the teacher drives) adopts the round on the step it started, the MD waiting
// for it: every step the teacher drives costs an evaluation, a round costs only wall time.
#pragma once
#include <cstdint>
#include <string>

#include "nep/train/otf_active.hpp"

namespace nep {

class StateRecord;

struct ActiveSettings {
  int members = 4;               // committee size M: the driving model and M-1 members
  int member_reset = 0;          // each member is re-initialised every this many rounds, staggered (0: never)
  // Deviation thresholds, eV/Angstrom; with true_units the calibrated deviation; with grade the
  // deviation over the reference (the committee's largest deviation on its own training frames, set
  // after each round: 1 is the edge of the training data, as MTP's extrapolation grade)
  double lo = 0.05, hi = 0.25;
  double handback = -1.0;        // the teacher driving: a newer model drives below this (< 0: LO)
  int64_t probe = 0;             // the teacher driving: also a hand-back check every this many steps (0: none)
  bool true_units = false;       // thresholds compare with the calibrated deviation
  bool grade = false;            // thresholds compare with deviation / reference
  // deviation rms: the deviation is the RMS over atoms of sigma_i and the student's true error its
  // force RMSE (intensive: the same threshold means the same at any box size); else the max over atoms
  bool rms = false;
  int64_t gap = 0;               // fewest steps between two teacher calls for labels or audits
  int64_t budget = -1;           // teacher evaluations allowed in all (-1: no limit)
  double audit = 0.0;            // probability of auditing a trusted check step
  int64_t adopt_after = 0;       // steps from a round's start to its adoption, teacher driving (0: at once)
  int64_t adopt_after_student = 0;  // ... student driving
  int64_t first_round = 1;       // frames per round while the teacher drives (0: train_every)
  double fmax = 20.0;            // a teacher frame with a force component above this is not buffered
};

// Why the teacher labels a check step's frame
enum class TeacherReason { None, Driving, Upper, Lower, Audit };
const char* reason_name(TeacherReason r);   // "none", "driving", "upper", "lower", "audit"

// What the fix does on a check step
struct CheckPlan {
  TeacherReason reason = TeacherReason::None;   // None: no teacher frame this step
  bool compute_teacher = false;   // the student drives: compute the teacher now
  bool teacher_forces = false;    // its forces, energy and virial replace the student's this step
  bool warn_budget = false;       // warn (once per run): budget spent, deviation above HI
  double deviation = 0.0;         // sigma as compared with the thresholds
  bool teacher_drove = false;     // the teacher drives this step (before or by this plan)
  bool audited = false;           // the audit draw picked this step: its frame calibrates
};

// Wilson score interval of a binomial proportion k/n at z standard errors (z = 1.96: 95 %);
// [0, 1] when n = 0
void wilson_interval(int64_t k, int64_t n, double z, double& lo, double& hi);

class ActiveController {
 public:
  // seed: the fix's seed (the audit stream); every: steps between check steps; train_every:
  // frames per round (passive default)
  ActiveController(const ActiveSettings& s, uint64_t seed, int64_t every, int64_t train_every);
  const ActiveSettings& settings() const { return s_; }

  // ---- set-up and every step
  // A new run (not from a restart) starts with the student driving only if a committee exists.
  void begin_fresh_run(bool committee) { teacher_drives_ = !committee; }
  // Who drives from the run's first force call: the teacher also whenever there is no committee,
  // unless the budget is spent (student_ready: budget_hand_back).
  bool setup_driver(bool committee, bool student_ready = true);
  bool teacher_drives() const { return teacher_drives_; }
  void count_step();                         // every step, before a check: counts teacher-driven steps
  // after a run's setup force call: a teacher evaluation too, if the teacher drove it
  void count_setup_evaluation() { teacher_evals_ += teacher_drives_ ? 1 : 0; }
  // every step, after the check: the budget is spent while the teacher drives. Returns true once:
  // the student drives from the next step (no hand-over pending any more); the fix must have a
  // student model for it (student_ready), else the cap cannot hold and the fix stops the run.
  bool budget_hand_back(bool student_ready);
  bool budget_spent() const { return s_.budget >= 0 && teacher_evals_ >= s_.budget; }

  // ---- a check step
  // max_deviation: the committee deviation, max over all atoms or RMS (0 without a committee);
  // rounds: rounds adopted so far. Counts the teacher call the plan makes, and decides whether
  // the driver changes at the end of this step (take_handover).
  CheckPlan plan_check(int64_t step, double max_deviation, bool committee, int rounds);
  // A teacher frame with this largest force component may be buffered (not exploded)
  bool within_fmax(double max_force_component) const { return max_force_component <= s_.fmax; }
  void count_exploded() { ++exploded_; }
  // The labelled frame's outcome: on an audited step the student's true error (max over atoms of
  // |F_student - F_teacher|) pairs with the committee's deviation (calibration), and a trusted
  // audit whose true error exceeds LO in true-error units counts as a miss.
  void record_label(const CheckPlan& plan, bool committee, double max_deviation, double true_max_error);
  // The teacher the plan computed failed (its client died, hung, ...): nothing is labelled, the step
  // goes on with the student's forces, and a take-over the plan made is called off (the student
  // keeps driving; the teacher is asked again on a later check step)
  void record_teacher_failure(const CheckPlan& plan);

  // ---- end of a step
  // The hand-over planned on this step's check, if any: flips the driver and returns true. A round
  // running when the teacher takes over is then adopted sooner (adopt_after from now).
  bool take_handover(int64_t step, bool round_running);
  // probe P: a hand-back check due on this step, not a check step (the teacher drives, a committee
  // exists, no hand-over pending), and its outcome (sigma as plan_check takes it): the hand-over is
  // then taken at once (take_handover)
  bool probe_due(int64_t step, bool committee) const {
    return s_.probe > 0 && teacher_drives_ && committee && !switch_pending_ && step % s_.probe == 0;
  }
  void probe_handback(double max_deviation, bool committee, int rounds);
  int64_t probes() const { return probes_; }
  bool adoption_due(int64_t step, bool round_running) const { return round_running && step >= round_adopt_step_; }
  bool round_due(int64_t frames, bool round_running) const;
  void round_started(int64_t step, int64_t frames);

  // ---- thermo and history
  // grade units: the committee's largest deviation on its training frames, after each round (the
  // same value on every rank); <= 0: none yet
  void set_reference(double reference) { reference_ = reference; }
  double reference() const { return reference_; }
  // sigma as compared with the thresholds
  double compared(double sigma) const;

  int64_t teacher_evaluations() const { return teacher_evals_; }
  double teacher_step_fraction() const;
  double last_deviation() const { return last_sigma_; }
  int64_t audits() const { return audits_; }
  int64_t audit_misses() const { return audit_misses_; }
  // the miss rate's 95 % Wilson interval (audit_misses / audits)
  void miss_rate_interval(double& lo, double& hi) const { wilson_interval(audit_misses_, audits_, 1.96, lo, hi); }
  int64_t exploded() const { return exploded_; }
  int64_t teacher_failures() const { return teacher_failures_; }
  int64_t checks() const { return checks_; }
  double calibration_factor() const { return calib_factor_; }
  const Calibration& calibration() const { return calibration_; }

  // ---- restart: every field of the state by name (settings come from the deck)
  void save(StateRecord& r) const;
  void restore(const StateRecord& r);
  static constexpr const char* kStateName = "active-controller";
  static constexpr int kStateVersion = 1;

 private:
  int64_t round_up_to_check(int64_t step) const { return (step + every_ - 1) / every_ * every_; }
  // the teacher drives and a round adopted since its take-over brings the deviation below H: hand back
  bool hand_back_due(double deviation, bool committee, int rounds) const {
    return teacher_drives_ && committee && rounds > rounds_at_handover_ &&
           deviation < (s_.handback >= 0.0 ? s_.handback : s_.lo);
  }

  ActiveSettings s_;
  uint64_t seed_;
  int64_t every_, train_every_;
  bool teacher_drives_ = true;   // who computes this step's forces
  bool switch_pending_ = false;  // hand the driving over at the end of this step
  int64_t steps_ = 0, teacher_evals_ = 0, teacher_steps_ = 0, checks_ = 0;
  int64_t audits_ = 0, audit_misses_ = 0, exploded_ = 0, last_call_step_ = -1, teacher_failures_ = 0, probes_ = 0;
  double last_sigma_ = 0.0;      // latest max deviation (eV/A; 0 before the first committee)
  int64_t rounds_at_handover_ = -1;   // rounds adopted when the teacher last took over (-1: never)
  int64_t round_started_frames_ = 0, round_adopt_step_ = -1;
  Calibration calibration_;
  double calib_factor_ = 1.0;
  double reference_ = -1.0;      // grade units: the reference deviation (eV/A); <= 0: none yet
  bool budget_warned_ = false;

  struct IntegerField {
    const char* key;
    int64_t ActiveController::*member;
  };
  static const IntegerField kIntegerFields[];
};

}  // namespace nep
