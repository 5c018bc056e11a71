#include "sim/simulator.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "baselines/fifo.hpp"
#include "model/testing.hpp"
#include "policy/placement.hpp"

namespace ds {
namespace {

using testing::add_job;
using testing::make_workload;

// A policy whose decisions come from a test function.
class Scripted final : public Policy {
 public:
  explicit Scripted(std::function<Decisions(const ClusterSnapshot&)> f) : f_(std::move(f)) {}
  Decisions decide(const ClusterSnapshot& s) override { return f_(s); }

 private:
  std::function<Decisions(const ClusterSnapshot&)> f_;
};

// A script for job 0: started on node 0's GPUs `first` at time 0, preempted at `preempt_at`,
// started again on `again` at `restart_at`; `see` looks at every snapshot first.
std::function<Decisions(const ClusterSnapshot&)> restart_job0(
    std::uint64_t first, Time preempt_at, std::uint64_t again, Time restart_at,
    std::function<void(const ClusterSnapshot&)> see = [](const ClusterSnapshot&) {}) {
  return [=](const ClusterSnapshot& s) {
    see(s);
    Decisions d;
    if (s.now == 0) {
      d.start.push_back({JobId(0), {NodeAlloc{NodeId(0), first}}});
      d.wake_at = preempt_at;
    } else if (s.now == preempt_at) {
      d.preempt.push_back({JobId(0)});
      d.wake_at = restart_at;
    } else if (s.now == restart_at) {
      d.start.push_back({JobId(0), {NodeAlloc{NodeId(0), again}}});
    }
    return d;
  };
}

std::unique_ptr<Policy> fifo_isolated(const Workload& w) {
  PolicyOptions o;
  return make_fifo_isolated(PolicyContext{w.cluster, w.tenants, o});
}

TEST(Simulator, RunsAJobFromSubmitForItsDuration) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 4, 10, 100);
  w.finalize();
  auto p = fifo_isolated(w);
  auto r = simulate(w, *p);
  EXPECT_EQ(r.jobs[0].first_start, seconds(10));
  EXPECT_EQ(r.jobs[0].end, seconds(110));
  EXPECT_EQ(r.jobs[0].queue, 0);
  EXPECT_EQ(r.jobs[0].status, JobStatus::Done);
}

TEST(Simulator, StartLatencyHoldsGpusWithoutProgressAndCountsAsQueueing) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 6, 0, 100);  // starts at 0, runs from 5 to 105
  add_job(w, 0, 4, 1, 50);   // waits for the first's GPUs: decided at 105, runs 110-160
  w.finalize();
  auto p = fifo_isolated(w);
  SimConfig cfg;
  cfg.start_latency = seconds(5);
  auto r = simulate(w, *p, cfg);
  EXPECT_EQ(r.jobs[0].first_start, seconds(5));
  EXPECT_EQ(r.jobs[0].queue, seconds(5));
  EXPECT_EQ(r.jobs[0].end, seconds(105));
  EXPECT_EQ(r.jobs[1].first_start, seconds(110));
  EXPECT_EQ(r.jobs[1].queue, seconds(109));
  EXPECT_EQ(r.jobs[1].end, seconds(160));
}

TEST(Simulator, StartLatencyJitterStaysInRangeAndDependsOnlyOnTheSeed) {
  auto w = make_workload(1, 1);
  for (int i = 0; i < 20; ++i) add_job(w, 0, 1, i * 200, 100);  // never wait for GPUs
  w.finalize();
  auto run = [&](std::uint64_t seed) {
    auto p = fifo_isolated(w);
    SimConfig cfg;
    cfg.start_latency = seconds(5);
    cfg.start_latency_jitter = seconds(3);
    cfg.latency_seed = seed;
    return simulate(w, *p, cfg);
  };
  const auto a = run(7), b = run(7), c = run(8);
  bool differs = false, varies = false;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    EXPECT_GE(a.jobs[i].queue, seconds(2));
    EXPECT_LE(a.jobs[i].queue, seconds(8));
    EXPECT_EQ(a.jobs[i].queue, b.jobs[i].queue);
    EXPECT_EQ(a.jobs[i].end - a.jobs[i].first_start, seconds(100));
    differs = differs || a.jobs[i].queue != c.jobs[i].queue;
    varies = varies || a.jobs[i].queue != a.jobs[0].queue;
  }
  EXPECT_TRUE(differs);
  EXPECT_TRUE(varies);
}

TEST(Simulator, FifoIsolatedBlocksTheHeadOfLine) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 6, 0, 100);  // takes 6 of 8 GPUs
  add_job(w, 0, 4, 1, 50);   // waits for the first
  add_job(w, 0, 1, 2, 10);   // fits now, but FIFO keeps it behind the second
  w.finalize();
  auto p = fifo_isolated(w);
  auto r = simulate(w, *p);
  EXPECT_EQ(r.jobs[1].first_start, seconds(100));
  EXPECT_EQ(r.jobs[2].first_start, seconds(100));
  EXPECT_EQ(r.jobs[2].queue, seconds(98));
}

