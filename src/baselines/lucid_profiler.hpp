// Lucid's profiling stage: new jobs first run briefly on a small profiling pool.
//
// Source: Lucid artifact (S-Lab-System-Group/Lucid @63685a3), simulation/profiler/lgf.py
// (LeastGPUFirstProfiler.profile), profiler/profiler.py, utils.py (profiler_config:
// 2 nodes, 200 s, factor 4; one node each from vc8Gr and vcefl), cluster.py (the elastic
// node and its echo on vcYVn, VC.update_vc_node).
//
// Assumptions:
//  - The pool is `base_nodes` plus, while scaled up, one elastic node lent by the donor
//    tenant (Lucid: vcYVn). Jobs of more than `gpu_limit` GPUs (scale x factor = 8) skip it.
//  - Causality (deliberate difference): Lucid profiles in a separate pass before it
//    simulates the VCs, so a job that does not finish within the limit enters its VC at
//    its submit time, in parallel with its own profiling run. Here the job really runs on
//    the pool: at the limit it is stopped (a preemption: the simulator adds the restart
//    overhead) and only then enters its VC queue. Jobs that finish within the limit
//    complete in the profiler, as in Lucid.
//  - The elastic node is lent only while it is idle in the donor's virtual cluster; Lucid
//    adds a node to the pool even when the donor has none idle (its echo then silently
//    fails). A scale-up that finds no idle donor node is retried at the next 10 s check.
//
// Algorithm (one call per scheduling cycle at time t):
//  1. Stop every profiled job that has run `time_limit` without finishing; it leaves the
//     pool (returned to the caller, which queues it in its virtual cluster).
//  2. Least-GPU-First: start queued jobs in (GPUs, arrival) order with consolidate
//     placement on the pool; stop at the first that does not fit (head-of-line).
//  3. Scale up (t a multiple of 10 s): more than `scale_up_queue` jobs wait and the pool is
//     at its base size -> borrow the donor's highest-numbered idle node, then repeat 2.
//  4. Scale down (t a multiple of 100 s): fewer than `scale_down_queue` jobs wait, the
//     elastic node is idle and the forecast of submitted GPUs (mean of the next five
//     10-minute bins) is <= gpu_limit x 5 -> return the node to the donor.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "baselines/lucid_sharing.hpp"
#include "policy/placement.hpp"
#include "policy/policy.hpp"

namespace ds {

struct ProfilerConfig {
  std::vector<NodeId> base_nodes;
  TenantId elastic_donor;  // invalid: no elastic node
  Time time_limit = seconds(200);
  int gpu_limit = 8;
  std::size_t scale_up_queue = 10;
  std::size_t scale_down_queue = 5;
  Time scale_up_period = seconds(10);
  Time scale_down_period = seconds(100);
};

class LucidProfiler {
 public:
  explicit LucidProfiler(ProfilerConfig config);

  [[nodiscard]] bool takes(const JobSpec& j) const { return j.gpus <= config_.gpu_limit; }
  void enqueue(const JobSpec& j);
  // Takes a job that left while waiting out of the queue; true when it was there.
  bool withdraw(const JobSpec& j) { return queue_.erase({j.gpus, j.id}) > 0; }
  // Called for every finished job; true when it was running in the pool.
  bool finished(JobId id);

  // Steps 1-2; stopped jobs are appended to `stopped` (they are pending once `out` is applied).
  void run(const ClusterSnapshot& s, FreeMap& free, Decisions& out, std::vector<JobId>& stopped);
  // Steps 3-4 (then 2 again after a scale-up). `donor_nodes` is the donor's node list in
  // the caller's virtual cluster; the elastic node is taken from / returned to it.
  void scale(const ClusterSnapshot& s, FreeMap& free, const ThroughputForecast* forecast,
             std::vector<NodeId>* donor_nodes, Decisions& out);
  // Earliest time after `now` at which this stage needs a cycle (kNever: none).
  [[nodiscard]] Time next_wake(Time now) const;

  [[nodiscard]] const ProfilerConfig& config() const { return config_; }
  [[nodiscard]] std::span<const NodeId> nodes() const { return nodes_; }
  // Time from submit to the start of the profiling run; -1 when not profiled.
  [[nodiscard]] Time queue_of(JobId id) const { return prof_queue_[id]; }
  [[nodiscard]] std::size_t waiting() const { return queue_.size(); }

  struct Stats {
    std::size_t profiled = 0, completed = 0, stopped = 0;
    std::size_t scale_ups = 0, scale_downs = 0, scale_ups_deferred = 0;
  };
  [[nodiscard]] const Stats& stats() const { return stats_; }

 private:
  struct Running {
    JobId job;
    Time started;
    Placement placement;
  };
  void start_queued(const ClusterSnapshot& s, FreeMap& free, Decisions& out);

  ProfilerConfig config_;
  std::vector<NodeId> nodes_;              // base nodes + the elastic node while lent
  std::optional<NodeId> elastic_;          // the lent node
  std::set<std::pair<int, JobId>> queue_;  // (GPUs, arrival order)
  std::vector<Running> running_;
  PerJob<Time> prof_queue_;
  Stats stats_;
};

}  // namespace ds
