// The backfill start loop of OrderedQueues (queue.hpp) in O(what changed), for deep queues.
//
// The plain loop walks a partition's whole queue in order, starts every job that can be
// placed, and states `no-fit` / `fragmented` for each one that cannot: O(queue) per cycle,
// quadratic when a hundred thousand jobs wait (issue #27). This index gives the same
// starts, in the same order, and the same waiting reasons as far as they change anything.
// Why it is exact:
//  - Whether a job can be placed depends only on its request (GPUs, milli-GPUs) and the free
//    map (place_job), so the queued jobs fall into request classes that share the answer.
//  - Within one loop the free map only loses capacity (takes), and placement is monotone in
//    free capacity (consolidate: a node with enough free GPUs, enough wholly free nodes and
//    a remainder node; fraction: a GPU with enough free share). A class whose first job in
//    the walk does not fit has no job that fits for the rest of the loop: it is dead.
//  - So the loop is a merge of the live classes' jobs in queue order (a heap of one
//    candidate per class): each candidate either starts (the next start of the plain loop,
//    since everything before it belongs to dead classes) or kills its class.
//  - The reason the plain loop states for a job it passes is room_reason(free GPUs at that
//    moment, job): NoFit for fractional jobs and for jobs larger than the free GPUs, else
//    Fragmented. Free GPUs only fall along the walk, so a dead whole-GPU class of g GPUs is
//    Fragmented from its death up to the first start that leaves fewer than g free, NoFit
//    after; the walk ends at the queue's end or, when the partition is full (no free GPU,
//    no fractional job queued), right after the last start, where only the next job is
//    stated (NoFit).
//  - A reason equal to the one last stated changes nothing (ClusterState::note_waits), so
//    only the jobs whose reason changes are stated: per class, the queued jobs are kept in
//    one ordered set per reason last stated (priority, no-fit, fragmented), and a range of
//    the walk moves the jobs of the other two sets. The notes are emitted in queue order,
//    as the plain loop emits them.
// Cost per loop: O(classes x log n + starts x log n + reasons that change x log n).
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "policy/policy.hpp"

namespace ds {

// Order of a queued job: ascending (primary, secondary, job id).
struct QueueKey {
  double primary = 0;
  std::int64_t secondary = 0;
  JobId job;
  auto operator<=>(const QueueKey&) const = default;
};

// One partition's queued jobs by request class and by the reason last stated for them.
class BackfillIndex {
 public:
  // The reasons a queued job may have been given by the start loops (index into the sets).
  enum Slot : std::uint8_t { kPriority, kNoFit, kFragmented, kSlots };
  static Slot slot_of(WaitReason r);
  static WaitReason reason_of(Slot s);

  struct Class {
    int gpus = 0;
    int milli = kMilliPerGpu;
    std::array<std::set<QueueKey>, kSlots> jobs;
    std::size_t size = 0;
  };

  // `j` was queued under `k` and given reason Priority.
  void add(const JobSpec& j, const QueueKey& k);
  void erase(const JobSpec& j, const QueueKey& k);
  // Records that reason `r` was stated for the queued job `j` (moves it between sets).
  void stated(const JobSpec& j, const QueueKey& k, WaitReason r);

  [[nodiscard]] std::size_t classes() const { return classes_.size(); }
  [[nodiscard]] const Class& at(std::size_t c) const { return classes_[c]; }
  [[nodiscard]] std::uint32_t class_of(const JobSpec& j) const { return class_[j.id]; }
  // The first job of class c after `k` (from the start when `k` is null), or null.
  [[nodiscard]] const QueueKey* first_after(std::size_t c, const QueueKey* k) const;
  // States `r` for every job of class c with key in [from, to) (to null: to the end) whose
  // reason last stated differs, appending (key, reason) to `notes`.
  void restate(std::size_t c, const QueueKey& from, const QueueKey* to, WaitReason r,
               std::vector<std::pair<QueueKey, WaitReason>>& notes);

 private:
  std::uint32_t find_or_add(const JobSpec& j);

  std::vector<Class> classes_;
  PerJob<std::uint32_t> class_;  // valid while queued
  PerJob<std::uint8_t> slot_;    // the set the job is in (Slot), valid while queued
};

}  // namespace ds
