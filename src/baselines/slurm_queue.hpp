// The `slurm` baseline's pending queue (slurm.hpp) in sort_job_queue2's order - priority
// descending, then submit time, then job id - kept without re-sorting it at every decay tick
// (issue #27: with 100k jobs waiting, re-sorting every PriorityCalcPeriod made the baseline
// quadratic in the queue).
//
// Why the order can be kept: between two decay ticks Slurm's priorities are frozen; at a tick
// every pending job's priority is recomputed from the same inputs except its age, and the age
// factor can only grow with the time since the job became eligible. Jobs that share every
// other input (tenant, GPUs, QOS) and the same offset from submit to eligible (0 for a fresh
// job, the requeue delay after a requeue) are a class: within it, an earlier submit means an
// age at least as large, so its order by (submit, id) is the queue's order among them, at
// every tick. The queue keeps each class sorted once and merges the classes' heads on a walk,
// computing a head's priority (through the caller's function) only when the walk reaches it.
// One exception to the frozen rule: a requeued job keeps the priority it had until the next
// tick (Slurm recomputes it then); such jobs wait, with that priority, in a small set of their
// own until settle() moves them into their classes.
//
// Rules for the caller: classes change only between walks (add() and settle() are not called
// while a Walk is in use); during a walk the job it just yielded may be removed and kept jobs
// may be added (a preemption's victims), which the walk sees if they order after the current
// position - as iterating one sorted set does.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/types.hpp"
#include "policy/policy.hpp"

namespace ds {

// A place in the queue's order.
struct SlurmQueueKey {
  std::uint32_t priority = 0;
  Time submit = 0;
  JobId job;
  bool operator<(const SlurmQueueKey& o) const {
    if (priority != o.priority) return priority > o.priority;
    if (submit != o.submit) return submit < o.submit;
    return job < o.job;
  }
};

// The inputs a job's priority shares with its class.
struct SlurmQueueClass {
  std::uint32_t tenant = 0;
  int gpus = 0;
  bool tenant_qos = true;
  Time offset = 0;  // eligible - submit
  auto operator<=>(const SlurmQueueClass&) const = default;
};

class SlurmQueue {
 public:
  // A settled job's priority now (computed at the last tick).
  using Priority = std::function<std::uint32_t(JobId)>;
  // `reference`: the straightforward queue instead (tests only: SlurmConfig::reference_scan):
  // every job in one sorted set with its priority, all recomputed and re-sorted at settle().
  explicit SlurmQueue(Priority priority, bool reference = false)
      : priority_(std::move(priority)), reference_(reference) {}

  // A job whose priority follows its class.
  void add(JobId id, const SlurmQueueClass& c, Time submit);
  // A requeued job that keeps `priority` until settle().
  void add_kept(JobId id, const SlurmQueueClass& c, Time submit, std::uint32_t priority);
  void remove(JobId id);
  // A decay tick: the kept jobs join their classes (the reference: every job's priority is
  // recomputed).
  void settle();
  // Whether a queued job keeps its own priority (added with add_kept(), not settled yet).
  [[nodiscard]] bool kept(JobId id) const { return entry_[id].queued && entry_[id].kept; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

  // The queued jobs in order.
  class Walk {
   public:
    explicit Walk(const SlurmQueue& q);
    std::optional<JobId> next();

   private:
    using Member = std::set<std::pair<Time, JobId>>::const_iterator;
    struct Head {
      SlurmQueueKey key;
      std::size_t cls = 0;
      Member it;
    };
    void push(std::size_t cls, Member it);
    const SlurmQueue& q_;
    std::vector<Head> heap_;  // the classes' next members, the first in front
    std::optional<SlurmQueueKey> last_;
  };

 private:
  struct Entry {
    bool queued = false;
    bool kept = false;    // keeps its own priority until settle()
    bool listed = false;  // in listed_ (kept, or every job of the reference), not its class
    std::size_t cls = 0;
    Time submit = 0;
    std::uint32_t priority = 0;  // listed jobs only
  };
  std::size_t class_of(const SlurmQueueClass& c);
  void list(JobId id, Entry& e, std::uint32_t priority);
  Priority priority_;
  bool reference_ = false;
  std::map<SlurmQueueClass, std::size_t> index_;
  std::vector<std::set<std::pair<Time, JobId>>> members_;  // per class, by (submit, id)
  std::set<SlurmQueueKey> listed_;                         // with their own priorities
  PerJob<Entry> entry_;
  std::size_t size_ = 0;
};

}  // namespace ds
