#include "baselines/queue_greedy.hpp"

#include <algorithm>

namespace ds {

PreemptiveQueues::PreemptiveQueues(const PolicyContext& ctx, Scope scope)
    : parts_(ctx.cluster, ctx.tenants.size(), scope),
      free_(parts_.size()),
      active_(parts_.size()),
      slot_(-1),
      changed_(parts_.size(), 0),
      stale_(parts_.size(), 1) {}

void PreemptiveQueues::touch(std::size_t p) {
  stale_[p] = 1;
  if (changed_[p]) return;
  changed_[p] = 1;
  changed_list_.push_back(static_cast<std::uint32_t>(p));
}

void PreemptiveQueues::add(std::size_t p, JobId id) {
  slot_[id] = static_cast<std::int32_t>(active_[p].size());
  active_[p].push_back(id);
  entry_[id] = next_entry_++;
  touch(p);
}

void PreemptiveQueues::drop(const ClusterSnapshot& s, JobId id) {
  const std::int32_t k = slot_[id];
  if (k < 0) return;
  const std::size_t p = parts_.of(s.jobs[id.index()]);
  auto& list = active_[p];
  list[static_cast<std::size_t>(k)] = list.back();
  slot_[list[static_cast<std::size_t>(k)]] = k;
  list.pop_back();
  slot_[id] = -1;
  touch(p);
}

void PreemptiveQueues::intake(const ClusterSnapshot& s, Decisions& out) {
  for (std::uint32_t p : changed_list_) changed_[p] = 0;
  changed_list_.clear();
  free_.sync(s, parts_);
  for (std::uint32_t p : free_.take_changed()) stale_[p] = 1;
  for (const auto& f : s.finished) drop(s, f.job);
  for (JobId id : s.withdrawn) drop(s, id);
  for (JobId id : s.adopted) {  // running, started by an earlier policy object
    drop(s, id);
    add(parts_.of(s.jobs[id.index()]), id);
  }
  for (JobId id : s.arrived) {
    const JobSpec& j = s.jobs[id.index()];
    if (auto r = parts_.too_large(s, j)) {
      out.reject.push_back(std::move(*r));
      continue;
    }
    slot_[id] = -1;  // a driver may reuse the id of a job that left
    add(parts_.of(j), id);
    note_wait(out, id, WaitReason::Priority);
  }
  std::sort(changed_list_.begin(), changed_list_.end());
}

void PreemptiveQueues::select(std::size_t p, std::span<const JobId> order,
                              const ClusterSnapshot& s) {
  preempt_.clear();
  prerun_.clear();
  behind_.clear();
  int budget = parts_.capacity(p);
  for (JobId id : order) {
    const int gpus = s.jobs[id.index()].gpus;
    const bool running = s.runtime[id.index()].status == JobStatus::Running;
    if (gpus <= budget) {
      budget -= gpus;
      if (!running) prerun_.push_back(id);
    } else if (running) {
      preempt_.push_back(id);
    } else {
      behind_.push_back(id);  // the budget went to jobs ordered first
    }
  }
}

void PreemptiveQueues::place(std::size_t p, const ClusterSnapshot& s, FreeMap& free,
                             Decisions& out) {
  for (JobId id : behind_) note_wait(out, id, WaitReason::Priority);
  for (JobId id : prerun_) {
    const JobSpec& j = s.jobs[id.index()];
    if (try_start(j, free, free_.set(p), out))
      entry_[id] = next_entry_++;
    else
      note_wait(out, id, room_reason(free.set_free_gpus(free_.set(p)), j));
  }
}

}  // namespace ds
