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
#include <algorithm>
#include <cmath>

#include "policy/deepshare/policy_impl.hpp"

namespace ds::deepshare {

Time DeepSharePolicy::checkpoint_after(const ClusterSnapshot& s, JobId id, Time from) const {
  const JobState& js = job_[id.index()];
  const Time interval = s.tenants[s.jobs[id.index()].tenant.index()].checkpoint_interval;
  if (interval <= 0) return from + std::max<Time>(c_.checkpoint_grid, kSecond);
  if (js.prog_speed <= 0) return from + interval;
  const double done = js.prog + static_cast<double>(from - js.prog_at) * js.prog_speed;
  const double next = (std::floor(std::max(0.0, done) / interval) + 1) * interval;
  return from + static_cast<Time>(std::ceil((next - done) / js.prog_speed));
}

void DeepSharePolicy::track_run(const ClusterSnapshot& s, JobId id) {
  JobState& js = job_[id.index()];
  js.run_id = ++runs_;
  checkpoints_.push(
      CheckpointEntry{checkpoint_after(s, id, s.now + c_.min_runtime), id, js.run_id});
}

void DeepSharePolicy::collect_checkpoints(const ClusterSnapshot& s) {
  // Step 2: the window keeps jobs that are still running this run and still cheap. A job's
  // loss grows at most as fast as wall time (speed <= 1), so an entry is looked at again
  // only once its loss could have passed slice_lost.
  // Entries of runs that ended stay until then too: the consumers skip them (run_id).
  std::erase_if(window_, [&](CheckpointEntry& e) {
    if (s.now < e.until) return false;
    JobState& js = job_[e.job.index()];
    bool gone = js.run_id != e.run || js.run == Run::None;
    if (!gone) {
      const Time lost = lost_now(s, e.job);
      gone = lost > c_.slice_lost;
      e.until = js.prog_speed <= 1 ? s.now + (c_.slice_lost - lost) : s.now;
    }
    if (gone && js.window_run == e.run) js.window_run = 0;
    return gone;
  });
  while (!checkpoints_.empty() && checkpoints_.top().at <= s.now) {
    CheckpointEntry e = checkpoints_.top();
    checkpoints_.pop();
    JobState& js = job_[e.job.index()];
    if (js.run_id != e.run || js.run == Run::None ||
        s.runtime[e.job.index()].status != JobStatus::Running)
      continue;  // stopped since (or started in the same cycle and not running yet)
    if (js.window_run != e.run) {
      const Time lost = lost_now(s, e.job);
      if (lost <= c_.slice_lost) {
        e.until = js.prog_speed <= 1 ? s.now + (c_.slice_lost - lost) : s.now;
        js.window_run = e.run;
        window_.push_back(e);
        ++epoch_;  // a new cheap victim
        ++window_epoch_;
      }
    }
    checkpoints_.push(CheckpointEntry{checkpoint_after(s, e.job, s.now), e.job, e.run});
  }
}

Time DeepSharePolicy::next_cheap() const {
  return checkpoints_.empty() ? kNever : on_grid(checkpoints_.top().at);
}

}  // namespace ds::deepshare
