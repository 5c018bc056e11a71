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
//
// Cost follows changes, also with deep queues (issue #27): the order is kept, not sorted
// per cycle. A policy gives every job a WalkKey; a pending job's key is fixed while it
// waits, a running job's key is stored once and read as key.a - shift at the cycle (SRTF:
// every running job's remaining time falls at the same rate; Tiresias: shift 0, and a
// running job crossing the threshold is re-keyed). Running jobs sit in one sorted array per
// partition (with prefix sums of their GPUs); pending jobs in one ordered set per GPU count.
// The walk merges the running jobs with the head of each GPU count whose jobs still fit the
// remaining budget: a pending job of g GPUs that comes after the budget fell below g can
// never be selected, so those sets are left at once (the budget only falls along the walk),
// and their jobs are `behind` without being read. The running jobs between two pending
// ones are kept at once when their GPUs together fit the budget (each then fits what is
// left), and looked at one by one only where some must be preempted. Of those, only the ones whose
// reason last stated was not Priority (a selected job that could not be placed, a job told to wait
// for the round) are stated again: a note equal to the last changes nothing
// (ClusterState::note_waits). Per cycle: O((selected + GPU counts) x log n + running jobs looked at
// one by one), plus the prefix sums once per cycle in which the running jobs changed. Jobs change
// sets when the snapshot shows it: a job the cycle started or preempted is filed again by its state
// in the next snapshot (a start the driver did not carry out stays pending), as are requeued jobs.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "baselines/queue.hpp"

namespace ds {

// A job's place in a partition's walk order (ascending); see above.
struct WalkKey {
  std::int64_t a = 0;
  std::int64_t b = 0;
  std::uint64_t entry = 0;
  auto operator<=>(const WalkKey&) const = default;
};

class PreemptiveQueues {
 public:
  // The policy's order: the key of a pending job, and the stored key of a running one
  // (read as a - shift). Both are asked when the job is filed (the snapshot's state).
  class Keys {
   public:
    virtual ~Keys() = default;
    virtual WalkKey pending(const ClusterSnapshot& s, JobId id) = 0;
    virtual WalkKey running(const ClusterSnapshot& s, JobId id) = 0;
  };

  PreemptiveQueues(const PolicyContext& ctx, Scope scope);

  [[nodiscard]] const Partitions& partitions() const { return parts_; }
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
  // Jobs of partition p that wait (pending, or preempted in this cycle).
  [[nodiscard]] std::size_t waiting(std::size_t p) const { return waiting_[p]; }
  // The partitions whose nodes changed since the last intake (stale again), ascending.
  [[nodiscard]] std::span<const std::uint32_t> restaled() const { return restaled_; }
  [[nodiscard]] bool running(JobId id) const { return where_[id] == Where::Running; }

  // Syncs the free map, files the jobs the last cycle started or preempted and the requeued
  // ones by their state, adds the snapshot's arrivals (rejecting those larger than their
  // partition) and adopted jobs, and drops its finished and withdrawn jobs.
  void intake(const ClusterSnapshot& s, Decisions& out, Keys& keys);
  // Records a reason the policy stated for the pending job `id` (other than the walk's).
  void stated(const ClusterSnapshot& s, JobId id, WaitReason r);
  // A running job's stored key changes (Tiresias: it passed into the low queue).
  void rekey_running(const ClusterSnapshot& s, JobId id, const WalkKey& key);

  // The cycle above over partition p, in the order of the keys (running ones shifted by
  // `shift`). Calls on_preempt(job) for every job it preempts (before the starts are
  // decided).
  template <class OnPreempt>
  void decide(std::size_t p, std::int64_t shift, const ClusterSnapshot& s, Decisions& out,
              OnPreempt on_preempt) {
    stale_[p] = 0;
    ++walk_;
    select(p, shift);
    FreeMap& free = free_.free();
    for (JobId id : preempt_) {
      on_preempt(id);
      unfile(s, id);
      limbo(p, id, true);
      free.give(s.runtime[id.index()].placement, s.jobs[id.index()].gpu_milli);
      out.preempt.push_back(PreemptJob{id});
      note_wait(out, id, WaitReason::Priority);
      entry_[id] = next_entry_++;
    }
    place(p, s, free, out);
  }

 public:
  struct Run {
    WalkKey key;
    int gpus = 0;
    JobId id;
  };

 private:
  struct Class {
    int gpus = 0;
    std::set<std::pair<WalkKey, JobId>> jobs;
  };
  struct Part {
    std::vector<Run> running;   // ascending key
    std::vector<int> run_sums;  // run_sums[i]: GPUs of running[0, i); stale when empty

    std::vector<Class> pending;  // by GPU count, in first-seen order
    std::vector<JobId> restate;  // pending jobs whose reason last stated is not Priority
  };
  enum class Where : std::uint8_t { None, Pending, Running, Limbo };

  void select(std::size_t p, std::int64_t shift);
  void place(std::size_t p, const ClusterSnapshot& s, FreeMap& free, Decisions& out);
  // Takes the job out of the partition's sets (it stays known); file() puts it back by state.
  void unfile(const ClusterSnapshot& s, JobId id);
  // `stated`: the reason this cycle states for it (else the snapshot's).
  void file(const ClusterSnapshot& s, JobId id, Keys& keys, std::optional<WaitReason> stated);
  void limbo(std::size_t p, JobId id, bool waits);
  void drop(const ClusterSnapshot& s, JobId id);
  void set_restate(std::size_t p, JobId id, bool on);
  static void add_run(Part& part, const Run& r);
  static void drop_run(Part& part, const WalkKey& key);
  Class& class_for(Part& part, int gpus);

  void touch(std::size_t p);

  Partitions parts_;
  PartitionFree free_;
  std::vector<Part> parts_state_;
  std::vector<std::size_t> waiting_;
  PerJob<Where> where_;
  PerJob<std::uint8_t> known_;                 // pending or running in a partition
  PerJob<std::uint8_t> limbo_waits_;           // in limbo_ after a preemption
  PerJob<WalkKey> key_;                        // the key it is filed under
  PerJob<std::int32_t> restate_slot_;          // index in its Part::restate, -1 if none
  PerJob<std::uint64_t> entry_;                // see entry_order
  PerJob<std::uint64_t> selected_;             // the walk that last selected it
  std::vector<std::uint8_t> changed_, stale_;  // by partition
  std::vector<std::uint32_t> changed_list_, restaled_;
  std::vector<JobId> limbo_;                       // to file at the next intake
  std::vector<JobId> preempt_, prerun_;            // scratch of one decide()
  std::vector<std::pair<WalkKey, JobId>> behind_;  // scratch of one decide()
  std::vector<std::pair<std::pair<WalkKey, JobId>, std::uint32_t>> heap_;  // scratch
  std::uint64_t next_entry_ = 0;
  std::uint64_t walk_ = 0;
};

}  // namespace ds
