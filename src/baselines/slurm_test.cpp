// Hand-made scenarios for the slurm baseline: the multifactor priority and Fair Tree, the
// backfill map and will-run estimate, a backfill that does not delay the top job's
// reservation, and QOS preemption of scavenger jobs with the requeue delay.
#include "baselines/slurm.hpp"

#include <gtest/gtest.h>

#include "baselines/fifo.hpp"
#include "baselines/queue_test_util.hpp"
#include "baselines/slurm_backfill.hpp"

namespace ds {
namespace {

using testing::add_job;
using testing::make_workload;

RunRecord run(const Workload& w, const std::vector<std::string>& options = {}) {
  return testing::run_policy(w, static_cast<testing::MakePolicy>(&make_slurm), options);
}

TEST(SlurmPriority, WeightedSumOfTheFactors) {
  SlurmPriorityConfig c;  // weights 1000 / 10000 / 1000 / QOS 100000, max age 7 days
  PriorityInputs j;
  j.now = 7 * kDay / 2 + kHour;
  j.eligible = kHour;  // waited half of PriorityMaxAge: age 0.5
  j.gpus = 4;          // 4 of 16 GPUs on 1 of 4 nodes: size (1/4 + 4/16) / 2 = 0.25
  j.nodes = 1;
  j.cluster_nodes = 4;
  j.cluster_gpus = 16;
  j.fs_factor = 0.75;
  EXPECT_EQ(slurm_priority(c, j), 500u + 7500u + 250u + 100000u);
  j.tenant_qos = false;  // scavenger: QOS factor 0
  EXPECT_EQ(slurm_priority(c, j), 8250u);
  j.eligible = j.now + kHour;  // not eligible yet: no age
  EXPECT_EQ(slurm_priority(c, j), 7750u);
  c.weights.tres_gpu = 2000;  // PriorityWeightTRES=GRES/gpu=2000: 4/16 of it
  EXPECT_EQ(slurm_priority(c, j), 8250u);
  c.weights = SlurmWeights{0, 0, 0, 0, 0};
  EXPECT_EQ(slurm_priority(c, j), 1u);  // never 0 (held)
}

TEST(SlurmPriority, FairTreeRanksAccountsByLevelFairShare) {
  auto w = make_workload(3, 1, 4);  // shares = quotas 4 / 4 / 4, + root's own user: N = 4
  FairTree tree(w.tenants, 7 * kDay);
  tree.rank();
  for (std::size_t t = 0; t < 3; ++t) EXPECT_DOUBLE_EQ(tree.factor(t), 1.0);  // all tied
  tree.add_run(0, 4, kHour);
  tree.rank();
  // Tenants 1 and 2 have no usage: LF infinite, tied with root's user at rank 4; tenant 0 gets
  // the next free rank, 1 (ranks 3 and 2 went to the tied ones).
  EXPECT_DOUBLE_EQ(tree.factor(1), 1.0);
  EXPECT_DOUBLE_EQ(tree.factor(2), 1.0);
  EXPECT_DOUBLE_EQ(tree.factor(0), 0.25);
  tree.add_run(1, 2, kHour);  // U = 2/3 and 1/3 of the usage, S = 4/13 each
  tree.rank();
  EXPECT_NEAR(tree.level_fs(0), (4.0 / 13) / (2.0 / 3), 1e-6);
  EXPECT_DOUBLE_EQ(tree.factor(2), 1.0);
  EXPECT_DOUBLE_EQ(tree.factor(1), 0.5);
  EXPECT_DOUBLE_EQ(tree.factor(0), 0.25);
  // PriorityDecayHalfLife: after one half-life the usage is about half.
  const double before = tree.usage(0);
  tree.decay(7 * kDay);
  EXPECT_NEAR(tree.usage(0) / before, 0.5, 0.001);
}

TEST(SlurmBackfill, NodeSpaceReservesNodesThroughTime) {
  NodeSpace space(seconds(1000), seconds(60), kDay, 3);
  NodeSet node1(3);
  node1.set(1);
  space.reserve(seconds(2000), seconds(5000), node1);  // rounded to 1980 .. 4980
  auto a = space.available(seconds(1000), seconds(1500));
  EXPECT_TRUE(a.nodes.test(1));  // ends before the reservation
  // backfill.c looks one slice past the job's end too: node 1 comes back at 4980 s.
  EXPECT_EQ(a.later_start, seconds(4980));
  a = space.available(seconds(5000), seconds(6000));
  EXPECT_EQ(a.later_start, 0);
  a = space.available(seconds(1000), seconds(3000));
  EXPECT_FALSE(a.nodes.test(1));
  EXPECT_TRUE(a.nodes.test(0) && a.nodes.test(2));
  EXPECT_EQ(a.later_start, seconds(4980));  // node 1 is free again from there
  a = space.available(seconds(4980), seconds(9000));
  EXPECT_TRUE(a.nodes.test(1));
}

TEST(SlurmBackfill, WillRunStartsAtTheLastEndOfItsGroup) {
  const std::vector<int> size = {4}, free = {0};
  const NodeSet all(1, true);
  // Ends at 100 s, 110 s (each 2 GPUs) and 200 s: the first group (30 s, aligned: up to
  // 120 + 30 s) holds the first two; 2 GPUs would fit after the first, but the estimate is
  // the group's last end, as in cons_common's _will_run_test.
  const EndingJob a{seconds(100), seconds(50), {{0, 2}}}, b{seconds(110), seconds(50), {{0, 2}}},
      c{seconds(200), seconds(50), {{0, 2}}};
  const std::vector<const EndingJob*> by_end = {&a, &b, &c};
  auto r = will_run(free, size, all, 2, by_end, seconds(10), seconds(30));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->start, seconds(110));
  // A job past its limit is guessed to end one limit from now.
  const EndingJob late{seconds(5), seconds(50), {{0, 4}}};
  const std::vector<const EndingJob*> one = {&late};
  r = will_run(free, size, all, 4, one, seconds(10), seconds(30));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->start, seconds(60));
  EXPECT_FALSE(will_run(free, size, all, 5, by_end, seconds(10), seconds(30)));
}

