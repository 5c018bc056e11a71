// Shared parts of the queue-ordering baselines (fifo, sjf, qssf; srtf and tiresias
// use Partitions and Scope too): where a queue may place its jobs, an ordered queue,
// and the start loop.
//
// Scope is a property of a policy profile (`--set scope=isolated|pooled`):
//  - isolated: one queue per tenant over the nodes it owns (Lucid simulates each
//    virtual cluster alone: simulator.py runs one process per VC). A cluster where no
//    node is owned by a tenant (e.g. Alibaba openb) has no virtual clusters: it is one
//    pool, as in `pooled`.
//  - pooled: one queue over every node of the cluster.
// Start loop over a queue, in its order, with consolidate placement:
//  - head-of-line (Lucid's FIFO/SJF/QSSF): stop at the first job that does not fit;
//  - backfill: skip it and try the next (greedy, no reservation).
// A job that does not fit waits as `no-fit` or `fragmented`; jobs behind a head-of-line
// block keep `priority`.
// Cost follows changes: the queues keep one free map across cycles (synced from the
// snapshot's changed nodes), each partition is an indexed node set of it, and a partition's
// start loop runs only in cycles where its queue or its nodes changed: otherwise the loop
// would try the same jobs on the same free GPUs, start nothing and state the same reasons.
// The backfill loop looks at one job per request class and at the jobs whose reason changes
// instead of the whole queue (request_index.hpp; start_backfill() in queue.cpp says why that
// is exact).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "baselines/request_index.hpp"
#include "policy/placement.hpp"
#include "policy/policy.hpp"

namespace ds {

enum class Scope : std::uint8_t { Isolated, Pooled };
const char* to_string(Scope s);
// Reads `scope=isolated|pooled` (fallback when unset); InputError on another value.
Scope read_scope(const PolicyOptions& options, Scope fallback);

enum class StartRule : std::uint8_t { HeadOfLine, Backfill };
// Reads `backfill=on|off`; the fallback is off (Lucid) when isolated, on when pooled.
StartRule read_start_rule(const PolicyOptions& options, Scope scope);

// Which nodes each queue schedules on.
class Partitions {
 public:
  Partitions(const Cluster& cluster, std::size_t tenants, Scope scope);

  [[nodiscard]] Scope scope() const { return scope_; }
  [[nodiscard]] bool per_tenant() const { return per_tenant_; }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }
  [[nodiscard]] std::size_t of(const JobSpec& j) const {
    return per_tenant_ ? j.tenant.index() : 0;
  }
  [[nodiscard]] std::span<const NodeId> nodes(std::size_t p) const { return nodes_[p]; }
  [[nodiscard]] int capacity(std::size_t p) const { return capacity_[p]; }
  // A rejection when `j` asks for more GPUs than its partition will ever have.
  [[nodiscard]] std::optional<RejectJob> too_large(const ClusterSnapshot& s,
                                                   const JobSpec& j) const;

 private:
  Scope scope_;
  bool per_tenant_;
  std::vector<std::vector<NodeId>> nodes_;
  std::vector<int> capacity_;
};

// Tries `job` on `nodes` (consolidate / fraction placement); on success takes its
// GPUs in `free` and appends the start to `out`.
bool try_start(const JobSpec& job, FreeMap& free, std::span<const NodeId> nodes, Decisions& out);
bool try_start(const JobSpec& job, FreeMap& free, FreeMap::SetId nodes, Decisions& out);

// The policy's free map kept across cycles, one indexed node set per partition, and which
// partitions changed (their nodes' free capacity, or their queue) since they last decided.
class PartitionFree {
 public:
  explicit PartitionFree(std::size_t partitions) : dirty_(partitions, 0) {}

  // Syncs the map with the snapshot (building the sets of `parts` on first use) and marks
  // the partitions whose nodes changed.
  void sync(const ClusterSnapshot& s, const Partitions& parts);
  [[nodiscard]] FreeMap& free() { return free_; }
  [[nodiscard]] FreeMap::SetId set(std::size_t p) const { return sets_[p]; }
  [[nodiscard]] int free_gpus(std::size_t p) const { return free_.set_free_gpus(sets_[p]); }
  void mark(std::size_t p) {
    if (dirty_[p]) return;
    dirty_[p] = 1;
    list_.push_back(static_cast<std::uint32_t>(p));
  }
  // The partitions marked since the last call, ascending; they count as unchanged again.
  std::span<const std::uint32_t> take_changed();

