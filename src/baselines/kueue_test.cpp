// Hand-made scenarios for the kueue baseline: quota arithmetic, borrowing, lending and
// borrowing limits, reclaim with Kueue's victim order and fill-back, fair sharing.
#include "baselines/kueue.hpp"

#include <gtest/gtest.h>

#include <random>

#include "core/error.hpp"
#include "model/testing.hpp"
#include "sim/simulator.hpp"

namespace ds {
namespace {

using testing::add_job;
using testing::make_workload;

RunRecord run(const Workload& w, const std::vector<std::string>& options = {}) {
  PolicyOptions o;
  for (const auto& kv : options) o.set(kv);
  auto p = make_kueue(PolicyContext{w.cluster, w.tenants, o});
  return simulate(w, *p);
}

// Hierarchical reclaim (hierarchical_preemption.go): p 16 = a 8 + b 8 is a cohort within
// its nominal quota while b borrows a's idle GPUs, so x's reclaim takes y's borrower; flat,
// Kueue's order (most recently started first) takes b's.
TEST(Kueue, HierarchicalReclaimTakesOnlyFromCohortsOverTheirNominalQuota) {
  for (const bool tree : {true, false}) {
    Workload w = testing::make_tree_workload(
        3, {{"p", -1, 16}, {"a", 0, 8}, {"b", 0, 8}, {"x", -1, 8}, {"y", -1, 0}}, tree);
    add_job(w, 2, 8, 0, 100000);
    add_job(w, 4, 8, 0, 100000);
    add_job(w, 2, 8, 10, 100000);
    add_job(w, 3, 8, 100, 500);
    w.finalize();
    auto r = run(w);
    EXPECT_EQ(r.jobs[3].first_start, seconds(100));
    EXPECT_EQ(r.jobs[1].preemptions, tree ? 1 : 0) << (tree ? "tree" : "flat");
    EXPECT_EQ(r.jobs[2].preemptions, tree ? 0 : 1) << (tree ? "tree" : "flat");
    auto fair = run(w, {"fair_sharing=on"});
    EXPECT_EQ(fair.jobs[2].preemptions, tree ? 0 : fair.jobs[2].preemptions);
  }
}

TEST(KueueQuota, CohortArithmeticFollowsKueuesResourceNodes) {
  auto w = make_workload(3, 1);  // nominal 8 each, cohort 24
  CohortQuota q(w.tenants, KueueLimits{});
  q.add(1, 12);
  EXPECT_EQ(q.available(0), 12);
  EXPECT_EQ(q.available(1), 12);
  EXPECT_TRUE(q.borrowing(1));
  EXPECT_FALSE(q.borrowing(0, 8));
  EXPECT_TRUE(q.borrowing(0, 9));
  EXPECT_DOUBLE_EQ(q.drs(1), 4 * 1000.0 / 24);
  EXPECT_DOUBLE_EQ(q.drs(0, 4), 0);
  EXPECT_EQ(q.potential(0), 24);

  // Lending limit 2: 6 GPUs of each tenant stay local; the cohort holds 3 x 2 = 6.
  CohortQuota lend(w.tenants, KueueLimits{true, 2, -1});
  EXPECT_EQ(lend.potential(0), 6 + 6);
  lend.add(1, 8);  // 6 local + 2 in the cohort
  EXPECT_EQ(lend.available(1), 4);
  EXPECT_EQ(lend.available(0), 6 + 4);
  // Borrowing limit 4: at most nominal + 4.
  CohortQuota borrow(w.tenants, KueueLimits{true, -1, 4});
  EXPECT_EQ(borrow.potential(0), 12);
  borrow.add(0, 10);
  EXPECT_EQ(borrow.available(0), 2);
  // Weight 0 while borrowing: infinite share; no cohort: nominal only.
  w.tenants[2].weight = 0;
  CohortQuota zero(w.tenants, KueueLimits{});
  zero.add(2, 9);
  EXPECT_EQ(zero.drs(2), kInfiniteShare);
  CohortQuota alone(w.tenants, KueueLimits{false, -1, -1});
  alone.add(0, 3);
  EXPECT_EQ(alone.available(0), 5);
  EXPECT_EQ(alone.potential(0), 8);
}

TEST(Kueue, BorrowsIdleQuotaOfTheCohort) {
  auto w = make_workload(2, 1);
  add_job(w, 1, 8, 0, 1000);
  add_job(w, 1, 8, 0, 1000);  // borrows tenant 0's idle 8 GPUs
  w.finalize();
  auto r = run(w);
  EXPECT_EQ(r.jobs[0].first_start, 0);
  EXPECT_EQ(r.jobs[1].first_start, 0);
  EXPECT_EQ(r.policy_summary.at("kueue_borrowed_starts"), 1);
  // Isolated: no cohort, the second job waits for the first.
  auto iso = run(w, {"scope=isolated"});
  EXPECT_EQ(iso.jobs[1].first_start, seconds(1000));
}

TEST(Kueue, ReclaimPreemptsTheMostRecentBorrowerAndFillsBack) {
  // Tenant 1 runs F1 (6 GPUs, node 0), F2 (6, node 1) and V1 (2, node 0): 14 of its 8.
  // Tenant 0's E (4 GPUs, within its nominal 8) needs GPUs: candidates in Kueue's order
  // are V1 (newest), F2, F1. Removing V1 gives quota but no node with 4 free GPUs;
  // removing F2 too fits; re-adding V1 still fits, so only F2 is preempted.
  auto w = make_workload(2, 1);
  add_job(w, 1, 6, 0, 1000);  // F1
  add_job(w, 1, 6, 1, 1000);  // F2
  add_job(w, 1, 2, 3, 1000);  // V1
  add_job(w, 0, 4, 10, 100);  // E
  w.finalize();
  auto r = run(w);
  EXPECT_EQ(r.jobs[3].first_start, seconds(10));
  EXPECT_EQ(r.jobs[1].preemptions, 1);
  EXPECT_EQ(r.jobs[2].preemptions, 0);
  EXPECT_EQ(r.jobs[0].preemptions, 0);
  EXPECT_EQ(r.policy_summary.at("kueue_victims"), 1);
  // F2 waits at its old place and restarts when E is done, from its last checkpoint (none
  // within 30 min) plus the 40 s restart overhead.
  EXPECT_EQ(r.jobs[1].end, seconds(110 + 1000 + 40));
  // reclaim=never: E waits for a borrower to finish.
  auto never = run(w, {"reclaim=never"});
  EXPECT_EQ(never.jobs[3].first_start, seconds(1000));
  EXPECT_EQ(never.policy_summary.at("kueue_victims"), 0);
}

TEST(Kueue, ClassicalReclaimNeedsTheJobWithinItsNominalQuota) {
  // Tenant 0 already holds its 8 GPUs: a further job would borrow, so it cannot reclaim
  // (borrowWithinCohort: Never) and waits although tenant 1 borrows.
  auto w = make_workload(3, 1);
  add_job(w, 0, 8, 0, 1000);
  add_job(w, 1, 8, 1, 1000);
  add_job(w, 1, 4, 2, 1000);
  add_job(w, 1, 4, 3, 1000);  // tenant 1 at 16 of 8
  add_job(w, 0, 4, 10, 100);
  w.finalize();
  auto classical = run(w);
  EXPECT_EQ(classical.jobs[4].first_start, seconds(1000));
  EXPECT_EQ(classical.policy_summary.at("kueue_victims"), 0);
  // Fair sharing: tenant 0's share after admission (4 borrowed) is below tenant 1's (8):
  // S2-a removes tenant 1's newest job, whose removal leaves tenant 1 at 4 borrowed.
  auto fair = run(w, {"fair_sharing=on"});
  EXPECT_EQ(fair.jobs[4].first_start, seconds(10));
  EXPECT_EQ(fair.jobs[3].preemptions, 1);
  EXPECT_EQ(fair.jobs[2].preemptions, 0);
}

TEST(Kueue, FairSharingAdmitsTheLowerShareFirst) {
  // When 4 GPUs free up, tenant 0 (already borrowing 4) and tenant 1 (at nominal) both
  // want them. Classical: both borrow, so FIFO -> tenant 0's older job. Fair sharing:
  // tenant 1's share after admission (4 borrowed) is below tenant 0's (8).
  auto w = make_workload(3, 1);
  add_job(w, 0, 8, 0, 1000);
  add_job(w, 0, 4, 1, 1000);  // tenant 0 borrows 4
  add_job(w, 1, 8, 2, 1000);
  add_job(w, 2, 4, 3, 47);    // frees 4 GPUs at 50
  add_job(w, 0, 4, 10, 100);  // D
  add_job(w, 1, 4, 11, 100);  // E
  w.finalize();
  auto classical = run(w);
  EXPECT_EQ(classical.jobs[4].first_start, seconds(50));
  EXPECT_EQ(classical.jobs[5].first_start, seconds(150));
  auto fair = run(w, {"fair_sharing=on"});
  EXPECT_EQ(fair.jobs[5].first_start, seconds(50));
  EXPECT_EQ(fair.jobs[4].first_start, seconds(150));
  EXPECT_EQ(fair.policy_summary.at("kueue_victims"), 0);  // S2-b needs a strictly higher share
}

TEST(Kueue, LendingAndBorrowingLimits) {
  auto w = make_workload(2, 1);
  add_job(w, 1, 8, 0, 1000);
  add_job(w, 1, 2, 1, 1000);
  add_job(w, 1, 2, 2, 1000);
  add_job(w, 1, 16, 3, 10);  // more than nominal + what is lendable: rejected
  w.finalize();
  // Each tenant lends at most 2 GPUs: tenant 1 borrows 2, the third job waits.
  auto lend = run(w, {"lending_limit=2"});
  EXPECT_EQ(lend.jobs[1].first_start, seconds(1));
  EXPECT_EQ(lend.jobs[2].first_start, seconds(1000));
  EXPECT_EQ(lend.jobs[3].status, JobStatus::Rejected);
  // Borrowing limit 2: the same for the borrower's side.
  auto borrow = run(w, {"borrowing_limit=2"});
  EXPECT_EQ(borrow.jobs[2].first_start, seconds(1000));
  auto free = run(w);
  EXPECT_EQ(free.jobs[2].first_start, seconds(2));
}

TEST(Kueue, BestEffortFifoSkipsWhatDoesNotFitStrictFifoWaits) {
  auto w = make_workload(2, 1);
  add_job(w, 1, 8, 0, 1000);  // tenant 1 at its nominal: nothing to reclaim
  add_job(w, 0, 16, 1, 100);  // tenant 0's head: needs tenant 1's GPUs
  add_job(w, 0, 2, 2, 100);
  w.finalize();
  auto best_effort = run(w);
  EXPECT_EQ(best_effort.jobs[2].first_start, seconds(2));
  auto strict = run(w, {"queueing=strict"});
  EXPECT_EQ(strict.jobs[1].first_start, seconds(1000));
  EXPECT_EQ(strict.jobs[2].first_start, seconds(1100));  // behind the 16-GPU job
}

TEST(Kueue, RandomWorkloadsSettleUnderEveryProfile) {
  // Every decision is validated by the simulator (a bad preemption or placement throws);
  // every job must end or be rejected.
  std::mt19937 rng(7);
  const std::vector<std::vector<std::string>> profiles = {{},
                                                          {"fair_sharing=on"},
                                                          {"lending_limit=4"},
                                                          {"borrowing_limit=8", "fair_sharing=on"},
                                                          {"queueing=strict"},
                                                          {"scope=isolated"},
                                                          {"reclaim=lower_priority"}};
  for (int it = 0; it < 60; ++it) {
    const int tenants = 1 + static_cast<int>(rng() % 4);
    auto w = make_workload(tenants, 1 + static_cast<int>(rng() % 3));
    const int sizes[] = {1, 2, 4, 8, 8, 12, 16, 24};
    const int jobs = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < jobs; ++i)
      add_job(w, static_cast<int>(rng() % tenants), sizes[rng() % 8], rng() % 2000, rng() % 900);
    for (auto& j : w.jobs) j.qos = static_cast<Qos>(rng() % 5);
    w.tenants[0].weight = static_cast<double>(rng() % 3);
    w.finalize();
    for (const auto& p : profiles) {
      auto r = run(w, p);
      for (const auto& o : r.jobs)
        ASSERT_TRUE(o.status == JobStatus::Done || o.status == JobStatus::Rejected) << it;
    }
  }
}

TEST(Kueue, RejectsBadOptions) {
  auto w = make_workload(1, 1);
  w.finalize();
  for (const char* kv :
       {"scope=elsewhere", "reclaim=sometimes", "queueing=random", "lending_limit=-3"}) {
    PolicyOptions o;
    o.set(kv);
    EXPECT_THROW(make_kueue(PolicyContext{w.cluster, w.tenants, o}), InputError) << kv;
  }
}

}  // namespace
}  // namespace ds
