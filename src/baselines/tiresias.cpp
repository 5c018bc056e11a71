#include "baselines/tiresias.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "baselines/queue_greedy.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

// Floor of t / d for any sign of t (d > 0).
Time floor_div(Time t, Time d) {
  return t / d - (t % d != 0 && t < 0 ? 1 : 0);
}

class Tiresias final : public Policy {
 public:
  explicit Tiresias(const PolicyContext& ctx)
      : queues_(ctx, read_scope(ctx.options, Scope::Isolated)),
        threshold_gpu_ms_(ctx.options.get_double("threshold", 18000, 0, 1e15) * kSecond),
        interval_(static_cast<Time>(ctx.options.get_double("interval", 60, 0.001, 1e9) * kSecond)) {
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    queues_.intake(s, out);
    if (s.now - floor_div(s.now, interval_) * interval_ != 0) {
      for (JobId id : s.arrived)
        note_wait(out, id, WaitReason::Round);  // decided at the next round
    } else {
      // A partition decides again only when something changed since its last decision or
      // a running job may have passed the threshold (the order's only change with time).
      next_pass_.resize(queues_.partitions().size(), kNever);
      for (std::size_t p = 0; p < queues_.partitions().size(); ++p) {
        if (!queues_.stale(p) && s.now < next_pass_[p]) continue;
        if (!sort_partition(p, s)) {
          queues_.settle(p);
          continue;
        }
        queues_.decide(p, order_, s, out, [](JobId) {});
      }
    }
    const std::size_t pending =
        s.pending.size() + out.preempt.size() - out.reject.size() - out.start.size();
    if (pending > 0) out.wake_at = (floor_div(s.now, interval_) + 1) * interval_;
    return out;
  }

 private:
  // high/low queue, submit time, pending (running first), entry order
  using Key = std::tuple<bool, Time, bool, std::uint64_t>;

  // Sorts partition p's jobs into order_; false when it has no pending job (then
  // every running job fits and there is nothing to decide).
  bool sort_partition(std::size_t p, const ClusterSnapshot& s) {
    keyed_.clear();
    bool any_pending = false;
    next_pass_[p] = kNever;
    for (JobId id : queues_.active(p)) {
      const JobRuntime& r = s.runtime[id.index()];
      const bool running = r.status == JobStatus::Running;
      any_pending = any_pending || !running;
      const Time attained = r.attained + (running ? s.now - r.last_start : 0);
      const int gpus = s.jobs[id.index()].gpus;
      const double gpu_ms = static_cast<double>(attained) * gpus;
      const bool low = gpu_ms > threshold_gpu_ms_;
      // No earlier than this can a running job of the high queue pass into the low one.
      if (running && !low && gpus > 0)
        next_pass_[p] = std::min<Time>(
            next_pass_[p],
            r.last_start - r.attained +
                static_cast<Time>(std::floor(threshold_gpu_ms_ / static_cast<double>(gpus))));
      keyed_.emplace_back(Key{low, s.jobs[id.index()].submit, !running, queues_.entry_order(id)},
                          id);
    }
    if (!any_pending) return false;
    std::sort(keyed_.begin(), keyed_.end());
    order_.clear();
    for (const auto& [key, id] : keyed_) order_.push_back(id);
    return true;
  }

  PreemptiveQueues queues_;
  double threshold_gpu_ms_;
  Time interval_;
  std::vector<std::pair<Key, JobId>> keyed_;
  std::vector<JobId> order_;
  std::vector<Time> next_pass_;  // by partition: see decide()
};

}  // namespace

std::unique_ptr<Policy> make_tiresias(const PolicyContext& ctx) {
  return std::make_unique<Tiresias>(ctx);
}

}  // namespace ds
