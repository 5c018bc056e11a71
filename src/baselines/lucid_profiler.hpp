// Lucid's profiling stage: new jobs first run briefly on a small profiling pool.
//
// Source: Lucid artifact (S-Lab-System-Group/Lucid @63685a3), simulation/profiler/lgf.py
// (LeastGPUFirstProfiler.profile), profiler/profiler.py, utils.py (profiler_config:
// 2 nodes, 200 s, factor 4; one node each from vc8Gr and vcefl), cluster.py (the elastic
// node and its echo on vcYVn, VC.update_vc_node).
//
// Assumptions:
//  - The pool is `base_nodes` plus, while scaled up, one elastic node lent by each donor
//    tenant (Lucid: one, vcYVn). Jobs of more than `gpu_limit` GPUs (scale x factor = 8)
//    skip it, and so do jobs larger than the base nodes' GPUs (`pool_gpus`): on nodes of
//    mixed sizes the pool may hold fewer than gpu_limit GPUs, and such a job would wait in
//    the profiler's queue forever (never on Venus, whose two 8-GPU base nodes hold 16).
//  - Size (our decision, docs/baselines.md "lucid"): Lucid sizes the profiler per cluster
//    (utils.py profiler_config: 2 nodes for Venus's 1,080 GPUs). A cluster of `units` times
//    that size gets `units` times the profiler: 2 x units base nodes, `units` elastic donors,
//    and the queue and forecast thresholds of steps 3-4 times `units`. units = 1 is Lucid's.
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
//  3. Scale up (t a multiple of 10 s): more than `scale_up_queue` x units jobs wait and a
//     donor has not lent its node -> each such donor lends its highest-numbered idle node
//     (a donor with none retries at the next check), then repeat 2.
//  4. Scale down (t a multiple of 100 s): fewer than `scale_down_queue` x units jobs wait and
//     the forecast of submitted GPUs (mean of the next five 10-minute bins) is <=
//     gpu_limit x 5 x units -> every lent node that is idle returns to its donor.
// Cost: a cycle costs O(stops + starts): runs end in start order (a queue), and the
// head-of-line start loop is tried only when the queue or the pool's free GPUs changed.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "baselines/lucid_sharing.hpp"
#include "policy/placement.hpp"
#include "policy/policy.hpp"

namespace ds {

struct ProfilerConfig {
  std::vector<NodeId> base_nodes;
  std::vector<TenantId> elastic_donors;  // empty: no elastic node
  Time time_limit = seconds(200);
  int gpu_limit = 8;
  int pool_gpus = 0;                // GPUs of base_nodes (lucid_profiler_nodes); 0: not limited
  std::size_t units = 1;            // see the assumptions: thresholds are per unit
  std::size_t scale_up_queue = 10;  // per unit
  std::size_t scale_down_queue = 5;
  Time scale_up_period = seconds(10);
  Time scale_down_period = seconds(100);
};

class LucidProfiler {
 public:
  explicit LucidProfiler(ProfilerConfig config);

  [[nodiscard]] bool takes(const JobSpec& j) const {
    return j.gpus <= config_.gpu_limit && (config_.pool_gpus == 0 || j.gpus <= config_.pool_gpus);
  }
  void enqueue(const JobSpec& j);
  // Takes a job that left while waiting out of the queue; true when it was there.
  bool withdraw(const JobSpec& j) {
    retry_ = true;
    return queue_.erase({j.gpus, j.id}) > 0;
  }
  // The pool's free GPUs changed outside run() (a job in it ended): try the queue again.
  void pool_changed() { retry_ = true; }
  // Whether node n is in the pool now.
  [[nodiscard]] bool in_pool(NodeId n) const {
    return n.index() < pool_mark_.size() && pool_mark_[n.index()] != 0;
  }
  // Called for every finished job; true when it was running in the pool.
  bool finished(JobId id);

  // Steps 1-2; stopped jobs are appended to `stopped` (they are pending once `out` is applied).
  void run(const ClusterSnapshot& s, FreeMap& free, Decisions& out, std::vector<JobId>& stopped);
  // A node lent to the pool (lent) or given back to its donor (!lent) by scale().
  struct Move {
    std::size_t donor;  // index into config().elastic_donors
    NodeId node;
    bool lent;
  };
  // Steps 3-4 (then 2 again after a scale-up). `donor_nodes[k]` is donor k's node list in
  // the caller's virtual cluster (ascending); elastic nodes are taken from / returned to it,
  // and each move is reported in `moves`.
  void scale(const ClusterSnapshot& s, FreeMap& free, const ThroughputForecast* forecast,
             std::span<std::vector<NodeId>* const> donor_nodes, Decisions& out,
             std::vector<Move>& moves);
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
  [[nodiscard]] std::size_t threshold(std::size_t per_unit) const {
    return per_unit * config_.units;
  }

  ProfilerConfig config_;
  void mark_pool(NodeId n, bool in);

  std::vector<NodeId> nodes_;                   // base nodes + the elastic nodes while lent
  std::vector<std::uint8_t> pool_mark_;         // by node: in nodes_
  std::vector<std::optional<NodeId>> elastic_;  // per donor: its lent node
  std::size_t lent_ = 0;
  std::set<std::pair<int, JobId>> queue_;  // (GPUs, arrival order)
  std::deque<Running> running_;            // in start order; ended runs are skipped lazily
  PerJob<std::uint8_t> in_pool_;           // running in the pool now
  PerJob<Time> start_of_;                  // start of its pool run (tells stale entries)
  bool retry_ = true;  // the start loop may start something (queue or pool changed)
  PerJob<Time> prof_queue_;
  Stats stats_;
};

}  // namespace ds
