// The discrete-event simulator: the offline driver around the pure policy core.
//
// Algorithm (one loop iteration per distinct event time t, no fixed ticks):
//  1. Take every event at t from the queue, ordered by (time, sequence): job
//     completions first (their GPUs are released), then wake-ups a policy asked for.
//  2. Enqueue the jobs submitted at t (in trace order).
//  3. Build a snapshot (spans over the simulator's state, no copies) and call the
//     policy once; apply its decisions: rejections, preemptions, then starts.
//     Every decision is validated (a policy bug is a logic_error, never silent).
//  4. Record metrics at change points (occupancy, SM utilization, tenant shares).
// Progress: a running job advances at its current speed (1 = exclusive). Jobs on a
// GPU whose requests add up to more than one GPU share it; their speed comes from
// SimConfig::speed_model (default: time slicing, 1/n on a GPU with n such jobs).
// Preemption: progress since the tenant's last checkpoint is lost and the restart
// overhead (40 s for <= 8 GPUs, 60 s above, as Lucid models Tiresias' measurement)
// is added to the remaining work.
// Start latency (SimConfig::start_latency, default 0): a started job holds its GPUs from
// the decision on but makes progress only `start_latency` later; the wait counts as
// queueing. It models a real cluster's actuation delay (decision -> job running), e.g.
// Slurm's release -> RUNNING time measured by `deepshare slurm replay` (docs/slurm.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "model/snapshot.hpp"
#include "model/workload.hpp"
#include "policy/policy.hpp"

namespace ds {

// Speed of `job` on one GPU it shares with `others` (exclusive speed = 1).
using SpeedModel =
    std::function<double(const JobSpec& job, std::span<const JobSpec* const> others)>;

struct SimConfig {
  Time restart_overhead_small = seconds(40);  // jobs of <= 8 GPUs
  Time restart_overhead_large = seconds(60);
  Time sample_interval = seconds(600);  // timeseries.csv resolution
  Time start_latency = 0;               // decision -> running (GPUs held, no progress)
  // Each start's latency is start_latency + uniform(-jitter, +jitter), at least 0, drawn
  // from a generator seeded with latency_seed (a real cluster's starts vary: docs/slurm.md).
  Time start_latency_jitter = 0;
  std::uint64_t latency_seed = 1;
  SpeedModel speed_model;  // empty: time slicing (1/n when oversubscribed)
  // Called now and then (every few thousand event times) with the simulated time
  // and the number of jobs that finished or were rejected.
  std::function<void(Time now, std::size_t settled, std::size_t total)> progress;
};

// Per-job outcome, indexed by JobId.
struct JobOutcome {
  JobStatus status = JobStatus::Future;
  Time first_start = kNever;
  Time end = kNever;
  Time queue = 0;      // total time waiting (first wait + waits after preemption)
  Time lost_work = 0;  // progress lost to preemption (wall ms per GPU)
  Time overhead = 0;   // restart overhead added by preemptions
  std::uint16_t preemptions = 0;
  bool entitled = false;      // within the tenant's quota at submit (DESIGN §4)
  double max_slowdown = 1.0;  // worst 1/speed while running
  std::string reject_reason;
};

// Cluster state right after the events at time t (one entry per change).
struct StepPoint {
  Time t = 0;
  int busy_gpus = 0;       // GPUs with at least one job
  int allocated_gpus = 0;  // sum of running jobs' GPUs (exceeds busy when shared)
  double sm_sum = 0;       // sum over GPUs of min(100, sum of util x speed)
};

struct TenantSample {
  double assurance = -1;  // from the policy's telemetry; -1 when it has none
  int lent_gpus = 0;
  int reserve_gpus = 0;
  int held_gpus = 0;
  int borrowed_gpus = 0;
  int running_jobs = 0;
  int pending_jobs = 0;
  int pending_gpus = 0;
};

struct ClusterSample {
  Time t = 0;
  int busy_gpus = 0;
  int allocated_gpus = 0;
  double sm_sum = 0;
  int running_jobs = 0;
  int pending_jobs = 0;
  int pending_gpus = 0;
  std::size_t preemptions = 0;  // so far (cumulative)
  double lost_gpu_hours = 0;    // progress lost to preemptions so far (cumulative)
};

struct TenantTotals {
  double received_gpu_ms = 0;  // integral of GPUs held
  double entitled_gpu_ms = 0;  // integral of min(quota, demand)
};

struct SimResult {
  std::vector<JobOutcome> jobs;
  std::vector<StepPoint> steps;
  std::vector<ClusterSample> samples;
  std::vector<TenantSample> tenant_samples;  // samples.size() x tenants, row-major
  std::vector<TenantTotals> tenants;
  std::map<std::string, double> policy_summary;  // Policy::summarize at the end
  Time origin = 0;                               // first submit time
  Time end = 0;                                  // last event time
  std::size_t cycles = 0;
  std::size_t decisions_applied = 0;
};

// Runs `policy` over `workload` to the end (no events left).
SimResult simulate(const Workload& workload, Policy& policy, const SimConfig& config = {});

}  // namespace ds
