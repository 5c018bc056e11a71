#include "baselines/srtf.hpp"

#include <gtest/gtest.h>

#include "baselines/queue_test_util.hpp"

namespace ds {
namespace {

using testing::add_job;
using testing::checkpoint_at_preemption;
using testing::end_s;
using testing::make_workload;
using testing::run_policy;
using testing::start_s;

TEST(Srtf, AShorterArrivalPreemptsAndTheVictimPaysTheRestart) {
  auto w = make_workload(1, 1);
  checkpoint_at_preemption(w);
  add_job(w, 0, 8, 0, 1000);
  add_job(w, 0, 8, 10, 100);  // 100 < 990 left: preempts job 0
  w.finalize();
  auto r = run_policy(w, &make_srtf);
  EXPECT_EQ(start_s(r, 1), 10);
  EXPECT_EQ(end_s(r, 1), 110);
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_EQ(end_s(r, 0), 110 + 990 + 40);  // progress kept, 40 s restart overhead
  EXPECT_EQ(r.jobs[0].queue, seconds(100));
}

TEST(Srtf, ALongerArrivalWaits) {
  auto w = make_workload(1, 1);
  checkpoint_at_preemption(w);
  add_job(w, 0, 8, 0, 100);
  add_job(w, 0, 8, 10, 200);
  w.finalize();
  auto r = run_policy(w, &make_srtf);
  EXPECT_EQ(r.jobs[0].preemptions, 0);
  EXPECT_EQ(start_s(r, 1), 100);
}

TEST(Srtf, PreemptsTheRunningJobsBeyondTheBudget) {
  auto w = make_workload(1, 2);
  checkpoint_at_preemption(w);
  add_job(w, 0, 4, 0, 1000);
  add_job(w, 0, 4, 0, 500);
  add_job(w, 0, 4, 0, 2000);
  add_job(w, 0, 4, 0, 3000);
  add_job(w, 0, 8, 10, 5);
  w.finalize();
  auto r = run_policy(w, &make_srtf);
  // The four 4-GPU jobs fill both nodes. At 10 the 8-GPU job (5 s) is first, then the
  // jobs with 490 and 990 s left fill the budget of 16: the two longest are preempted.
  EXPECT_EQ(start_s(r, 4), 10);
  EXPECT_EQ(r.jobs[2].preemptions, 1);
  EXPECT_EQ(r.jobs[3].preemptions, 1);
  EXPECT_EQ(r.jobs[0].preemptions, 0);
  EXPECT_EQ(r.jobs[1].preemptions, 0);
}

TEST(Srtf, EqualRemainingTimesKeepTheOrderJobsStartedIn) {
  auto w = make_workload(1, 2);
  checkpoint_at_preemption(w);
  add_job(w, 0, 4, 0, 1000);  // node 0
  add_job(w, 0, 4, 0, 1000);  // node 0 (best fit)
  add_job(w, 0, 4, 0, 1000);  // node 1
  add_job(w, 0, 8, 10, 5);
  w.finalize();
  auto r = run_policy(w, &make_srtf);
  // Order at 10: the 8-GPU job (5 s), then the three jobs with 990 s left in the order
  // they started. Budget 16 = 8 + 4 + 4: the last started is preempted, which frees
  // node 1 for the 8-GPU job.
  EXPECT_EQ(start_s(r, 3), 10);
  EXPECT_EQ(r.jobs[2].preemptions, 1);
  EXPECT_EQ(r.jobs[0].preemptions + r.jobs[1].preemptions, 0);
}

TEST(Srtf, GreedyBudgetLeavesAnUnplaceableJobWaiting) {
  // Budget 16, both nodes half used by long jobs. The 8-GPU job is first and takes 8
  // of the budget; the two long jobs take the other 8: no preemption, and the 8-GPU
  // job cannot be placed (4 + 4 free). It starts when a long job ends.
  auto w = make_workload(1, 2);
  checkpoint_at_preemption(w);
  add_job(w, 0, 4, 0, 8);  // fills node 0 with the next one, then ends
  add_job(w, 0, 4, 0, 1000);
  add_job(w, 0, 4, 0, 1200);
  // Best fit puts job 1 beside job 0 on node 0, job 2 on node 1. At 8 job 0 ends:
  // node 0 and node 1 have 4 free GPUs each.
  add_job(w, 0, 8, 9, 5);
  w.finalize();
  auto r = run_policy(w, &make_srtf);
  EXPECT_EQ(r.jobs[1].preemptions + r.jobs[2].preemptions, 0);
  EXPECT_EQ(start_s(r, 3), 1000);
}

TEST(Srtf, TheLostWorkSinceTheLastCheckpointCountsInTheOrder) {
  // Checkpoints every 300 s: job 0 preempted at 550 keeps 300 s of progress, so 740 s
  // remain (700 + 40 overhead), more than job 2's 700: job 2 runs first. With a
  // checkpoint at preemption 490 s would remain and job 0 would run first.
  auto w = make_workload(1, 1);
  for (auto& t : w.tenants) t.checkpoint_interval = seconds(300);
  add_job(w, 0, 8, 0, 1000);
  add_job(w, 0, 8, 550, 100);
  add_job(w, 0, 8, 600, 700);
  w.finalize();
  auto r = run_policy(w, &make_srtf);
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_EQ(r.jobs[0].lost_work, seconds(250));
  EXPECT_EQ(start_s(r, 2), 650);
  EXPECT_EQ(end_s(r, 0), 650 + 700 + 740);

  checkpoint_at_preemption(w);
  auto r0 = run_policy(w, &make_srtf);
  EXPECT_EQ(end_s(r0, 0), 650 + 490);
  EXPECT_EQ(start_s(r0, 2), 650 + 490);
}

}  // namespace
}  // namespace ds
