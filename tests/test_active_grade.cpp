// `threshold LO HI grade` in the active-learning controller: the deviation is compared as
// deviation / reference (the committee's largest deviation on its own training frames, set after a
// round), handback in the same units, a committee without a reference yet is not trusted, a
// trusted audit is a miss when its true error exceeds factor x LO x reference, and the reference
// survives a restart.
#include <gtest/gtest.h>

#include "nep/train/active_controller.hpp"
#include "nep/train/state_record.hpp"

namespace {

using nep::ActiveController;
using nep::ActiveSettings;
using nep::CheckPlan;
using nep::TeacherReason;

ActiveSettings grade_settings() {
  ActiveSettings s;
  s.members = 3;
  s.lo = 1.0;
  s.hi = 3.0;
  s.grade = true;
  return s;
}

ActiveController student_driving(const ActiveSettings& s) {
  ActiveController c(s, 7, 10, 5);
  c.begin_fresh_run(true);
  EXPECT_FALSE(c.setup_driver(true));
  return c;
}

TEST(ActiveGrade, ThresholdsCompareTheDeviationOverTheReference) {
  ActiveController c = student_driving(grade_settings());
  c.set_reference(0.5);
  // deviations 0.4, 0.6 and 1.6 eV/A are grades 0.8 (trusted), 1.2 (labels), 3.2 (the teacher drives)
  c.count_step();
  CheckPlan p = c.plan_check(10, 0.4, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::None);
  EXPECT_DOUBLE_EQ(p.deviation, 0.8);
  c.count_step();
  p = c.plan_check(20, 0.6, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::Lower);
  EXPECT_FALSE(p.teacher_forces);
  c.count_step();
  p = c.plan_check(30, 1.6, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::Upper);
  EXPECT_TRUE(p.teacher_forces);
  EXPECT_TRUE(c.take_handover(30, false));
  // a newer round whose reference is larger hands the MD back at the same deviation
  c.set_reference(2.0);
  c.count_step();
  p = c.plan_check(40, 1.6, true, 2);
  EXPECT_EQ(p.reason, TeacherReason::Driving);
  EXPECT_DOUBLE_EQ(p.deviation, 0.8);
  EXPECT_TRUE(c.take_handover(40, false));
  EXPECT_FALSE(c.teacher_drives());
  // the same deviations in eV/A (no grade): 0.4 and 0.6 are below LO = 1
  ActiveSettings ev = grade_settings();
  ev.grade = false;
  ActiveController e = student_driving(ev);
  e.set_reference(0.5);
  e.count_step();
  EXPECT_EQ(e.plan_check(20, 0.6, true, 1).reason, TeacherReason::None);
}

// handback H is read in grade units too: with H = 2 (above LO = 1) a newer round hands the MD back
// at grade 1.5, which LO alone would not
TEST(ActiveGrade, HandbackIsInGradeUnits) {
  for (double handback : {-1.0, 2.0}) {
    ActiveSettings s = grade_settings();
    s.handback = handback;
    ActiveController c = student_driving(s);
    c.set_reference(0.5);
    c.count_step();
    ASSERT_EQ(c.plan_check(10, 2.0, true, 1).reason, TeacherReason::Upper);    // grade 4
    EXPECT_TRUE(c.take_handover(10, false));
    c.count_step();
    EXPECT_EQ(c.plan_check(20, 0.75, true, 2).reason, TeacherReason::Driving);    // grade 1.5, a newer round
    EXPECT_EQ(c.take_handover(20, false), handback > 0.0) << "handback " << handback;
  }
}

TEST(ActiveGrade, NoReferenceYetIsNotTrusted) {
  ActiveController c = student_driving(grade_settings());
  EXPECT_LE(c.reference(), 0.0);
  c.count_step();
  const CheckPlan p = c.plan_check(10, 1e-6, true, 0);    // a committee from start files, no round yet
  EXPECT_EQ(p.reason, TeacherReason::Upper);
}

TEST(ActiveGrade, AMissIsJudgedAgainstLoTimesTheReference) {
  ActiveSettings s = grade_settings();
  s.audit = 1.0;    // every trusted check step is audited
  ActiveController c = student_driving(s);
  c.set_reference(0.5);    // LO as a deviation: 0.5 eV/A; factor 1 until 5 audited pairs
  c.count_step();
  CheckPlan p = c.plan_check(10, 0.2, true, 1);
  ASSERT_EQ(p.reason, TeacherReason::Audit);
  c.record_label(p, true, 0.2, 0.45);    // below 0.5: not a miss
  c.count_step();
  p = c.plan_check(20, 0.2, true, 1);
  ASSERT_EQ(p.reason, TeacherReason::Audit);
  c.record_label(p, true, 0.2, 0.55);    // above: a miss
  EXPECT_EQ(c.audits(), 2);
  EXPECT_EQ(c.audit_misses(), 1);
}

TEST(ActiveGrade, TheReferenceSurvivesARestart) {
  ActiveController a = student_driving(grade_settings());
  a.set_reference(0.37);
  nep::StateRecord r(ActiveController::kStateName, ActiveController::kStateVersion);
  a.save(r);
  ActiveController b(grade_settings(), 7, 10, 5);
  b.restore(nep::StateRecord::parse(r.str(), ActiveController::kStateName, ActiveController::kStateVersion, "test"));
  EXPECT_DOUBLE_EQ(b.reference(), 0.37);
  b.count_step();
  EXPECT_DOUBLE_EQ(b.plan_check(10, 0.74, true, 1).deviation, 2.0);
}

}  // namespace
