#include "baselines/queue_greedy.hpp"

#include <algorithm>

namespace ds {

PreemptiveQueues::PreemptiveQueues(const PolicyContext& ctx, Scope scope)
    : parts_(ctx.cluster, ctx.tenants.size(), scope),
      active_(parts_.size()),
      slot_(ctx.jobs.size(), -1),
      entry_(ctx.jobs.size(), 0),
      changed_(parts_.size(), 0) {}

void PreemptiveQueues::intake(const ClusterSnapshot& s, Decisions& out) {
  std::fill(changed_.begin(), changed_.end(), 0);
  for (const auto& f : s.finished) {
    const std::int32_t k = slot_[f.job.index()];
    if (k < 0) continue;
    const std::size_t p = parts_.of(s.jobs[f.job.index()]);
    auto& list = active_[p];
    list[static_cast<std::size_t>(k)] = list.back();
    slot_[list[static_cast<std::size_t>(k)].index()] = k;
    list.pop_back();
    slot_[f.job.index()] = -1;
    changed_[p] = 1;
  }
  for (JobId id : s.arrived) {
    const JobSpec& j = s.jobs[id.index()];
    if (auto r = parts_.too_large(s, j)) {
      out.reject.push_back(std::move(*r));
      continue;
    }
    const std::size_t p = parts_.of(j);
    slot_[id.index()] = static_cast<std::int32_t>(active_[p].size());
    active_[p].push_back(id);
    entry_[id.index()] = next_entry_++;
    changed_[p] = 1;
  }
}

void PreemptiveQueues::select(std::size_t p, std::span<const JobId> order,
                              const ClusterSnapshot& s) {
  preempt_.clear();
  prerun_.clear();
  int budget = parts_.capacity(p);
  for (JobId id : order) {
    const int gpus = s.jobs[id.index()].gpus;
    const bool running = s.runtime[id.index()].status == JobStatus::Running;
    if (gpus <= budget) {
      budget -= gpus;
      if (!running) prerun_.push_back(id);
    } else if (running) {
      preempt_.push_back(id);
    }
  }
}

void PreemptiveQueues::place(std::size_t p, const ClusterSnapshot& s, FreeMap& free,
                             Decisions& out) {
  for (JobId id : prerun_) {
    if (try_start(s.jobs[id.index()], free, parts_.nodes(p), out))
      entry_[id.index()] = next_entry_++;
  }
}

}  // namespace ds
