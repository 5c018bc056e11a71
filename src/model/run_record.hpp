// The record of one run, whichever driver produced it: the simulator (src/sim) or an
// observed run on a real cluster (src/slurm/observed.hpp). Metrics and outputs
// (src/report) are computed from it alone, so they depend on no driver.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/snapshot.hpp"

namespace ds {

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
  // The reason it waited under longest without interruption (None: it never waited).
  WaitReason wait_reason = WaitReason::None;
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

struct RunRecord {
  std::vector<JobOutcome> jobs;
  std::vector<StepPoint> steps;
  std::vector<ClusterSample> samples;
  std::vector<TenantSample> tenant_samples;  // samples.size() x tenants, row-major
  std::vector<TenantTotals> tenants;
  std::map<std::string, double> policy_summary;  // Policy::summarize at the end
  // Queueing time of all jobs by waiting reason (ms), indexed by WaitReason.
  std::array<double, kWaitReasons> wait_ms_by_reason{};
  Time origin = 0;  // first submit time
  Time end = 0;     // last event time
  std::size_t cycles = 0;
  std::size_t decisions_applied = 0;
};

}  // namespace ds
