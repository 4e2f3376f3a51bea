// The active-learning controller of fix nep/train mode active, driven without LAMMPS: every rule
// of docs/fix_nep_train.rst "Mode active", the audit stream against its definition, restart
// round trips of the controller and of the fix's restart data (v3 and the positional v2).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "fix_nep_train_state.h"
#include "nep/error.hpp"
#include "nep/train/active_controller.hpp"
#include "nep/train/state_record.hpp"

namespace {

using nep::ActiveController;
using nep::ActiveSettings;
using nep::CheckPlan;
using nep::TeacherReason;

constexpr uint64_t kSeed = 7;
constexpr int64_t kEvery = 10, kTrainEvery = 5;

ActiveSettings settings() {
  ActiveSettings s;
  s.members = 3;
  s.lo = 0.1;
  s.hi = 0.5;
  s.adopt_after = 100;
  s.adopt_after_student = 300;
  return s;
}

// A controller whose student drives (a committee exists from the start)
ActiveController student_driving(const ActiveSettings& s = settings()) {
  ActiveController c(s, kSeed, kEvery, kTrainEvery);
  c.begin_fresh_run(true);
  EXPECT_FALSE(c.setup_driver(true));
  return c;
}

nep::StateRecord saved(const ActiveController& c);

// The audit stream from its definition (docs: SplitMix64, stream (seed, audit = 5, step)),
// written here independently of src/train/rng.hpp
double audit_uniform(uint64_t seed, uint64_t step) {
  auto mix = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  uint64_t state = mix(mix(mix(seed) ^ 5ULL) ^ step);
  state += 0x9e3779b97f4a7c15ULL;
  return static_cast<double>(mix(state) >> 11) * 0x1.0p-53;
}

TEST(ActiveController, TeacherDrivesWithoutCommittee) {
  ActiveController c(settings(), kSeed, kEvery, kTrainEvery);
  c.begin_fresh_run(false);
  EXPECT_TRUE(c.setup_driver(false));
  c.count_step();
  const CheckPlan p = c.plan_check(10, 0.0, false, 0);
  EXPECT_EQ(p.reason, TeacherReason::Driving);
  EXPECT_FALSE(p.compute_teacher);    // pair hybrid computed it already
  EXPECT_TRUE(p.teacher_drove);
  EXPECT_EQ(c.teacher_evaluations(), 1);    // the driven step, counted once
  EXPECT_FALSE(c.take_handover(10, false));    // no committee: no hand-back
  // a committee that appears later does not make the student drive by itself in setup
  EXPECT_TRUE(c.setup_driver(true));
}

TEST(ActiveController, StudentDrivingRules) {
  ActiveController c = student_driving();
  // trusted: nothing (audit 0)
  CheckPlan p = c.plan_check(10, 0.05, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::None);
  EXPECT_FALSE(p.compute_teacher);
  // lower threshold: labels, the student's forces stay
  p = c.plan_check(20, 0.1, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::Lower);
  EXPECT_TRUE(p.compute_teacher);
  EXPECT_FALSE(p.teacher_forces);
  EXPECT_FALSE(p.teacher_drove);
  EXPECT_FALSE(c.take_handover(20, false));
  // upper threshold: the teacher's forces now, the teacher drives from the next step
  p = c.plan_check(30, 0.5, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::Upper);
  EXPECT_TRUE(p.compute_teacher && p.teacher_forces && p.teacher_drove);
  EXPECT_FALSE(c.teacher_drives());
  EXPECT_TRUE(c.take_handover(30, false));
  EXPECT_TRUE(c.teacher_drives());
  EXPECT_EQ(c.teacher_evaluations(), 2);
  EXPECT_EQ(c.checks(), 3);
  EXPECT_DOUBLE_EQ(c.last_deviation(), 0.5);
}

TEST(ActiveController, HandBackNeedsANewerRoundAndTrust) {
  ActiveController c = student_driving();
  c.plan_check(10, 0.9, true, 2);    // take-over with 2 rounds adopted
  ASSERT_TRUE(c.take_handover(10, false));
  c.count_step();
  // trusted again, but no round adopted since the take-over: the teacher keeps driving
  CheckPlan p = c.plan_check(20, 0.01, true, 2);
  EXPECT_EQ(p.reason, TeacherReason::Driving);
  EXPECT_FALSE(c.take_handover(20, false));
  // a newer round, deviation still above LO: keeps driving
  c.plan_check(30, 0.2, true, 3);
  EXPECT_FALSE(c.take_handover(30, false));
  // a newer round and below LO: the student drives from the next step
  p = c.plan_check(40, 0.05, true, 3);
  EXPECT_EQ(p.reason, TeacherReason::Driving);    // this step is still the teacher's
  EXPECT_TRUE(c.take_handover(40, false));
  EXPECT_FALSE(c.teacher_drives());
}

// handback H: the student drives again below H instead of LO (large systems)
TEST(ActiveController, HandBackBelowHWhenGiven) {
  ActiveSettings s = settings();
  s.handback = 0.3;    // LO 0.1, HI 0.5
  ActiveController c = student_driving(s);
  c.plan_check(10, 0.9, true, 2);    // take-over
  ASSERT_TRUE(c.take_handover(10, false));
  c.count_step();
  c.plan_check(20, 0.35, true, 3);    // a newer round, above H
  EXPECT_FALSE(c.take_handover(20, false));
  c.plan_check(30, 0.25, true, 3);    // above LO, below H: hands back
  EXPECT_TRUE(c.take_handover(30, false));
  EXPECT_FALSE(c.teacher_drives());
  // and the same step without handback keeps the teacher driving (LO rules)
  ActiveController d = student_driving();
  d.plan_check(10, 0.9, true, 2);
  ASSERT_TRUE(d.take_handover(10, false));
  d.count_step();
  d.plan_check(30, 0.25, true, 3);
  EXPECT_FALSE(d.take_handover(30, false));
}

// adopt_after 0 and first_round 1: the take-over's frame starts a round adopted on its step; the student
// drives again from the next trusted check step (positions the round did not train on)
TEST(ActiveController, AdoptAtOnceHandsBackOnTheNextTrustedCheck) {
  ActiveSettings s = settings();
  s.adopt_after = 0;
  ASSERT_EQ(s.first_round, 1);    // the default
  ActiveController c = student_driving(s);
  c.plan_check(10, 0.9, true, 2);    // take-over at 2 rounds
  ASSERT_TRUE(c.take_handover(10, false));
  EXPECT_TRUE(c.round_due(1, false));    // the take-over's frame alone
  c.round_started(10, 1);
  EXPECT_TRUE(c.adoption_due(10, true));    // on the step it started
  for (int k = 0; k < 10; ++k) c.count_step();    // steps 11..20: the teacher drives
  CheckPlan p = c.plan_check(20, 0.05, true, 3);    // the adopted round trusted on new positions
  EXPECT_EQ(p.reason, TeacherReason::Driving);
  EXPECT_TRUE(c.take_handover(20, false));
  EXPECT_EQ(c.teacher_evaluations(), 11);    // the take-over call and the 10 steps it drove
  s.adopt_after = 15;    // N > 0 keeps rounding up to a check step
  ActiveController d = student_driving(s);
  d.plan_check(10, 0.9, true, 2);
  ASSERT_TRUE(d.take_handover(10, false));
  d.round_started(10, 1);
  EXPECT_FALSE(d.adoption_due(20, true));
  EXPECT_TRUE(d.adoption_due(30, true));
}

TEST(ActiveController, GapSpacesLabelsAndAuditsNotTakeOvers) {
  ActiveSettings s = settings();
  s.gap = 25;
  ActiveController c = student_driving(s);
  EXPECT_EQ(c.plan_check(10, 0.2, true, 1).reason, TeacherReason::Lower);
  EXPECT_EQ(c.plan_check(20, 0.2, true, 1).reason, TeacherReason::None);     // 10 < gap
  EXPECT_EQ(c.plan_check(30, 0.2, true, 1).reason, TeacherReason::None);     // 20 < gap
  EXPECT_EQ(c.plan_check(40, 0.6, true, 1).reason, TeacherReason::Upper);    // the gap does not hold back HI
  c.take_handover(40, false);
  EXPECT_EQ(c.teacher_evaluations(), 2);
}

TEST(ActiveController, BudgetStopsCallsAndWarnsOnce) {
  ActiveSettings s = settings();
  s.budget = 2;
  ActiveController c = student_driving(s);
  EXPECT_EQ(c.plan_check(10, 0.2, true, 1).reason, TeacherReason::Lower);
  EXPECT_EQ(c.plan_check(20, 0.2, true, 1).reason, TeacherReason::Lower);
  EXPECT_EQ(c.teacher_evaluations(), 2);
  CheckPlan p = c.plan_check(30, 0.2, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::None);
  EXPECT_FALSE(p.warn_budget);    // below HI: no warning
  p = c.plan_check(40, 0.9, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::None);    // no take-over without budget
  EXPECT_TRUE(p.warn_budget);
  EXPECT_FALSE(c.take_handover(40, false));
  EXPECT_FALSE(c.plan_check(50, 0.9, true, 1).warn_budget);    // once
  EXPECT_EQ(c.teacher_evaluations(), 2);
}

TEST(ActiveController, AuditsFollowTheSeededStream) {
  ActiveSettings s = settings();
  s.audit = 0.3;
  ActiveController c = student_driving(s);
  int audited = 0;
  for (int64_t step = 10; step <= 4000; step += kEvery) {
    const CheckPlan p = c.plan_check(step, 0.01, true, 1);
    const bool expect = audit_uniform(kSeed, static_cast<uint64_t>(step)) < 0.3;
    ASSERT_EQ(p.reason == TeacherReason::Audit, expect) << "step " << step;
    EXPECT_EQ(nep::audit_draw(kSeed, step, 0.3), expect);
    audited += expect;
  }
  EXPECT_GT(audited, 90);    // 400 checks at P = 0.3
  EXPECT_LT(audited, 150);
  EXPECT_EQ(c.teacher_evaluations(), audited);
  // another seed audits other steps
  int same = 0;
  for (int64_t step = 10; step <= 4000; step += kEvery)
    same += nep::audit_draw(kSeed, step, 0.3) == nep::audit_draw(kSeed + 1, step, 0.3);
  EXPECT_LT(same, 400);
}

TEST(ActiveController, AuditMissesAndCalibration) {
  ActiveSettings s = settings();
  s.audit = 1.0;
  ActiveController c = student_driving(s);
  EXPECT_DOUBLE_EQ(c.calibration_factor(), 1.0);
  // audits (deviation 0.05 < LO 0.1): true errors 0.2 (miss: > factor x LO = 0.1) and 0.05 (not)
  CheckPlan p = c.plan_check(10, 0.05, true, 1);
  ASSERT_EQ(p.reason, TeacherReason::Audit);
  c.record_label(p, true, 0.05, 0.2);
  p = c.plan_check(20, 0.05, true, 1);
  c.record_label(p, true, 0.05, 0.05);
  EXPECT_EQ(c.audits(), 2);
  EXPECT_EQ(c.audit_misses(), 1);
  // the factor is the median of true / predicted once 5 pairs exist: 4, 1, 2, 3, 5 -> 3
  EXPECT_DOUBLE_EQ(c.calibration_factor(), 1.0);
  const double ratios[3] = {2.0, 3.0, 5.0};
  for (int k = 0; k < 3; ++k) {
    p = c.plan_check(30 + 10 * k, 0.05, true, 1);
    c.record_label(p, true, 0.05, 0.05 * ratios[k]);
  }
  EXPECT_DOUBLE_EQ(c.calibration_factor(), 3.0);
  // a miss is judged with the factor of its own check step: 3 x LO = 0.3 now
  p = c.plan_check(80, 0.05, true, 1);
  c.record_label(p, true, 0.05, 0.25);
  EXPECT_EQ(c.audit_misses(), 3);    // 0.15 (ratio 3) was a miss at factor 1, 0.25 is not at 3
  // without a committee no pair is recorded
  const int pairs = c.calibration().size();
  c.record_label(p, false, 0.0, 1.0);
  EXPECT_EQ(c.calibration().size(), pairs);
}

TEST(ActiveController, TrueUnitsCompareTheCalibratedDeviation) {
  ActiveSettings s = settings();
  s.true_units = true;
  s.audit = 1.0;    // every check step audited: every call calibrates
  ActiveController c = student_driving(s);
  for (int k = 0; k < 5; ++k) {    // factor 4: true errors 4x the deviation
    const CheckPlan p = c.plan_check(10 + 10 * k, 0.2, true, 1);
    ASSERT_EQ(p.reason, TeacherReason::Lower);
    c.record_label(p, true, 0.2, 0.8);
  }
  ASSERT_DOUBLE_EQ(c.calibration_factor(), 4.0);
  // 0.05 x 4 = 0.2: between LO and HI in true-error units (raw 0.05 would be trusted)
  CheckPlan p = c.plan_check(100, 0.05, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::Lower);
  EXPECT_DOUBLE_EQ(p.deviation, 0.2);
  p = c.plan_check(110, 0.13, true, 1);    // 0.52 >= HI
  EXPECT_EQ(p.reason, TeacherReason::Upper);
}

TEST(ActiveController, OnlyAuditedFramesCalibrateAndTheDrawIgnoresTheDeviation) {
  ActiveSettings s = settings();
  s.audit = 0.3;
  ActiveController c = student_driving(s);
  int audited = 0, unaudited_calls = 0;
  for (int64_t step = 10; step <= 2000; step += kEvery) {
    // deviations of every class: trusted, lower, upper
    const double dev = step % 30 == 0 ? 0.05 : step % 30 == 10 ? 0.2 : 0.7;
    const CheckPlan p = c.plan_check(step, dev, true, 1);
    const bool draw = audit_uniform(kSeed, static_cast<uint64_t>(step)) < 0.3;
    ASSERT_EQ(p.audited, draw) << "step " << step << " deviation " << dev;
    if (dev < 0.1) ASSERT_EQ(p.reason, draw ? TeacherReason::Audit : TeacherReason::None);
    else ASSERT_EQ(p.reason, dev < 0.5 ? TeacherReason::Lower : TeacherReason::Upper);
    // audited frames: true error 2x the deviation; the deviation-selected calls: 10x
    c.record_label(p, true, dev, (p.audited ? 2.0 : 10.0) * dev);
    audited += draw;
    unaudited_calls += !draw && p.reason != TeacherReason::None;
    c.take_handover(step, false);
    if (c.teacher_drives()) {    // back to the student at once (a newer round, trusted)
      c.plan_check(step, 0.01, true, 1000 + static_cast<int>(step));
      c.take_handover(step, false);
    }
  }
  ASSERT_GT(audited, 40);
  ASSERT_GT(unaudited_calls, 40);
  EXPECT_EQ(c.calibration().size(), audited);
  EXPECT_DOUBLE_EQ(c.calibration_factor(), 2.0);    // the selected calls (10x) do not enter
}

TEST(ActiveController, BudgetIsAHardCapWhateverDrives) {
  ActiveSettings s = settings();
  s.budget = 5;
  // the teacher drives from the start: the student drives from the step after the 5th evaluation
  ActiveController c(s, kSeed, kEvery, kTrainEvery);
  c.begin_fresh_run(false);
  ASSERT_TRUE(c.setup_driver(false, true));
  int steps = 0;
  while (c.teacher_drives() && steps < 100) {
    c.count_step();
    ++steps;
    if (steps % kEvery == 0) c.plan_check(steps, 0.0, false, 0);
    if (c.budget_hand_back(true)) break;
  }
  EXPECT_EQ(steps, 5);
  EXPECT_FALSE(c.teacher_drives());
  EXPECT_EQ(c.teacher_evaluations(), 5);
  for (int k = 0; k < 50; ++k) c.count_step();    // student steps cost nothing
  CheckPlan p = c.plan_check(60, 0.9, true, 1);   // over HI, no budget: no take-over, a warning
  EXPECT_EQ(p.reason, TeacherReason::None);
  EXPECT_TRUE(p.warn_budget);
  EXPECT_EQ(c.teacher_evaluations(), 5);
  // a later run without a committee starts with the student: the cap holds across runs
  EXPECT_FALSE(c.setup_driver(false, true));
  // no student model: the cap cannot hold, a clear error
  ActiveController d(s, kSeed, kEvery, kTrainEvery);
  d.begin_fresh_run(false);
  d.setup_driver(false, false);
  for (int k = 0; k < 4; ++k) d.count_step();
  EXPECT_FALSE(d.budget_hand_back(false));
  d.count_step();
  EXPECT_THROW(d.budget_hand_back(false), nep::Error);
  // the last unit spent on a take-over: the teacher's forces this step, then the student again
  s.budget = 1;
  ActiveController e = student_driving(s);
  p = e.plan_check(10, 0.9, true, 1);
  ASSERT_TRUE(p.teacher_forces);
  EXPECT_FALSE(e.budget_hand_back(true));
  EXPECT_FALSE(e.take_handover(10, false));
  EXPECT_FALSE(e.teacher_drives());
  EXPECT_EQ(e.teacher_evaluations(), 1);
}

TEST(ActiveController, MissRateIntervalIsWilsons) {
  double lo = -1, hi = -1;
  nep::wilson_interval(5, 10, 1.96, lo, hi);    // textbook values
  EXPECT_NEAR(lo, 0.2366, 1e-4);
  EXPECT_NEAR(hi, 0.7634, 1e-4);
  nep::wilson_interval(0, 10, 1.96, lo, hi);
  EXPECT_DOUBLE_EQ(lo, 0.0);
  EXPECT_NEAR(hi, 0.2775, 1e-4);
  nep::wilson_interval(0, 0, 1.96, lo, hi);
  EXPECT_DOUBLE_EQ(lo, 0.0);
  EXPECT_DOUBLE_EQ(hi, 1.0);
  ActiveSettings s = settings();
  s.audit = 1.0;
  ActiveController c = student_driving(s);
  for (int k = 0; k < 10; ++k) {
    const CheckPlan p = c.plan_check(10 + 10 * k, 0.01, true, 1);
    c.record_label(p, true, 0.01, k < 5 ? 1.0 : 0.001);    // 5 misses of 10 trusted audits
  }
  c.miss_rate_interval(lo, hi);
  EXPECT_NEAR(lo, 0.2366, 1e-4);
  EXPECT_NEAR(hi, 0.7634, 1e-4);
}

TEST(ActiveController, RoundScheduleAndFixedAdoptionPoints) {
  ActiveSettings s = settings();
  s.first_round = 3;
  ActiveController c(s, kSeed, kEvery, kTrainEvery);
  c.begin_fresh_run(false);
  c.setup_driver(false);
  // teacher driving: a round every first_round frames, adopted adopt_after later on a check step
  EXPECT_FALSE(c.round_due(2, false));
  EXPECT_TRUE(c.round_due(3, false));
  EXPECT_FALSE(c.round_due(3, true));    // one at a time
  c.round_started(33, 3);
  EXPECT_FALSE(c.adoption_due(130, true));
  EXPECT_TRUE(c.adoption_due(140, true));    // 33 + 100 rounded up to a multiple of 10
  EXPECT_FALSE(c.adoption_due(140, false));
  // student driving: train_every frames, adopt_after_student later
  ActiveController d = student_driving(s);
  EXPECT_FALSE(d.round_due(4, false));
  EXPECT_TRUE(d.round_due(5, false));
  d.round_started(50, 5);
  EXPECT_FALSE(d.adoption_due(340, true));
  EXPECT_TRUE(d.adoption_due(350, true));
  EXPECT_FALSE(d.round_due(9, false));
  EXPECT_TRUE(d.round_due(10, false));
  // a take-over while that round runs pulls its adoption forward to adopt_after from now
  d.plan_check(60, 0.9, true, 0);
  ASSERT_TRUE(d.take_handover(60, true));
  EXPECT_TRUE(d.adoption_due(160, true));
  EXPECT_FALSE(d.adoption_due(150, true));
}

TEST(ActiveController, AFailedTeacherCallsOffItsTakeOver) {
  ActiveController c = student_driving();
  CheckPlan p = c.plan_check(10, 0.2, true, 1);    // lower: labels only
  c.record_teacher_failure(p);
  EXPECT_EQ(c.teacher_failures(), 1);
  EXPECT_FALSE(c.take_handover(10, false));
  p = c.plan_check(20, 0.9, true, 1);              // upper: a take-over, but the teacher fails
  ASSERT_TRUE(p.teacher_forces);
  c.record_teacher_failure(p);
  EXPECT_FALSE(c.take_handover(20, false));        // the student keeps driving
  EXPECT_FALSE(c.teacher_drives());
  EXPECT_EQ(c.teacher_failures(), 2);
  EXPECT_EQ(c.teacher_evaluations(), 2);           // the attempts cost what calls cost
  EXPECT_EQ(c.plan_check(30, 0.9, true, 1).reason, TeacherReason::Upper);    // asked again later
  ActiveController d(settings(), kSeed, kEvery, kTrainEvery);
  d.restore(saved(c));
  EXPECT_EQ(d.teacher_failures(), 2);
}

TEST(ActiveController, ExplodedFramesAndStepCounts) {
  ActiveController c = student_driving();
  EXPECT_TRUE(c.within_fmax(20.0));
  EXPECT_FALSE(c.within_fmax(20.5));
  c.count_exploded();
  EXPECT_EQ(c.exploded(), 1);
  for (int k = 0; k < 8; ++k) c.count_step();    // student steps
  c.plan_check(10, 0.9, true, 0);                // take-over: counted as a teacher step
  c.take_handover(10, false);
  c.count_step();
  c.count_step();
  EXPECT_EQ(c.teacher_evaluations(), 3);
  EXPECT_DOUBLE_EQ(c.teacher_step_fraction(), 3.0 / 10.0);
}

// Two controllers fed the same inputs stay equal; a restored one continues as the original would
void expect_same_future(ActiveController& a, ActiveController& b) {
  for (int64_t step = 200; step <= 600; step += kEvery) {
    const double dev = 0.02 + 0.6 * std::fabs(std::sin(0.37 * static_cast<double>(step)));
    a.count_step();
    b.count_step();
    const CheckPlan pa = a.plan_check(step, dev, true, static_cast<int>(step / 100));
    const CheckPlan pb = b.plan_check(step, dev, true, static_cast<int>(step / 100));
    ASSERT_EQ(pa.reason, pb.reason) << step;
    ASSERT_EQ(pa.deviation, pb.deviation);
    if (pa.reason != TeacherReason::None) {
      a.record_label(pa, true, dev, 1.7 * dev);
      b.record_label(pb, true, dev, 1.7 * dev);
    }
    ASSERT_EQ(a.take_handover(step, step % 40 == 0), b.take_handover(step, step % 40 == 0));
  }
  EXPECT_EQ(a.teacher_evaluations(), b.teacher_evaluations());
  EXPECT_EQ(a.audit_misses(), b.audit_misses());
  EXPECT_EQ(a.calibration_factor(), b.calibration_factor());
}

nep::StateRecord saved(const ActiveController& c) {
  nep::StateRecord r(ActiveController::kStateName, ActiveController::kStateVersion);
  c.save(r);
  return nep::StateRecord::parse(r.str(), ActiveController::kStateName, ActiveController::kStateVersion, "test");
}

TEST(ActiveController, RestartRoundTrip) {
  ActiveSettings s = settings();
  s.audit = 0.2;
  s.gap = 10;
  ActiveController a = student_driving(s);
  for (int64_t step = 10; step < 200; step += kEvery) {
    a.count_step();
    const CheckPlan p = a.plan_check(step, 0.03 * static_cast<double>(step % 70) / 7.0, true, 1);
    if (p.reason != TeacherReason::None) a.record_label(p, true, 0.1, 0.1 + 1e-3 * static_cast<double>(step));
    a.take_handover(step, false);
  }
  a.round_started(190, 12);
  ActiveController b(s, kSeed, kEvery, kTrainEvery);
  b.restore(saved(a));
  EXPECT_EQ(saved(b).str(), saved(a).str());    // every field, by name, bit for bit
  EXPECT_EQ(b.calibration().predicted(), a.calibration().predicted());
  EXPECT_EQ(b.teacher_drives(), a.teacher_drives());
  expect_same_future(a, b);
}

TEST(ActiveController, RestoreByNameNotPosition) {
  // an older or newer writer: keys in any order, a key this build does not know, one missing
  const std::string text =
      "nep-state active-controller 1\n"
      "zz_future_key i 5\n"
      "teacher_evaluations i 17\n"
      "teacher_drives i 0\n"
      "calibration_factor r 2.5\n";
  ActiveController c(settings(), kSeed, kEvery, kTrainEvery);
  c.restore(nep::StateRecord::parse(text, ActiveController::kStateName, 1, "test"));
  EXPECT_EQ(c.teacher_evaluations(), 17);
  EXPECT_FALSE(c.teacher_drives());
  EXPECT_DOUBLE_EQ(c.calibration_factor(), 2.5);
  EXPECT_EQ(c.audits(), 0);    // missing: its default
  EXPECT_THROW(nep::StateRecord::parse(text, ActiveController::kStateName, 0, "test"), nep::Error);
  EXPECT_THROW(nep::StateRecord::parse(text, "other", 1, "test"), nep::Error);
  EXPECT_THROW(nep::StateRecord::parse("nep-state active-controller 1\nsteps x 1\n", "active-controller", 1, "t"),
               nep::Error);
  nep::StateRecord bad = nep::StateRecord::parse("nep-state active-controller 1\nsteps r 1.5\n", "active-controller", 1, "t");
  EXPECT_THROW(bad.integer("steps", 0), nep::Error);    // a real where an integer belongs
}

nep_lmp::FixNEPTrainState sample_state() {
  nep_lmp::FixNEPTrainState st;
  st.frames = 41;
  st.next_round_at = 50;
  st.rejected = 3;
  st.rounds = 4;
  for (int k = 0; k < 5; ++k) st.metrics[k] = 0.1 * (k + 1) / 3.0;
  st.fresh_se = 12.5;
  st.fresh_n = 648;
  st.round_running = true;
  st.model_text = "nep4 1 Si\n...\n";
  return st;
}

TEST(FixRestartData, Version3RoundTrip) {
  nep_lmp::FixNEPTrainState st = sample_state();
  st.active = true;
  st.members = {"member one\n", "member two\n"};
  ActiveController c = student_driving();
  c.plan_check(10, 0.3, true, 1);
  nep::StateRecord r(ActiveController::kStateName, ActiveController::kStateVersion);
  c.save(r);
  st.controller = r.str();
  const std::string bytes = nep_lmp::encode_fix_state(st);
  const nep_lmp::FixNEPTrainState back = nep_lmp::decode_fix_state(bytes.data());
  EXPECT_EQ(nep_lmp::encode_fix_state(back), bytes);
  EXPECT_EQ(back.members, st.members);
  EXPECT_EQ(back.controller, st.controller);
  EXPECT_EQ(back.metrics[2], st.metrics[2]);
  EXPECT_TRUE(back.round_running);
  // passive: no members, no controller
  const nep_lmp::FixNEPTrainState p = nep_lmp::decode_fix_state(nep_lmp::encode_fix_state(sample_state()).data());
  EXPECT_FALSE(p.active);
  EXPECT_EQ(p.model_text, sample_state().model_text);
}

// The positional layout of builds before 2026-12-04 (fix_nep_train_state.cpp's comment)
std::string legacy_v2_bytes(const nep_lmp::FixNEPTrainState& st, const std::vector<double>& active,
                            const std::vector<std::string>& members, const std::vector<double>& pred,
                            const std::vector<double>& truth) {
  std::string out;
  auto put = [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  const double s[14] = {2.0, double(st.frames), double(st.next_round_at), double(st.rejected), double(st.rounds),
                        st.metrics[0], st.metrics[1], st.metrics[2], st.metrics[3], st.metrics[4], st.fresh_se,
                        double(st.fresh_n), st.round_running ? 1.0 : 0.0, double(st.model_text.size())};
  put(s, sizeof(s));
  put(st.model_text.data(), st.model_text.size());
  std::string blob;
  auto bput = [&](const void* p, size_t n) { blob.append(static_cast<const char*>(p), n); };
  const uint64_t nm = members.size();
  bput(&nm, 8);
  for (const auto& m : members) {
    const uint64_t n = m.size();
    bput(&n, 8);
    bput(m.data(), n);
  }
  const uint64_t np = pred.size();
  bput(&np, 8);
  bput(pred.data(), 8 * np);
  bput(truth.data(), 8 * np);
  const double na = static_cast<double>(active.size()), nb = static_cast<double>(blob.size());
  put(&na, 8);
  put(active.data(), 8 * active.size());
  put(&nb, 8);
  put(blob.data(), blob.size());
  return out;
}

TEST(FixRestartData, ReadsThePositionalVersion2) {
  const nep_lmp::FixNEPTrainState st = sample_state();
  // driver, steps, teacher evaluations, teacher steps, checks, audits, misses, exploded, last call
  // step, last deviation, rounds at hand-over, round start frames, round adoption step, factor
  const std::vector<double> a = {0, 400, 37, 37, 40, 6, 2, 1, 390, 0.125, 3, 35, 450, 1.75};
  const std::string bytes = legacy_v2_bytes(st, a, {"m1\n", "m2\n"}, {0.1, 0.2, 0.3}, {0.2, 0.3, 0.5});
  const nep_lmp::FixNEPTrainState back = nep_lmp::decode_fix_state(bytes.data());
  EXPECT_TRUE(back.active);
  EXPECT_EQ(back.frames, 41);
  EXPECT_EQ(back.model_text, st.model_text);
  EXPECT_EQ(back.members, (std::vector<std::string>{"m1\n", "m2\n"}));
  ActiveController c(settings(), kSeed, kEvery, kTrainEvery);
  c.restore(nep::StateRecord::parse(back.controller, ActiveController::kStateName, 1, "test"));
  EXPECT_FALSE(c.teacher_drives());
  EXPECT_EQ(c.teacher_evaluations(), 37);
  EXPECT_EQ(c.checks(), 40);
  EXPECT_EQ(c.audits(), 6);
  EXPECT_EQ(c.audit_misses(), 2);
  EXPECT_EQ(c.exploded(), 1);
  EXPECT_DOUBLE_EQ(c.last_deviation(), 0.125);
  EXPECT_DOUBLE_EQ(c.calibration_factor(), 1.75);
  EXPECT_EQ(c.calibration().true_errors(), (std::vector<double>{0.2, 0.3, 0.5}));
  EXPECT_DOUBLE_EQ(c.teacher_step_fraction(), 37.0 / 400.0);
  EXPECT_TRUE(c.adoption_due(450, true));
  EXPECT_FALSE(c.adoption_due(440, true));
}

TEST(FixRestartData, UnknownVersionIsAClearError) {
  const double v[2] = {7.0, 0.0};
  try {
    nep_lmp::decode_fix_state(reinterpret_cast<const char*>(v));
    FAIL() << "no error";
  } catch (const nep::Error& e) {
    EXPECT_NE(std::string(e.what()).find("version 7"), std::string::npos) << e.what();
  }
}

}  // namespace
