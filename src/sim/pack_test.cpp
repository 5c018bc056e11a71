#include <gtest/gtest.h>

#include "baselines/fifo.hpp"
#include "model/testing.hpp"
#include "sim/fragmentation.hpp"
#include "sim/pack.hpp"

namespace ds {
namespace {

TEST(Fragmentation, FreeCapacityTheTypicalTaskCannotUse) {
  Cluster c;
  c.add_nodes(2, 2, 16 * 1024, "", TenantId());
  // Node 0: GPU 0 has 300 free, GPU 1 is whole. Node 1: both GPUs have 500 free.
  const std::vector<std::int16_t> free = {300, 1000, 500, 500};
  // Half the tasks want a whole GPU, half want 0.4 GPU.
  const std::vector<TaskClass> tasks = {{1, 1000, 0.5}, {1, 400, 0.5}};
  // Node 0: whole-GPU task fits (GPU 1) but cannot use the 300; the 0.4 task fits on GPU 1
  // and cannot use the 300 either: 0.5 x 300 + 0.5 x 300 = 300.
  // Node 1: a whole GPU does not fit: all 1000 free is fragmented for it; the 0.4 task fits
  // both GPUs: 0.5 x 1000 + 0.5 x 0 = 500.
  EXPECT_DOUBLE_EQ(fragmented_gpus(c, free, tasks), 0.8);
}

TEST(Fragmentation, TaskDistributionCountsRequestShapes) {
  Workload w = testing::make_workload(1, 1);
  testing::add_job(w, 0, 1, 0, 10);
  testing::add_job(w, 0, 1, 0, 10);
  testing::add_job(w, 0, 2, 0, 10);
  w.finalize();
  w.jobs[0].gpu_milli = 500;
  auto d = task_distribution(w.jobs);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].gpus, 1);
  EXPECT_EQ(d[0].milli, 500);
  EXPECT_DOUBLE_EQ(d[0].share, 1.0 / 3);
}

TEST(Pack, TasksStayAndThoseThatDoNotFitInTimeAreNotAdmitted) {
  Workload w = testing::make_workload(1, 1);  // 8 GPUs
  testing::add_job(w, 0, 4, 0, 10);
  testing::add_job(w, 0, 8, 5, 10);   // never fits after the first
  testing::add_job(w, 0, 4, 9, 10);   // fits: the first stays, 4 GPUs remain
  testing::add_job(w, 0, 1, 12, 10);  // dropped: full
  w.finalize();
  PolicyOptions o;
  auto r = run_packing(w, [&](const Workload& pw) {
    return make_fifo_pooled(PolicyContext{pw.cluster, pw.tenants, o});
  });
  const auto& all = r.by_qos.at("all");
  EXPECT_EQ(all.tasks, 4u);
  EXPECT_EQ(all.admitted, 2u);
  EXPECT_DOUBLE_EQ(all.requested_gpus, 17);
  EXPECT_DOUBLE_EQ(all.admitted_gpus, 8);
  ASSERT_FALSE(r.curve.empty());
  EXPECT_DOUBLE_EQ(r.curve.back().allocated_gpus, 8);
}

}  // namespace
}  // namespace ds
