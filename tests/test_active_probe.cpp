// `probe P` in the active-learning controller: while the teacher drives, a hand-back check every P
// steps between check steps. It hands the MD back (from the next step) only when a round was
// adopted after the take-over and the deviation is below the hand-back level; it is never due
// while the student drives, without a committee, with P = 0, or with a hand-over already
// pending; every step the teacher drove until then is counted; the probe count survives a restart.
#include <gtest/gtest.h>

#include "nep/train/active_controller.hpp"
#include "nep/train/state_record.hpp"

namespace {

using nep::ActiveController;
using nep::ActiveSettings;
using nep::CheckPlan;
using nep::TeacherReason;

ActiveSettings probe_settings(int64_t probe) {
  ActiveSettings s;
  s.members = 3;
  s.lo = 0.5;
  s.hi = 2.0;
  s.probe = probe;
  return s;
}

// the student drives; a check at step 10 finds 3 eV/A: the teacher drives from step 11
ActiveController after_take_over(const ActiveSettings& s) {
  ActiveController c(s, 7, 10, 5);
  c.begin_fresh_run(true);
  EXPECT_FALSE(c.setup_driver(true));
  for (int step = 1; step <= 10; ++step) c.count_step();
  const CheckPlan p = c.plan_check(10, 3.0, true, 1);
  EXPECT_EQ(p.reason, TeacherReason::Upper);
  EXPECT_TRUE(c.take_handover(10, false));
  EXPECT_TRUE(c.teacher_drives());
  EXPECT_EQ(c.teacher_evaluations(), 1);
  return c;
}

TEST(ActiveProbe, HandsBackBetweenCheckStepsOnceANewRoundTrustsThePositions) {
  ActiveController c = after_take_over(probe_settings(1));
  c.count_step();  // step 11, the teacher drives it
  ASSERT_TRUE(c.probe_due(11, true));
  c.probe_handback(0.3, true, 1);  // no round adopted since the take-over: not handed back
  EXPECT_FALSE(c.take_handover(11, false));
  c.count_step();  // step 12
  ASSERT_TRUE(c.probe_due(12, true));
  c.probe_handback(0.8, true, 2);  // a new round, but the deviation is above LO
  EXPECT_FALSE(c.take_handover(12, false));
  c.count_step();  // step 13
  c.probe_handback(0.3, true, 2);
  EXPECT_DOUBLE_EQ(c.last_deviation(), 0.3);
  EXPECT_FALSE(c.probe_due(13, true));  // the hand-over is pending
  EXPECT_TRUE(c.take_handover(13, false));
  EXPECT_FALSE(c.teacher_drives());
  // the teacher drove steps 11-13: three evaluations after the take-over's call; then none
  EXPECT_EQ(c.teacher_evaluations(), 4);
  EXPECT_EQ(c.probes(), 3);
  c.count_step();
  EXPECT_FALSE(c.probe_due(14, true));  // the student drives
  EXPECT_EQ(c.teacher_evaluations(), 4);
}

TEST(ActiveProbe, DueEveryPStepsOnlyWhileTheTeacherDrivesWithACommittee) {
  ActiveController c = after_take_over(probe_settings(3));
  EXPECT_FALSE(c.probe_due(11, true));
  EXPECT_TRUE(c.probe_due(12, true));
  EXPECT_FALSE(c.probe_due(12, false));  // no committee
  EXPECT_TRUE(c.probe_due(15, true));
  ActiveController off = after_take_over(probe_settings(0));
  for (int step = 11; step < 20; ++step) EXPECT_FALSE(off.probe_due(step, true)) << step;
  // a fresh run without a committee: the teacher drives, nothing to probe with
  ActiveController fresh(probe_settings(1), 7, 10, 5);
  fresh.begin_fresh_run(false);
  EXPECT_TRUE(fresh.setup_driver(false));
  EXPECT_FALSE(fresh.probe_due(1, false));
}

TEST(ActiveProbe, HandbackLevelAndRestart) {
  ActiveSettings s = probe_settings(1);
  s.handback = 1.0;  // between LO and HI
  ActiveController c = after_take_over(s);
  c.count_step();
  c.probe_handback(0.8, true, 2);  // above LO, below H: handed back
  EXPECT_TRUE(c.take_handover(11, false));
  nep::StateRecord r(ActiveController::kStateName, ActiveController::kStateVersion);
  c.save(r);
  ActiveController back(s, 7, 10, 5);
  back.restore(nep::StateRecord::parse(r.str(), ActiveController::kStateName, ActiveController::kStateVersion, "test"));
  EXPECT_EQ(back.probes(), 1);
  EXPECT_FALSE(back.teacher_drives());
  EXPECT_EQ(back.teacher_evaluations(), c.teacher_evaluations());
}

}  // namespace
