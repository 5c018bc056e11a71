#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/testing.hpp"

namespace ds {
namespace {

TEST(Workload, OfferedLoadIsGpuTimeOverCapacityAndSpan) {
  Workload w = testing::make_workload(1, 1);  // 8 GPUs
  testing::add_job(w, 0, 4, 0, 100);
  testing::add_job(w, 0, 2, 100, 200);
  w.finalize();
  EXPECT_DOUBLE_EQ(w.offered_load(), (4.0 * 100 + 2.0 * 200) / (8.0 * 100));
}

TEST(Workload, FitClusterToLoadScalesEveryOwnerAndItsQuota) {
  Workload w = testing::make_workload(2, 4);  // 2 tenants x 4 nodes x 8 GPUs
  testing::add_job(w, 0, 8, 0, 1000);
  testing::add_job(w, 1, 8, 1000, 1000);
  w.finalize();
  // Offered: 16,000 GPU-s over 64 GPUs x 1000 s = 0.25; to reach 0.5 halve the cluster.
  w.fit_cluster_to_load(0.5);
  EXPECT_EQ(w.cluster.total_gpus(), 32);
  EXPECT_EQ(w.tenants[0].quota_gpus, 16);
  EXPECT_EQ(w.tenants[1].quota_gpus, 16);
  EXPECT_DOUBLE_EQ(w.offered_load(), 0.5);
  EXPECT_EQ(w.cluster.nodes[2].owner, TenantId(1));
  EXPECT_EQ(w.cluster.nodes[2].first_gpu, 16);
  ASSERT_FALSE(w.notes.empty());
}

TEST(Workload, FitClusterToLoadKeepsANodePerOwnerAndRejectsNonsense) {
  Workload w = testing::make_workload(2, 1);
  testing::add_job(w, 0, 1, 0, 1);
  testing::add_job(w, 1, 1, 1000, 1);
  w.finalize();
  w.fit_cluster_to_load(0.9);
  EXPECT_EQ(w.cluster.nodes.size(), 2u);
  EXPECT_THROW(w.fit_cluster_to_load(0), InputError);
}

// --jitter: seeded whole-second delays within the bound, the order and ids kept, the same
// seed giving the same workload and another seed another one.
TEST(Workload, JitterDelaysSubmissionsWithinTheBoundAndKeepsTheOrder) {
  auto make = [] {
    Workload w = testing::make_workload(1, 1);
    for (int i = 0; i < 200; ++i) testing::add_job(w, 0, 1, (i / 4) * 10, 100);  // ties of 4
    w.finalize();
    return w;
  };
  const Workload base = make();
  Workload a = make(), b = make(), c = make(), same = make();
  a.jitter_submits(60 * kSecond, 7);
  b.jitter_submits(60 * kSecond, 7);
  c.jitter_submits(60 * kSecond, 8);
  same.jitter_submits(0, 7);
  bool differs = false;
  Time delayed_most = 0;
  for (std::size_t i = 0; i < base.jobs.size(); ++i) {
    const Time d = a.jobs[i].submit - base.jobs[i].submit;
    EXPECT_GE(d, 0);
    EXPECT_EQ(d % kSecond, 0);
    if (i > 0) {
      EXPECT_GE(a.jobs[i].submit, a.jobs[i - 1].submit);
    }
    EXPECT_EQ(a.jobs[i].id, base.jobs[i].id);
    EXPECT_EQ(a.jobs[i].submit, b.jobs[i].submit);
    EXPECT_EQ(same.jobs[i].submit, base.jobs[i].submit);
    differs = differs || a.jobs[i].submit != c.jobs[i].submit;
    delayed_most = std::max(delayed_most, d);
  }
  EXPECT_TRUE(differs);
  EXPECT_GT(delayed_most, 0);
  // A job pushed behind its predecessor still stays within the bound: the predecessor was
  // submitted no later and delayed by at most the bound.
  for (std::size_t i = 0; i < base.jobs.size(); ++i)
    EXPECT_LE(a.jobs[i].submit, base.jobs[i].submit + 60 * kSecond);
  EXPECT_THROW(a.jitter_submits(-1, 1), InputError);
}

}  // namespace
}  // namespace ds
