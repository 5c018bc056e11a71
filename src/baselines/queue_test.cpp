#include "baselines/queue.hpp"

#include <gtest/gtest.h>

#include "baselines/fifo.hpp"
#include "baselines/queue_test_util.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

using testing::add_job;
using testing::make_workload;
using testing::run_policy;
using testing::start_s;

TEST(Partitions, IsolatedGivesEachTenantItsOwnNodes) {
  auto w = make_workload(3, 2);
  Partitions iso(w.cluster, w.tenants.size(), Scope::Isolated);
  ASSERT_EQ(iso.size(), 3u);
  EXPECT_TRUE(iso.per_tenant());
  EXPECT_EQ(iso.capacity(1), 16);
  EXPECT_EQ(iso.nodes(1).size(), 2u);
  EXPECT_EQ(iso.nodes(1)[0], NodeId(2));
  Partitions pooled(w.cluster, w.tenants.size(), Scope::Pooled);
  ASSERT_EQ(pooled.size(), 1u);
  EXPECT_EQ(pooled.capacity(0), 48);
}

TEST(Partitions, AClusterWithoutVirtualClustersIsOnePool) {
  Workload w;
  w.tenants.push_back(Tenant{TenantId(0), "a"});
  w.tenants.push_back(Tenant{TenantId(1), "b"});
  w.cluster.add_nodes(2, 8, 1024, "", TenantId());
  Partitions iso(w.cluster, w.tenants.size(), Scope::Isolated);
  EXPECT_FALSE(iso.per_tenant());
  ASSERT_EQ(iso.size(), 1u);
  EXPECT_EQ(iso.capacity(0), 16);
  EXPECT_EQ(iso.scope(), Scope::Isolated);
}

TEST(Partitions, ScopeAndBackfillOptions) {
  PolicyOptions o;
  EXPECT_EQ(read_scope(o, Scope::Isolated), Scope::Isolated);
  EXPECT_EQ(read_start_rule(o, Scope::Isolated), StartRule::HeadOfLine);
  EXPECT_EQ(read_start_rule(o, Scope::Pooled), StartRule::Backfill);
  o.set("scope=pooled");
  o.set("backfill=off");
  EXPECT_EQ(read_scope(o, Scope::Isolated), Scope::Pooled);
  EXPECT_EQ(read_start_rule(o, Scope::Pooled), StartRule::HeadOfLine);
  PolicyOptions bad;
  bad.set("scope=shared");
  EXPECT_THROW((void)read_scope(bad, Scope::Isolated), InputError);
}

TEST(OrderedQueues, FifoIsolatedOnAPoolRunsAsOneQueue) {
  auto w = make_workload(2, 1);
  for (auto& n : w.cluster.nodes) n.owner = TenantId();
  add_job(w, 0, 8, 0, 100);
  add_job(w, 1, 8, 1, 100);
  add_job(w, 0, 8, 2, 100);
  w.finalize();
  auto r = run_policy(w, &make_fifo_isolated);
  EXPECT_EQ(start_s(r, 0), 0);
  EXPECT_EQ(start_s(r, 1), 1);
  EXPECT_EQ(start_s(r, 2), 100);
}

TEST(OrderedQueues, BackfillStillTriesFractionalJobsWhenNoWholeGpuIsFree) {
  auto w = make_workload(1, 1, 1);  // a single GPU
  add_job(w, 0, 1, 0, 100);
  add_job(w, 0, 1, 1, 10);
  w.jobs[0].gpu_milli = 500;  // half a GPU each
  w.jobs[1].gpu_milli = 500;
  w.finalize();
  auto r = run_policy(w, &make_fifo_pooled);
  EXPECT_EQ(start_s(r, 0), 0);
  EXPECT_EQ(start_s(r, 1), 1);  // shares job 0's GPU
}

}  // namespace
}  // namespace ds
