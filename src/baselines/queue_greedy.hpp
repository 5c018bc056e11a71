// The preemptive cycle shared by srtf and tiresias: a GPU budget walked in priority
// order, as the Lucid artifact codes both (simulation/policy/srtf.py and
// tiresias.py, steps 3-5 of `simulate`).
//
// Algorithm, for one partition (a tenant's virtual cluster, or the pool), given its
// pending and running jobs sorted by the policy:
//  1. budget = the partition's GPUs. Walk the jobs in order: a job whose GPUs fit the
//     remaining budget takes them, and is selected to start if it is pending; a
//     running job that does not fit is preempted. The budget counts GPUs, not
//     placements (Lucid's quirk): a selected job that then cannot be placed still
//     holds its share of the budget in this cycle.
//  2. Preempted jobs release their GPUs now; they may start again in a later cycle
//     (Lucid appends them to its queue after this tick's selection).
//  3. Selected pending jobs start in order with consolidate placement; one that does
//     not fit (fragmentation) stays pending, and the loop goes on.
// Waiting reasons: a pending job left out of the budget waits as `priority`, a selected
// one that cannot be placed as `fragmented` (or `no-fit`).
// Lucid breaks ties of its sort key by list position (Python's stable sort over
// que_list + run_list or run_list + que_list); `entry_order` reproduces those positions:
// it counts when a job last entered the pending list (arrival, preemption) or the
// running list (start), in Lucid's order of those steps within one tick.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "baselines/queue.hpp"

namespace ds {

class PreemptiveQueues {
 public:
  PreemptiveQueues(const PolicyContext& ctx, Scope scope);

  [[nodiscard]] const Partitions& partitions() const { return parts_; }
  // Pending and running jobs of partition p (unordered).
  [[nodiscard]] std::span<const JobId> active(std::size_t p) const { return active_[p]; }
  // The partitions that had an arrival or a completion in this cycle (set by intake),
  // ascending.
  [[nodiscard]] std::span<const std::uint32_t> changed() const { return changed_list_; }
  // Whether partition p changed since it last decided: an arrival, a completion, or any
  // change of its nodes' free capacity (its own starts and preemptions included). A
  // partition that did not could only repeat its last decision (none), with the same
  // reasons.
  [[nodiscard]] bool stale(std::size_t p) const { return stale_[p] != 0; }
  // Partition p has nothing to decide as it is (no pending job): no longer stale.
  void settle(std::size_t p) { stale_[p] = 0; }
  [[nodiscard]] std::uint64_t entry_order(JobId id) const { return entry_[id]; }

  // Syncs the free map, adds the snapshot's arrivals (rejecting those larger than their
  // partition) and adopted jobs, and drops its finished and withdrawn jobs.
  void intake(const ClusterSnapshot& s, Decisions& out);

  // The cycle above over partition p; `order` holds all of active(p), sorted. Calls
  // on_preempt(job) for every job it preempts (before the starts are decided).
  template <class OnPreempt>
  void decide(std::size_t p, std::span<const JobId> order, const ClusterSnapshot& s, Decisions& out,
              OnPreempt on_preempt) {
    stale_[p] = 0;
    select(p, order, s);
    FreeMap& free = free_.free();
    for (JobId id : preempt_) {
      on_preempt(id);
      free.give(s.runtime[id.index()].placement, s.jobs[id.index()].gpu_milli);
      out.preempt.push_back(PreemptJob{id});
      note_wait(out, id, WaitReason::Priority);
      entry_[id] = next_entry_++;
    }
    place(p, s, free, out);
  }

 private:
  void select(std::size_t p, std::span<const JobId> order, const ClusterSnapshot& s);
  void add(std::size_t p, JobId id);
  void drop(const ClusterSnapshot& s, JobId id);
  void place(std::size_t p, const ClusterSnapshot& s, FreeMap& free, Decisions& out);

  void touch(std::size_t p);

  Partitions parts_;
  PartitionFree free_;
  std::vector<std::vector<JobId>> active_;
  PerJob<std::int32_t> slot_;                  // index in its active_ list, -1 if none
  PerJob<std::uint64_t> entry_;                // see entry_order
  std::vector<std::uint8_t> changed_, stale_;  // by partition
  std::vector<std::uint32_t> changed_list_;
  std::vector<JobId> preempt_, prerun_, behind_;  // scratch of one decide()
  std::uint64_t next_entry_ = 0;
};

}  // namespace ds
