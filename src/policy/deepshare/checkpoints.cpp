#include "policy/deepshare/checkpoints.hpp"

#include <algorithm>
#include <cmath>

namespace ds::deepshare {

Time Checkpoints::checkpoint_after(const ClusterSnapshot& s, JobId id, Time from) const {
  const JobState& js = book_.job(id);
  const Time interval = s.tenants[s.jobs[id.index()].tenant.index()].checkpoint_interval;
  if (interval <= 0) return from + std::max<Time>(c_.checkpoint_grid, kSecond);
  if (js.prog_speed <= 0) return from + interval;
  const double done = js.prog + static_cast<double>(from - js.prog_at) * js.prog_speed;
  const double next = (std::floor(std::max(0.0, done) / interval) + 1) * interval;
  return from + static_cast<Time>(std::ceil((next - done) / js.prog_speed));
}

void Checkpoints::track(const ClusterSnapshot& s, JobId id) {
  JobState& js = book_.job(id);
  js.run_id = ++runs_;
  heap_.push(CheckpointEntry{checkpoint_after(s, id, s.now + c_.min_runtime), id, js.run_id});
}

void Checkpoints::collect(Cycle& cy) {
  const ClusterSnapshot& s = cy.s;
  if (window_run_.size() < s.jobs.size()) window_run_.resize(s.jobs.size(), 0);
  // Step 2: the window keeps jobs that are still running this run and still cheap. A job's
  // loss grows at most as fast as wall time (speed <= 1), so an entry is looked at again
  // only once its loss could have passed slice_lost.
  // Entries of runs that ended stay until then too: the consumers skip them (run_id).
  std::erase_if(window_, [&](CheckpointEntry& e) {
    if (s.now < e.until) return false;
    const JobState& js = book_.job(e.job);
    bool gone = js.run_id != e.run || js.run == Run::None;
    if (!gone) {
      const Time lost = book_.lost_now(s, e.job);
      gone = lost > c_.slice_lost;
      e.until = js.prog_speed <= 1 ? s.now + (c_.slice_lost - lost) : s.now;
    }
    std::uint64_t& in = window_run_[e.job.index()];
    if (gone && in == e.run) in = 0;
    return gone;
  });
  while (!heap_.empty() && heap_.top().at <= s.now) {
    CheckpointEntry e = heap_.top();
    heap_.pop();
    const JobState& js = book_.job(e.job);
    if (js.run_id != e.run || js.run == Run::None ||
        s.runtime[e.job.index()].status != JobStatus::Running)
      continue;  // stopped since (or started in the same cycle and not running yet)
    if (window_run_[e.job.index()] != e.run) {
      const Time lost = book_.lost_now(s, e.job);
      if (lost <= c_.slice_lost) {
        e.until = js.prog_speed <= 1 ? s.now + (c_.slice_lost - lost) : s.now;
        window_run_[e.job.index()] = e.run;
        window_.push_back(e);
        book_.capacity_freed();  // a new cheap victim
        ++window_epoch_;
      }
    }
    heap_.push(CheckpointEntry{checkpoint_after(s, e.job, s.now), e.job, e.run});
  }
}

Time Checkpoints::next_cheap() const {
  return heap_.empty() ? kNever : on_grid(heap_.top().at);
}

Time Checkpoints::on_grid(Time t) const {
  if (t == kNever || c_.checkpoint_grid <= 0) return t;
  return (t + c_.checkpoint_grid - 1) / c_.checkpoint_grid * c_.checkpoint_grid;
}

}  // namespace ds::deepshare
