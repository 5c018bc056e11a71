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
    : config_(std::move(config)), elastic_(config_.elastic_donors.size()), prof_queue_(-1) {
  if (config_.units == 0) config_.units = 1;
  for (NodeId n : config_.base_nodes) {
    nodes_.push_back(n);
    mark_pool(n, true);
  }
}

void LucidProfiler::mark_pool(NodeId n, bool in) {
  if (pool_mark_.size() <= n.index()) pool_mark_.resize(std::size_t{n.index()} + 1, 0);
  pool_mark_[n.index()] = in ? 1 : 0;
}

void LucidProfiler::enqueue(const JobSpec& j) {
  queue_.emplace(j.gpus, j.id);
  prof_queue_.reset(j.id);
  retry_ = true;
}

bool LucidProfiler::finished(JobId id) {
  if (!in_pool_[id]) return false;
  in_pool_[id] = 0;  // its entry in running_ is skipped from now on
  ++stats_.completed;
  retry_ = true;
  return true;
}

void LucidProfiler::run(const ClusterSnapshot& s, FreeMap& free, Decisions& out,
                        std::vector<JobId>& stopped) {
  // 1. Stop the runs that reached the limit (in start order: the front of the queue, since
  //    every run has the same limit).
  while (!running_.empty()) {
    Running& r = running_.front();
    if (!in_pool_[r.job] || r.started != start_of_[r.job]) {  // ended (or a stale entry)
      running_.pop_front();
      continue;
    }
    if (s.now < r.started + config_.time_limit) break;
    out.preempt.push_back({r.job});
    free.give(r.placement, s.jobs[r.job.index()].gpu_milli);
    stopped.push_back(r.job);
    ++stats_.stopped;
    in_pool_[r.job] = 0;
    retry_ = true;
    running_.pop_front();
  }
  // 2. Least-GPU-First.
  start_queued(s, free, out);
}

void LucidProfiler::start_queued(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
  if (!retry_) return;  // the same head would fail on the same free GPUs
  retry_ = false;
  while (!queue_.empty()) {
    const JobSpec& j = s.jobs[queue_.begin()->second.index()];
    auto p = place_job(free, nodes_, j);
    if (!p) break;  // head-of-line, as lgf.py
    free.take(*p, j.gpu_milli);
    prof_queue_[j.id] = s.now - j.submit;
    running_.push_back({j.id, s.now, *p});
    in_pool_[j.id] = 1;
    start_of_[j.id] = s.now;
    out.start.push_back(StartJob{j.id, std::move(*p)});
    ++stats_.profiled;
    queue_.erase(queue_.begin());
  }
}

void LucidProfiler::scale(const ClusterSnapshot& s, FreeMap& free,
                          const ThroughputForecast* forecast,
                          std::span<std::vector<NodeId>* const> donor_nodes, Decisions& out,
                          std::vector<Move>& moves) {
  if (donor_nodes.empty()) return;
  const Cluster& c = *s.cluster;
  const std::size_t donors = std::min(donor_nodes.size(), elastic_.size());
  // 3. Scale up.
  if (lent_ < donors && s.now % config_.scale_up_period == 0 &&
      queue_.size() > threshold(config_.scale_up_queue)) {
    bool any = false;
    for (std::size_t d = 0; d < donors; ++d) {
      if (elastic_[d]) continue;
      std::vector<NodeId>& list = *donor_nodes[d];
      std::optional<std::size_t> pick;
      for (std::size_t k = list.size(); k-- > 0;) {
        const NodeId n = list[k];
        if (free.free_gpus(n) == c.nodes[n.index()].gpus) {
          pick = k;
          break;
        }
      }
      if (!pick) continue;
      const NodeId n = list[*pick];
      elastic_[d] = n;
      ++lent_;
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(*pick));
      nodes_.push_back(n);
      mark_pool(n, true);
      moves.push_back({d, n, true});
      any = true;
    }
    if (any) {
      ++stats_.scale_ups;
      retry_ = true;
      start_queued(s, free, out);
    } else {
      ++stats_.scale_ups_deferred;
    }
    return;
  }
  // 4. Scale down.
  if (lent_ > 0 && s.now % config_.scale_down_period == 0 &&
      queue_.size() < threshold(config_.scale_down_queue)) {
    const auto f =
        forecast ? forecast->window_mean(s.now, ThroughputForecast::Field::Gpus) : std::nullopt;
    // Lucid: an exhausted forecast reads as -1, which allows the scale-down.
    if (f && *f > static_cast<double>(config_.gpu_limit) * 5 * static_cast<double>(config_.units))
      return;
    bool any = false;
    for (std::size_t d = 0; d < donors; ++d) {
      if (!elastic_[d]) continue;
      const NodeId n = *elastic_[d];
      if (free.free_gpus(n) != c.nodes[n.index()].gpus) continue;
      nodes_.erase(std::find(nodes_.begin(), nodes_.end(), n));
      mark_pool(n, false);
      std::vector<NodeId>& list = *donor_nodes[d];
      list.insert(std::upper_bound(list.begin(), list.end(), n), n);
      elastic_[d].reset();
      --lent_;
      moves.push_back({d, n, false});
      any = true;
    }
    if (any) ++stats_.scale_downs;
  }
}

Time LucidProfiler::next_wake(Time now) const {
  Time t = kNever;
  for (const Running& r : running_)  // the first live run ends first
    if (in_pool_[r.job] && r.started == start_of_[r.job]) {
      t = r.started + config_.time_limit;
      break;
    }
  if (config_.elastic_donors.empty()) return t;
  if (lent_ < elastic_.size() && queue_.size() > threshold(config_.scale_up_queue))
    t = std::min(t, next_multiple(now, config_.scale_up_period));
  if (lent_ > 0 && queue_.size() < threshold(config_.scale_down_queue))
    t = std::min(t, next_multiple(now, config_.scale_down_period));
  return t;
}

}  // namespace ds