// A tenant's users with known run times (the predictor learns from finished jobs), then the
// scenario: R (2 of the node's 4 GPUs) runs; T (4 GPUs) must wait for it; S (short) and L
// (long, 1 GPU each) arrive after T.
Workload backfill_workload(bool small_jobs) {
  auto w = make_workload(1, 1, 4);
  w.tenants[0].quota_gpus = 16;  // every job in the tenant's QOS (none is a scavenger)
  const std::vector<std::pair<std::string, int>> users = {{"r", 2000}, {"s", 300}, {"l", 20000}};
  auto job = [&](const std::string& user, int gpus, std::int64_t at, std::int64_t dur) {
    add_job(w, 0, gpus, at, dur);
    w.jobs.back().user = w.intern_user(user);
  };
  for (int k = 0; k < 3; ++k)  // history: each user's run time, one job at a time
    for (std::size_t u = 0; u < users.size(); ++u)
      job(users[u].first, 1, (k * 3 + static_cast<int>(u)) * 30000, users[u].second);
  const std::int64_t t0 = 300000;
  job("r", 2, t0, 2000);
  job("t", 4, t0 + 10, 1000);
  if (small_jobs) {
    job("s", 1, t0 + 20, 300);
    job("l", 1, t0 + 30, 20000);
  }
  w.finalize();
  return w;
}

TEST(Slurm, BackfillDoesNotDelayTheReservedTopJob) {
  const Workload w = backfill_workload(true);
  const RunRecord r = run(w);
  const std::size_t n = 9, top = n + 1, small = n + 2, large = n + 3;
  const Time t0 = seconds(300000);
  EXPECT_EQ(r.jobs[n].first_start, t0);
  // T starts when R ends, exactly as without the small jobs.
  EXPECT_EQ(r.jobs[top].first_start, t0 + seconds(2000));
  const RunRecord alone = run(backfill_workload(false));
  EXPECT_EQ(alone.jobs[top].first_start, r.jobs[top].first_start);
  // S fits before T's reservation and is backfilled at the first pass (bf_interval 30 s);
  // L would run into it and waits until T is done.
  EXPECT_LT(r.jobs[small].first_start, t0 + seconds(60));
  EXPECT_GE(r.jobs[large].first_start, r.jobs[top].end);
  EXPECT_GE(r.policy_summary.at("slurm_backfill_starts"), 1);
  EXPECT_GE(r.policy_summary.at("slurm_reservations"), 1);
  // FIFO with greedy backfill (no reservations) starts L at once and delays T.
  PolicyOptions none;
  auto fifo = make_fifo_pooled(PolicyContext{w.cluster, w.tenants, none});
  const RunRecord greedy = simulate(w, *fifo);
  EXPECT_LT(greedy.jobs[large].first_start, t0 + seconds(60));
  EXPECT_GT(greedy.jobs[top].first_start, r.jobs[top].first_start);
}

