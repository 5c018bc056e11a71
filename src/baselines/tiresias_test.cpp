#include "baselines/tiresias.hpp"

#include <gtest/gtest.h>

#include "baselines/queue_test_util.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

using testing::add_job;
using testing::checkpoint_at_preemption;
using testing::end_s;
using testing::make_workload;
using testing::run_policy;
using testing::start_s;

TEST(Tiresias, DecidesOnlyAtMultiplesOfTheInterval) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 4, 10, 50);   // waits for the decision at 60
  add_job(w, 0, 4, 120, 30);  // arrives on a decision time: starts at once
  w.finalize();
  auto r = run_policy(w, &make_tiresias);
  EXPECT_EQ(start_s(r, 0), 60);
  EXPECT_EQ(r.jobs[0].queue, seconds(50));
  EXPECT_EQ(start_s(r, 1), 120);
  auto fast = run_policy(w, &make_tiresias, {"interval=20"});
  EXPECT_EQ(start_s(fast, 0), 20);
}

TEST(Tiresias, DemotesPastTheThresholdAndPreemptsForTheHighQueue) {
  // threshold 800 GPU-s: the 8-GPU job 0 passes it after 100 s.
  auto w = make_workload(1, 1);
  checkpoint_at_preemption(w);
  add_job(w, 0, 8, 0, 1000);
  add_job(w, 0, 4, 30, 100);
  w.finalize();
  auto r = run_policy(w, &make_tiresias, {"threshold=800"});
  // 60: job 0 has 480 GPU-s, both in the high queue, FIFO: job 1 waits.
  // 120: job 0 has 960 GPU-s -> low queue; job 1 first, job 0 no longer fits: preempted.
  EXPECT_EQ(start_s(r, 1), 120);
  EXPECT_EQ(end_s(r, 1), 220);
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  // Freed at 220, used at the next decision time; 880 s + 40 s restart remain.
  EXPECT_EQ(end_s(r, 0), 240 + 880 + 40);
  EXPECT_EQ(r.jobs[0].queue, seconds(120));
}

TEST(Tiresias, InsideAQueueOrderIsBySubmitTime) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 8, 0, 100);
  add_job(w, 0, 8, 10, 10);
  add_job(w, 0, 8, 20, 10);
  w.finalize();
  auto r = run_policy(w, &make_tiresias);  // 800 GPU-s < 18,000: all high, FIFO
  EXPECT_EQ(r.jobs[0].preemptions, 0);
  EXPECT_EQ(start_s(r, 1), 120);
  EXPECT_EQ(start_s(r, 2), 180);
}

TEST(Tiresias, PooledScopeUsesEveryNode) {
  auto w = make_workload(2, 1);
  add_job(w, 0, 8, 0, 100);
  add_job(w, 0, 8, 0, 100);
  w.finalize();
  EXPECT_EQ(start_s(run_policy(w, &make_tiresias), 1), 120);  // 100, then the next 60 s
  EXPECT_EQ(start_s(run_policy(w, &make_tiresias, {"scope=pooled"}), 1), 0);
}

TEST(Tiresias, RejectsBadOptions) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 1, 0, 10);
  w.finalize();
  EXPECT_THROW(run_policy(w, &make_tiresias, {"interval=0"}), InputError);
  EXPECT_THROW(run_policy(w, &make_tiresias, {"threshold=-1"}), InputError);
}

}  // namespace
}  // namespace ds
