// The metrics of DESIGN §4, computed from a simulation result.
//
// Definitions (all times in seconds in the output):
//  - queueing delay: total time a job waited (first wait + waits after preemption);
//    mean and p50/p99/p99.9 over jobs that started.
//  - JCT: end - submit over completed jobs; mean and p99.
//  - GPU occupancy: exact time average of (GPUs with >= 1 job) / GPUs over
//    [first submit, last submit] and over [first submit, last completion].
//  - Lucid-compatible occupancy: 60 s samples from the first submit floored to the
//    minute, up to the earliest time at which some tenant's last job has ended (Lucid
//    simulates each VC alone and cuts the summed series at the shortest VC's run).
//  - SM utilization: time average over GPUs of min(100 %, sum of the jobs' gpu_util x
//    speed) over [first submit, last completion], and over [first submit, last submit]
//    (while load is offered: what sharing buys); jobs without a profile count 100 %.
//  - QoS compliance: among entitled jobs (at submit: tenant's guaranteed usage + its
//    queued entitled GPUs + the job <= quota), the share that started within the
//    tenant's SLO and whose sharing slowdown stayed within the tenant's bound.
//  - Fairness: Jain's index over tenants of received / entitled GPU-time, where
//    entitled GPU-time integrates min(quota, demand); also the worst tenant's ratio.
//  - Preemption cost: preemptions, GPU-hours of lost work and of restart overhead.
//  - Queueing by reason: total queueing time under each waiting reason the policy stated
//    (model/snapshot.hpp, WaitReason), exact over the run.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "model/run_record.hpp"
#include "model/workload.hpp"

namespace ds {

struct TenantMetrics {
  std::string name;
  int quota_gpus = 0;
  std::size_t jobs = 0;
  std::size_t completed = 0;
  std::size_t entitled = 0;
  double avg_queue_s = 0;
  double p99_queue_s = 0;
  double avg_jct_s = 0;
  double qos_compliance = 1;  // 1 when the tenant had no entitled job
  double received_gpu_hours = 0;
  double entitled_gpu_hours = 0;
  double share_ratio = 0;  // received / entitled (0 when nothing was entitled)
  std::size_t preemptions = 0;
  double avg_assurance = -1;  // over timeseries samples; -1 without an assurance signal
  double min_assurance = -1;
};

struct Metrics {
  std::size_t jobs = 0;
  std::size_t jobs_started = 0;
  std::size_t jobs_completed = 0;
  std::size_t jobs_rejected = 0;
  std::size_t jobs_never_started = 0;
  double avg_queue_s = 0, p50_queue_s = 0, p99_queue_s = 0, p999_queue_s = 0;
  double avg_jct_s = 0, p99_jct_s = 0;
  double gpu_occupancy_submit_window = 0;
  double gpu_occupancy_full = 0;
  double gpu_occupancy_lucid = 0;
  double sm_utilization = 0;
  double sm_utilization_submit_window = 0;
  std::size_t entitled_jobs = 0;
  double qos_compliance = 1;
  std::size_t preemptions = 0;
  double lost_gpu_hours = 0;
  double restart_overhead_gpu_hours = 0;
  double delivered_gpu_hours = 0;
  double jain_fairness = 1;
  double worst_tenant_share = 0;
  std::string worst_tenant;
  double first_submit_s = 0, last_submit_s = 0, last_end_s = 0;
  // Queueing time of all jobs by the reason they waited for (seconds), by WaitReason.
  std::array<double, kWaitReasons> queue_s_by_reason{};
  std::vector<TenantMetrics> tenants;
};

Metrics compute_metrics(const Workload& w, const RunRecord& r);

// Nearest-rank-free linear-interpolated quantile (as numpy's default) of `values`,
// which it sorts; 0 for an empty vector.
double quantile(std::vector<double>& values, double q);

}  // namespace ds
