// Running jobs by their next checkpoint, so that finding the jobs a preemption would cost
// almost nothing costs O(checkpoints passed), not a walk over every running job.
//
// Algorithm:
//  1. When a job starts (or is adopted), it enters a min-heap keyed by its first checkpoint
//     at least min_runtime after its start, tagged with a run id (stale after it stops).
//  2. Each cycle, entries whose time has come are popped: a job whose estimated loss is at
//     most slice_lost joins the window of cheap victims until its loss exceeds slice_lost,
//     and every popped job is pushed again at its next checkpoint (the estimate follows
//     its observed speed). With checkpoints at preemption (interval 0) a job is cheap
//     always and is looked at once per checkpoint_grid.
//  3. Consumers (time slicing, reclaim, drains) read the window, skip entries of runs that
//     have ended, and filter it by their own rules; the heap's top is the next time a new cheap
//     victim appears.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <span>
#include <vector>

#include "policy/deepshare/book.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/policy.hpp"

namespace ds::deepshare {

// A running job's next checkpoint; `run` tells stale entries apart.
struct CheckpointEntry {
  Time at = 0;
  JobId job;
  std::uint64_t run = 0;
  Time until = 0;  // in the window: surely still cheap before this (no need to look)
  bool operator>(const CheckpointEntry& o) const {
    return at != o.at ? at > o.at : job != o.job ? o.job < job : run > o.run;
  }
};

class Checkpoints {
 public:
  Checkpoints(const Config& c, Book& book) : c_(c), book_(book) {}
  // A run of `id` starts now: a new run id, and its first checkpoint in the heap.
  void track(const ClusterSnapshot& s, JobId id);
  // Step "checkpoints": the window as of this cycle (a new cheap victim frees capacity:
  // Book::capacity_freed).
  void collect(Cycle& cy);
  [[nodiscard]] std::span<const CheckpointEntry> window() const { return window_; }
  // Changes when a job reaches its checkpoint (new cheap victims).
  [[nodiscard]] std::uint64_t window_epoch() const { return window_epoch_; }
  // When the next job reaches its checkpoint (on the grid).
  [[nodiscard]] Time next_cheap() const;
  // Wake-ups at checkpoints fall on a 60-s grid (checkpoint_grid): a victim then loses at
  // most that much, and one cycle serves every checkpoint of the minute.
  [[nodiscard]] Time on_grid(Time t) const;
  void forget(JobId id) {  // a driver may reuse an id
    if (id.index() < window_run_.size()) window_run_[id.index()] = 0;
  }

 private:
  Time checkpoint_after(const ClusterSnapshot& s, JobId id, Time from) const;

  const Config& c_;
  Book& book_;
  std::priority_queue<CheckpointEntry, std::vector<CheckpointEntry>, std::greater<>> heap_;
  std::vector<CheckpointEntry> window_;    // jobs a preemption costs at most slice_lost now
  std::vector<std::uint64_t> window_run_;  // per job: the run whose entry is in window_ (0: none)
  std::uint64_t runs_ = 0;
  std::uint64_t window_epoch_ = 0;
};

}  // namespace ds::deepshare