 private:
  FreeMap free_;
  std::vector<FreeMap::SetId> sets_;
  std::vector<std::uint32_t> part_of_node_;  // kNoPart for nodes of no partition
  std::vector<std::uint8_t> dirty_;
  std::vector<std::uint32_t> list_, taken_;
};

// Order of a queued job: ascending (primary, secondary, job id).
struct QueueKey {
  double primary = 0;
  std::int64_t secondary = 0;
  JobId job;
  auto operator<=>(const QueueKey&) const = default;
};

// One ordered queue per partition, and the start loop over them.
class OrderedQueues {
 public:
  OrderedQueues(Partitions partitions, StartRule rule);

  [[nodiscard]] const Partitions& partitions() const { return parts_; }
  [[nodiscard]] StartRule rule() const { return rule_; }
  [[nodiscard]] const std::set<QueueKey>& queue(std::size_t p) const { return queues_[p]; }
  [[nodiscard]] bool empty() const { return queued_ == 0; }

  // Queues `j` (the caller states Priority for it).
  void push(const JobSpec& j, double primary, std::int64_t secondary = 0);
  // Takes `j` out of its queue if it is queued (a job withdrawn while waiting).
  void remove(const JobSpec& j);
  // Syncs the free map, then queues the snapshot's arrivals (rejecting those too large for
  // their partition) and requeued jobs, each under key(job) = {primary, secondary}; each
  // waits as `Priority` until the start loop looks at it.
  template <class KeyFn>
  void intake(const ClusterSnapshot& s, KeyFn key, Decisions& out) {
    free_.sync(s, parts_);
    for (JobId id : s.withdrawn) remove(s.jobs[id.index()]);
    for (JobId id : s.arrived) {
      const JobSpec& j = s.jobs[id.index()];
      if (auto r = parts_.too_large(s, j)) {
        out.reject.push_back(std::move(*r));
        continue;
      }
      auto [primary, secondary] = key(j);
      push(j, primary, secondary);
      note_wait(out, id, WaitReason::Priority);
    }
    for (JobId id : s.requeued) {
      const JobSpec& j = s.jobs[id.index()];
      auto [primary, secondary] = key(j);
      push(j, primary, secondary);
      note_wait(out, id, WaitReason::Priority);
    }
  }

  // The partitions whose queue or nodes changed since the last call, ascending: the only
  // ones where a start loop can decide anything new (elsewhere it would try the same jobs
  // on the same free GPUs, start nothing and state the same reasons).
  [[nodiscard]] std::span<const std::uint32_t> changed() { return free_.take_changed(); }
  // Counts partition p as changed in the next cycle (its loop's order will differ).
  void revisit(std::size_t p) { free_.mark(p); }
  // The start loop over partition p in queue order, on the free map synced by intake().
  void start(std::size_t p, const ClusterSnapshot& s, Decisions& out);
  // The same over every partition that changed.
  void start_all(const ClusterSnapshot& s, Decisions& out);
  // The start loop over partition p in the given order (some of its queued jobs)
  // instead of the queue's.
  void start_in_order(std::size_t p, std::span<const JobId> order, const ClusterSnapshot& s,
                      Decisions& out);

 private:
  class Loop;

  // Takes the queued job `id` out of partition p's queue (it starts).
  void take(std::size_t p, const JobSpec& j);
  // States `reason` for the queued job `j` of partition p.
  void note(std::size_t p, const JobSpec& j, WaitReason reason, Decisions& out);
  void start_backfill(std::size_t p, const ClusterSnapshot& s, Decisions& out);

  Partitions parts_;
  StartRule rule_;
  PartitionFree free_;
  std::vector<std::set<QueueKey>> queues_;
  std::vector<int> fractional_;  // per partition: queued jobs asking for part of a GPU
  PerJob<QueueKey> key_of_;      // valid while queued
  std::size_t queued_ = 0;
  std::vector<RequestIndex<QueueKey>> index_;  // per partition, with StartRule::Backfill only
  // Scratch of one start_backfill().
  struct Candidate {
    QueueKey key;
    std::uint32_t cls;
    bool operator>(const Candidate& o) const { return o.key < key; }
  };
  std::vector<Candidate> heap_;
  std::vector<std::pair<QueueKey, int>> starts_;  // started job, free GPUs after it
  std::vector<std::pair<std::uint32_t, QueueKey>> dead_;
  std::vector<std::pair<QueueKey, WaitReason>> notes_;
};

}  // namespace ds