TEST(Simulator, TenantsDoNotShareNodesUnderIsolation) {
  auto w = make_workload(2, 1);
  add_job(w, 0, 8, 0, 100);
  add_job(w, 0, 8, 0, 100);  // tenant 0 is full; tenant 1's node stays idle
  w.finalize();
  auto p = fifo_isolated(w);
  auto r = simulate(w, *p);
  EXPECT_EQ(r.jobs[1].first_start, seconds(100));
}

TEST(Simulator, RejectsJobsLargerThanTheTenantsCluster) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 16, 0, 100);
  add_job(w, 0, 8, 5, 100);
  w.finalize();
  auto p = fifo_isolated(w);
  auto r = simulate(w, *p);
  EXPECT_EQ(r.jobs[0].status, JobStatus::Rejected);
  EXPECT_FALSE(r.jobs[0].reject_reason.empty());
  EXPECT_EQ(r.jobs[1].first_start, seconds(5));  // not blocked by the rejected job
}

TEST(Simulator, PreemptionLosesWorkSinceTheLastCheckpointAndPaysTheRestart) {
  auto w = make_workload(1, 1);
  w.tenants[0].checkpoint_interval = seconds(1000);
  add_job(w, 0, 2, 0, 10000);
  w.finalize();
  int calls = 0;
  Scripted p(
      restart_job0(0b11, seconds(2500), 0b1100, seconds(3000), [&](const ClusterSnapshot& s) {
        ++calls;
        if (s.now == seconds(3000)) {
          EXPECT_EQ(s.runtime[0].status, JobStatus::Pending);
        }
      }));
  auto r = simulate(w, p);
  // Kept 2000 s of progress, lost 500 s, restart overhead 40 s (2 GPUs <= 8).
  EXPECT_EQ(r.jobs[0].lost_work, seconds(500));
  EXPECT_EQ(r.jobs[0].overhead, seconds(40));
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_EQ(r.jobs[0].queue, seconds(500));
  EXPECT_EQ(r.jobs[0].end, seconds(3000 + 8000 + 40));
  EXPECT_EQ(calls, 4);  // arrival, two wake-ups, completion
  // timeseries samples carry the cumulative preemption cost (every 600 s by default)
  ASSERT_GE(r.samples.size(), 6u);
  EXPECT_EQ(r.samples[4].preemptions, 0u);  // t = 2400 s
  EXPECT_EQ(r.samples[5].preemptions, 1u);  // t = 3000 s
  EXPECT_DOUBLE_EQ(r.samples.back().lost_gpu_hours, 500.0 * 2 / 3600);
}

// As on Slurm (a restarted job's GRES request is fixed): with restarts_colocatable off, the
// policy sees a preempted job as not colocatable from then on; by default nothing changes.
TEST(Simulator, PreemptedJobsAreNotColocatableWhenAsked) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 2, 0, 100);
  w.finalize();
  for (bool keep : {true, false}) {
    std::vector<bool> seen;
    Scripted p(restart_job0(0b11, seconds(50), 0b11, seconds(60), [&](const ClusterSnapshot& s) {
      seen.push_back(s.jobs[0].colocatable);
    }));
    SimConfig c;
    c.restarts_colocatable = keep;
    const auto r = simulate(w, p, c);
    EXPECT_EQ(r.jobs[0].preemptions, 1);
    ASSERT_GE(seen.size(), 3u);
    EXPECT_TRUE(seen[0] && seen[1]);
    EXPECT_EQ(seen[2], keep);
  }
  EXPECT_TRUE(w.jobs[0].colocatable);  // the workload itself is left alone
}

TEST(Simulator, CheckpointAtPreemptionLosesNothing) {
  auto w = make_workload(1, 1);
  w.tenants[0].checkpoint_interval = 0;
  add_job(w, 0, 16 / 2, 0, 1000);
  w.finalize();
  Scripted p(restart_job0(0xFF, seconds(300), 0xFF, seconds(301)));
  auto r = simulate(w, p);
  EXPECT_EQ(r.jobs[0].lost_work, 0);
  EXPECT_EQ(r.jobs[0].end, seconds(301 + 700 + 40));
}

