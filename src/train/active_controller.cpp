// The active-learning policy of fix nep/train mode active (include/nep/train/active_controller.hpp).
#include "nep/train/active_controller.hpp"

#include <algorithm>
#include <cmath>

#include "nep/error.hpp"
#include "nep/train/state_record.hpp"

namespace nep {

const char* reason_name(TeacherReason r) {
  switch (r) {
    case TeacherReason::Driving: return "driving";
    case TeacherReason::Upper: return "upper";
    case TeacherReason::Lower: return "lower";
    case TeacherReason::Audit: return "audit";
    default: return "none";
  }
}

ActiveController::ActiveController(const ActiveSettings& s, uint64_t seed, int64_t every, int64_t train_every)
    : s_(s), seed_(seed), every_(every), train_every_(train_every) {
  if (every_ <= 0 || train_every_ <= 0) throw Error("active controller: every and train_every must be positive");
}

void wilson_interval(int64_t k, int64_t n, double z, double& lo, double& hi) {
  if (n <= 0) {
    lo = 0.0;
    hi = 1.0;
    return;
  }
  const double nn = static_cast<double>(n), p = static_cast<double>(k) / nn, z2 = z * z;
  const double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / (1 + z2 / nn);
  lo = std::max(0.0, centre - half);
  hi = std::min(1.0, centre + half);
}

bool ActiveController::setup_driver(bool committee, bool student_ready) {
  teacher_drives_ = teacher_drives_ || !committee;
  budget_hand_back(student_ready);    // the cap holds across runs too
  return teacher_drives_;
}

void ActiveController::count_step() {
  ++steps_;
  if (teacher_drives_) {    // the pair style computed the teacher this step
    ++teacher_evals_;
    ++teacher_steps_;
  }
}

CheckPlan ActiveController::plan_check(int64_t step, double max_deviation, bool committee, int rounds) {
  ++checks_;
  const double sigma = committee ? max_deviation : 0.0;
  last_sigma_ = sigma;
  CheckPlan p;
  p.deviation = compared(sigma);
  const bool budget_ok = s_.budget < 0 || teacher_evals_ < s_.budget;
  const bool gap_ok = last_call_step_ < 0 || step - last_call_step_ >= s_.gap;
  bool take_over = false;
  if (teacher_drives_) {
    p.reason = TeacherReason::Driving;
  } else {
    // drawn whatever the deviation, so that the audited frames are an unbiased sample of check steps
    p.audited = committee && budget_ok && gap_ok && audit_draw(seed_, step, s_.audit);
    if (p.deviation >= s_.hi && budget_ok) {
      p.reason = TeacherReason::Upper;
      take_over = true;
    } else if (p.deviation >= s_.lo && budget_ok && gap_ok) {
      p.reason = TeacherReason::Lower;
    } else if (p.audited) {
      p.reason = TeacherReason::Audit;
    } else if (p.deviation >= s_.hi && !budget_warned_) {    // (budget spent)
      budget_warned_ = true;
      p.warn_budget = true;
    }
  }
  if (p.reason != TeacherReason::None && !teacher_drives_) {
    p.compute_teacher = true;
    p.teacher_forces = take_over;
    ++teacher_evals_;
    ++teacher_steps_;
    last_call_step_ = step;
  }
  p.teacher_drove = teacher_drives_ || take_over;
  if (take_over) {
    switch_pending_ = true;
    rounds_at_handover_ = rounds;
  } else if (hand_back_due(p.deviation, committee, rounds)) {
    switch_pending_ = true;    // a newer model is trusted here: the student drives again
  }
  return p;
}

void ActiveController::probe_handback(double max_deviation, bool committee, int rounds) {
  ++probes_;
  last_sigma_ = committee ? max_deviation : 0.0;
  if (hand_back_due(compared(last_sigma_), committee, rounds)) switch_pending_ = true;
}

double ActiveController::compared(double sigma) const {
  if (s_.grade) return reference_ > 0.0 ? sigma / reference_ : HUGE_VAL;    // no committee trained on data yet
  return s_.true_units ? calib_factor_ * sigma : sigma;
}

void ActiveController::record_label(const CheckPlan& plan, bool committee, double max_deviation,
                                    double true_max_error) {
  // the trust statement "error below LO", in true-error units, as it stood when the step was planned
  const double lo_dev = s_.grade ? s_.lo * std::max(reference_, 0.0) : s_.lo;    // LO as a deviation (eV/A)
  const double miss_above = s_.true_units ? s_.lo : calib_factor_ * lo_dev;
  if (committee && plan.audited) {
    calibration_.add(max_deviation, true_max_error);
    calib_factor_ = calibration_.factor();
  }
  if (plan.reason == TeacherReason::Audit) {
    ++audits_;
    if (true_max_error > miss_above) ++audit_misses_;
  }
}

void ActiveController::record_teacher_failure(const CheckPlan& plan) {
  ++teacher_failures_;
  if (plan.teacher_forces) switch_pending_ = false;    // the student keeps driving
}

bool ActiveController::budget_hand_back(bool student_ready) {
  if (!budget_spent()) return false;
  if (!teacher_drives_) {    // a take-over this step's call planned cannot go on: the student keeps driving
    switch_pending_ = false;
    return false;
  }
  if (!student_ready)
    throw Error("the teacher budget (" + std::to_string(s_.budget) +
                " evaluations) is spent while the teacher drives and the student has no model yet (no round "
                "adopted): raise 'budget' or lower 'first_round'");
  teacher_drives_ = false;
  switch_pending_ = false;
  return true;
}

bool ActiveController::take_handover(int64_t step, bool round_running) {
  if (!switch_pending_) return false;
  switch_pending_ = false;
  teacher_drives_ = !teacher_drives_;
  // a round started while the student drove is adopted soon now: every step costs the teacher
  if (teacher_drives_ && round_running)
    round_adopt_step_ = std::min(round_adopt_step_, round_up_to_check(step + s_.adopt_after));
  return true;
}

bool ActiveController::round_due(int64_t frames, bool round_running) const {
  // while the teacher drives, frames arrive at every check step: rounds come every first_round
  // frames then, to hand back soon
  const int64_t due = teacher_drives_ && s_.first_round > 0 ? s_.first_round : train_every_;
  return !round_running && frames - round_started_frames_ >= due;
}

void ActiveController::round_started(int64_t step, int64_t frames) {
  round_started_frames_ = frames;
  // adopted on a check step: soon while the teacher drives (every step costs a teacher
  // evaluation), later while the student does (MD need not wait)
  round_adopt_step_ = round_up_to_check(step + (teacher_drives_ ? s_.adopt_after : s_.adopt_after_student));
}

double ActiveController::teacher_step_fraction() const {
  return steps_ > 0 ? static_cast<double>(teacher_steps_) / static_cast<double>(steps_) : 0.0;
}

// The restart layout, one definition for save and restore: each counter by its name
const ActiveController::IntegerField ActiveController::kIntegerFields[] = {
    {"steps", &ActiveController::steps_},
    {"teacher_evaluations", &ActiveController::teacher_evals_},
    {"teacher_steps", &ActiveController::teacher_steps_},
    {"checks", &ActiveController::checks_},
    {"audits", &ActiveController::audits_},
    {"audit_misses", &ActiveController::audit_misses_},
    {"exploded", &ActiveController::exploded_},
    {"last_call_step", &ActiveController::last_call_step_},
    {"rounds_at_handover", &ActiveController::rounds_at_handover_},
    {"round_started_frames", &ActiveController::round_started_frames_},
    {"round_adopt_step", &ActiveController::round_adopt_step_},
    {"teacher_failures", &ActiveController::teacher_failures_},
    {"probes", &ActiveController::probes_},
};

void ActiveController::save(StateRecord& r) const {
  r.set_integer("teacher_drives", teacher_drives_ ? 1 : 0);
  r.set_integer("switch_pending", switch_pending_ ? 1 : 0);
  r.set_integer("budget_warned", budget_warned_ ? 1 : 0);
  for (const auto& f : kIntegerFields) r.set_integer(f.key, this->*f.member);
  r.set_real("last_deviation", last_sigma_);
  r.set_real("calibration_factor", calib_factor_);
  r.set_real("reference_deviation", reference_);
  r.set_reals("calibration_predicted", calibration_.predicted());
  r.set_reals("calibration_true", calibration_.true_errors());
}

void ActiveController::restore(const StateRecord& r) {
  // a key missing (an older writer) keeps the value a new run starts with
  const ActiveController fresh(s_, seed_, every_, train_every_);
  teacher_drives_ = r.integer("teacher_drives", fresh.teacher_drives_) != 0;
  switch_pending_ = r.integer("switch_pending", fresh.switch_pending_) != 0;
  budget_warned_ = r.integer("budget_warned", fresh.budget_warned_) != 0;
  for (const auto& f : kIntegerFields) this->*f.member = r.integer(f.key, fresh.*f.member);
  last_sigma_ = r.real("last_deviation", fresh.last_sigma_);
  calib_factor_ = r.real("calibration_factor", fresh.calib_factor_);
  reference_ = r.real("reference_deviation", fresh.reference_);
  const auto pred = r.reals("calibration_predicted"), truth = r.reals("calibration_true");
  if (pred.size() != truth.size()) throw Error("active controller state: calibration lists of unequal length");
  calibration_.assign(pred, truth);
}

}  // namespace nep
