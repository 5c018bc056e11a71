// The discrete-event simulator: the offline driver around the pure policy core.
//
// The cluster itself (GPUs, jobs' runtime, tenant accounting, snapshots, checks) is the
// ClusterState the Slurm controller uses too (model/cluster_state.hpp); the simulator
// adds time, progress and metrics.
// Algorithm (one loop iteration per distinct event time t, no fixed ticks):
//  1. Take every event at t from the queue, ordered by (time, sequence): job
//     completions first (their GPUs are released), then wake-ups a policy asked for,
//     cancellations and policy restarts (SimConfig), then the jobs submitted at t
//     (in trace order).
//  2. Take a snapshot (spans over the state, no copies) and call the policy once;
//     apply its decisions with the drivers' one apply() (model/apply.hpp): rejections,
//     preemptions, starts, then waiting reasons. Every decision is checked; the first one
//     the state refuses stops the run (a policy bug is a DecisionError, never silent).
//  3. Record metrics at change points (occupancy, SM utilization, tenant shares).
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
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/limits.hpp"
#include "model/execution.hpp"
#include "model/run_record.hpp"
#include "model/snapshot.hpp"
#include "model/workload.hpp"
#include "policy/policy.hpp"

namespace ds {

// Speed of `job` on one GPU it shares with `others` (exclusive speed = 1).
using SpeedModel =
    std::function<double(const JobSpec& job, std::span<const JobSpec* const> others)>;

struct SimConfig {
  RestartOverhead restart_overhead;     // per preemption (model/execution.hpp: 40 s / 60 s)
  Time sample_interval = seconds(600);  // timeseries.csv resolution (doubles: sample_bound.hpp)
  std::size_t max_samples = 10'000;     // at most this many samples are kept (0: no bound)
  Time max_time = limits::kMaxSimulatedTime;  // simulated time past this is an InputError
  Time start_latency = 0;                     // decision -> running (GPUs held, no progress)
  // Each start's latency is start_latency + uniform(-jitter, +jitter), at least 0, drawn
  // from a generator seeded with latency_seed (a real cluster's starts vary: docs/slurm.md).
  Time start_latency_jitter = 0;
  std::uint64_t latency_seed = 1;
  // false: a job that was preempted is never colocated again (JobSpec::colocatable turns
  // false at its preemption, as the Slurm controller sets it: its GRES request is fixed
  // after its first start, docs/slurm.md §3). Default true: the plain simulator's results
  // do not change.
  bool restarts_colocatable = true;
  SpeedModel speed_model;  // empty: time slicing (1/n when oversubscribed)
  // Called now and then (every few thousand event times) with the simulated time
  // and the number of jobs that finished or were rejected.
  std::function<void(Time now, std::size_t settled, std::size_t total)> progress;

  // What an online driver does to a policy, for the policy contract (docs/architecture.md):
  // at each of these times the policy object is replaced by a fresh one from the factory
  // (a controller restart): it sees every running job as adopted and every pending job as
  // arrived. Needs simulate() with a factory.
  std::vector<Time> restart_policy_at;
  // Jobs cancelled while they wait: at `at`, a job still pending leaves the queue
  // (withdrawn); a job that runs by then is left alone.
  struct Cancel {
    JobId job;
    Time at = 0;
  };
  std::vector<Cancel> cancellations;
};

using PolicyFactory = std::function<std::unique_ptr<Policy>()>;

// Runs `policy` over `workload` to the end (no events left).
RunRecord simulate(const Workload& workload, Policy& policy, const SimConfig& config = {});
// The same with policies from `make` (a fresh one at start and at every restart).
RunRecord simulate(const Workload& workload, const PolicyFactory& make,
                   const SimConfig& config = {});

}  // namespace ds
