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

}  // namespace
}  // namespace ds