TEST(Simulator, SharedGpusSlowJobsDownAndSpeedRecovers) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 1, 0, 100, 40, 1000);
  add_job(w, 0, 1, 0, 300, 50, 1000);
  w.finalize();
  Scripted p([&](const ClusterSnapshot& s) {
    Decisions d;
    if (s.now == 0) {
      d.start.push_back({JobId(0), {NodeAlloc{NodeId(0), 1}}});
      StartJob second{JobId(1), {NodeAlloc{NodeId(0), 1}}};
      second.shared = true;
      d.start.push_back(second);
    }
    return d;
  });
  auto r = simulate(w, p);
  // Time slicing: both at half speed; job 0 ends at 200 s having done 100 s of work,
  // job 1 has done 100 of 300 s and finishes the remaining 200 s alone.
  EXPECT_EQ(r.jobs[0].end, seconds(200));
  EXPECT_EQ(r.jobs[1].end, seconds(400));
  EXPECT_DOUBLE_EQ(r.jobs[1].max_slowdown, 2.0);
  // SM: one GPU at min(100, 40*.5 + 50*.5) = 45 for 200 s, then 50 for 200 s.
  ASSERT_GE(r.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(r.steps[0].sm_sum, 45.0);
  EXPECT_EQ(r.steps[0].busy_gpus, 1);
  EXPECT_EQ(r.steps[0].allocated_gpus, 2);
}

TEST(Simulator, InvalidDecisionsAreLogicErrors) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 1, 0, 100);
  add_job(w, 0, 1, 0, 100);
  w.finalize();
  Scripted p([&](const ClusterSnapshot& s) {
    Decisions d;
    if (s.now == 0) {
      d.start.push_back({JobId(0), {NodeAlloc{NodeId(0), 1}}});
      d.start.push_back({JobId(1), {NodeAlloc{NodeId(0), 1}}});  // same GPU, not shared
    }
    return d;
  });
  EXPECT_THROW(simulate(w, p), std::logic_error);
}

TEST(Simulator, WrongGpuCountIsALogicError) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 2, 0, 100);
  w.finalize();
  Scripted p([&](const ClusterSnapshot& s) {
    Decisions d;
    if (s.now == 0) d.start.push_back({JobId(0), {NodeAlloc{NodeId(0), 1}}});
    return d;
  });
  EXPECT_THROW(simulate(w, p), std::logic_error);
}

TEST(Simulator, PolicySeesArrivalsAndCompletionsOnce) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 1, 0, 10);
  add_job(w, 0, 1, 5, 10);
  w.finalize();
  std::size_t arrived = 0, finished = 0;
  auto inner = fifo_isolated(w);
  Scripted p([&](const ClusterSnapshot& s) {
    arrived += s.arrived.size();
    finished += s.finished.size();
    for (const auto& f : s.finished) EXPECT_EQ(f.runtime, seconds(10));
    return inner->decide(s);
  });
  simulate(w, p);
  EXPECT_EQ(arrived, 2u);
  EXPECT_EQ(finished, 2u);
}

TEST(Simulator, TenantIntegralsCountHeldAndEntitledGpuTime) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 4, 0, 100);
  w.finalize();
  auto p = fifo_isolated(w);
  auto r = simulate(w, *p);
  EXPECT_DOUBLE_EQ(r.tenants[0].received_gpu_ms, 4.0 * 100 * 1000);
  EXPECT_DOUBLE_EQ(r.tenants[0].entitled_gpu_ms, 4.0 * 100 * 1000);
  EXPECT_TRUE(r.jobs[0].entitled);
}

TEST(Simulator, FractionalRequestsCountAsTheirShareOfAGpu) {
  auto w = make_workload(1, 1);
  w.tenants[0].quota_gpus = 1;
  add_job(w, 0, 1, 0, 100);
  add_job(w, 0, 1, 0, 100);
  add_job(w, 0, 1, 0, 100);
  w.finalize();
  w.jobs[0].gpu_milli = 500;
  w.jobs[1].gpu_milli = 500;  // 0.5 + 0.5 GPU fit the 1-GPU quota; the third does not
  Scripted p([&](const ClusterSnapshot& s) {
    Decisions d;
    if (s.now == 0) {
      d.start.push_back({JobId(0), {NodeAlloc{NodeId(0), 1}}});
      d.start.push_back({JobId(1), {NodeAlloc{NodeId(0), 1}}});  // the same GPU, 500 + 500
      d.start.push_back({JobId(2), {NodeAlloc{NodeId(0), 2}}});
    }
    return d;
  });
  auto r = simulate(w, p);
  EXPECT_TRUE(r.jobs[0].entitled);
  EXPECT_TRUE(r.jobs[1].entitled);
  EXPECT_FALSE(r.jobs[2].entitled);
  EXPECT_EQ(r.jobs[0].end, seconds(100));  // fractions within one GPU do not slow each other
  EXPECT_DOUBLE_EQ(r.tenants[0].received_gpu_ms, 2.0 * 100 * 1000);
  EXPECT_EQ(r.steps.front().busy_gpus, 2);
}

}  // namespace
}  // namespace ds