TEST(Slurm, TenantQosJobRequeuesScavengerJobs) {
  auto w = make_workload(2, 1, 4);                         // quotas 4 / 4 on two 4-GPU nodes
  for (int k = 0; k < 8; ++k) add_job(w, 1, 1, k, 10000);  // 4 within quota, 4 scavenger
  add_job(w, 1, 1, 10, 10000);                             // a 5th scavenger: waits
  add_job(w, 0, 2, 1000, 500);                             // tenant 0, within its quota
  w.finalize();
  const RunRecord r = run(w);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(r.jobs[k].first_start, seconds(k)) << k;
  EXPECT_EQ(r.policy_summary.at("slurm_scavenger_starts") >= 4, true);
  // Tenant 0's job starts at once by requeueing two scavenger jobs (preempt/qos: the oldest
  // candidates first, reordered to the ones on the node it takes); tenant 1's jobs within its
  // quota are never candidates.
  EXPECT_EQ(r.jobs[9].first_start, seconds(1000));
  EXPECT_EQ(r.jobs[9].queue, 0);
  int victims = 0;
  for (int k = 0; k < 9; ++k) {
    if (r.jobs[k].preemptions == 0) continue;
    ++victims;
    EXPECT_GE(k, 4) << "job " << k << " ran within its tenant's quota";
  }
  EXPECT_EQ(victims, 2);
  EXPECT_EQ(r.policy_summary.at("slurm_victims"), 2);
  // The waiting scavenger job cannot preempt anyone; it starts when GPUs free up.
  EXPECT_EQ(r.jobs[8].preemptions, 0);
  EXPECT_GE(r.jobs[8].first_start, seconds(1500));
}

TEST(Slurm, RequeuedJobWaitsOutTheRequeueDelay) {
  auto w = make_workload(2, 1, 4);
  for (int k = 0; k < 8; ++k) add_job(w, 1, 1, 0, 10000);
  add_job(w, 0, 4, 1000, 60);  // takes a whole node back for 60 s
  w.finalize();
  const RunRecord r = run(w, {"requeue_delay_s=300"});
  int restarted = 0;
  for (int k = 0; k < 8; ++k) {
    if (r.jobs[k].preemptions == 0) continue;
    ++restarted;
    // Requeued at 1000 s; the node is free again at 1060 s, but the job is eligible only
    // after the delay (cred_expire + 1 s on Slurm).
    EXPECT_GE(r.jobs[k].queue, seconds(300)) << k;
  }
  EXPECT_EQ(restarted, 4);
}

TEST(SlurmUser, TimeLimitIsTheEstimateTimesTheFactorInWholeMinutes) {
  TimeLimitRule rule;
  SlurmTimeLimits limits(rule);
  JobSpec j;
  j.id = JobId(0);
  j.tenant = TenantId(0);
  j.user = UserId(0);
  const Time first = limits.limit(j);  // the predictor's prior (1 h) x 2
  EXPECT_EQ(first, 2 * kHour);
  for (int k = 0; k < 20; ++k) limits.observe(j, seconds(100));
  const Time l = limits.limit(j);
  EXPECT_EQ(l % kMinute, 0);
  EXPECT_GE(l, 2 * limits.estimate(j));
  EXPECT_LT(l, 2 * limits.estimate(j) + kMinute);
  EXPECT_TRUE(slurm_tenant_qos(2, 1, 1, 4, true));
  EXPECT_FALSE(slurm_tenant_qos(2, 1, 2, 4, true));
  EXPECT_TRUE(slurm_tenant_qos(2, 1, 2, 4, false));  // --no-requeue: never scavenger
}

}  // namespace
}  // namespace ds
