#include "baselines/lucid_profiler.hpp"

#include <algorithm>

namespace ds {
namespace {

// The next multiple of `period` strictly after `t`.
Time next_multiple(Time t, Time period) {
  return (t / period + 1) * period;
}

}  // namespace

LucidProfiler::LucidProfiler(ProfilerConfig config)
    : config_(std::move(config)), nodes_(config_.base_nodes), prof_queue_(-1) {}

void LucidProfiler::enqueue(const JobSpec& j) {
  queue_.emplace(j.gpus, j.id);
  prof_queue_.reset(j.id);
}

bool LucidProfiler::finished(JobId id) {
  auto it =
      std::find_if(running_.begin(), running_.end(), [&](const Running& r) { return r.job == id; });
  if (it == running_.end()) return false;
  running_.erase(it);
  ++stats_.completed;
  return true;
}

void LucidProfiler::run(const ClusterSnapshot& s, FreeMap& free, Decisions& out,
                        std::vector<JobId>& stopped) {
  // 1. Stop the runs that reached the limit (in start order).
  for (auto it = running_.begin(); it != running_.end();) {
    if (s.now < it->started + config_.time_limit) {
      ++it;
      continue;
    }
    out.preempt.push_back({it->job});
    free.give(it->placement, s.jobs[it->job.index()].gpu_milli);
    stopped.push_back(it->job);
    ++stats_.stopped;
    it = running_.erase(it);
  }
  // 2. Least-GPU-First.
  start_queued(s, free, out);
}

void LucidProfiler::start_queued(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
  while (!queue_.empty()) {
    const JobSpec& j = s.jobs[queue_.begin()->second.index()];
    auto p = place_job(free, nodes_, j);
    if (!p) break;  // head-of-line, as lgf.py
    free.take(*p, j.gpu_milli);
    prof_queue_[j.id] = s.now - j.submit;
    running_.push_back({j.id, s.now, *p});
    out.start.push_back(StartJob{j.id, std::move(*p)});
    ++stats_.profiled;
    queue_.erase(queue_.begin());
  }
}

void LucidProfiler::scale(const ClusterSnapshot& s, FreeMap& free,
                          const ThroughputForecast* forecast, std::vector<NodeId>* donor_nodes,
                          Decisions& out) {
  if (!donor_nodes) return;
  const Cluster& c = *s.cluster;
  // 3. Scale up.
  if (!elastic_ && s.now % config_.scale_up_period == 0 && queue_.size() > config_.scale_up_queue) {
    std::optional<std::size_t> pick;
    for (std::size_t k = donor_nodes->size(); k-- > 0;) {
      const NodeId n = (*donor_nodes)[k];
      if (free.free_gpus(n) == c.nodes[n.index()].gpus) {
        pick = k;
        break;
      }
    }
    if (pick) {
      elastic_ = (*donor_nodes)[*pick];
      donor_nodes->erase(donor_nodes->begin() + static_cast<std::ptrdiff_t>(*pick));
      nodes_.push_back(*elastic_);
      ++stats_.scale_ups;
      start_queued(s, free, out);
    } else {
      ++stats_.scale_ups_deferred;
    }
    return;
  }
  // 4. Scale down.
  if (elastic_ && s.now % config_.scale_down_period == 0 &&
      queue_.size() < config_.scale_down_queue &&
      free.free_gpus(*elastic_) == c.nodes[elastic_->index()].gpus) {
    const auto f =
        forecast ? forecast->window_mean(s.now, ThroughputForecast::Field::Gpus) : std::nullopt;
    // Lucid: an exhausted forecast reads as -1, which allows the scale-down.
    if (f && *f > static_cast<double>(config_.gpu_limit) * 5) return;
    nodes_.erase(std::find(nodes_.begin(), nodes_.end(), *elastic_));
    donor_nodes->insert(std::upper_bound(donor_nodes->begin(), donor_nodes->end(), *elastic_),
                        *elastic_);
    elastic_.reset();
    ++stats_.scale_downs;
  }
}

Time LucidProfiler::next_wake(Time now) const {
  Time t = kNever;
  for (const auto& r : running_) t = std::min(t, r.started + config_.time_limit);
  if (!config_.elastic_donor.valid()) return t;
  if (!elastic_ && queue_.size() > config_.scale_up_queue)
    t = std::min(t, next_multiple(now, config_.scale_up_period));
  if (elastic_ && queue_.size() < config_.scale_down_queue)
    t = std::min(t, next_multiple(now, config_.scale_down_period));
  return t;
}

}  // namespace ds
