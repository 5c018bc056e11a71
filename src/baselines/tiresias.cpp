#include "baselines/tiresias.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <set>

#include "baselines/queue_greedy.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

// Floor of t / d for any sign of t (d > 0).
Time floor_div(Time t, Time d) {
  return t / d - (t % d != 0 && t < 0 ? 1 : 0);
}

// The walk order (queue_greedy.hpp): (low queue, submit time, pending, entry order),
// encoded as a = low, b = 2 x submit + pending. A pending job's attained service is fixed;
// a running job's grows, so it is re-keyed when it passes the threshold (checked at the
// rounds from the earliest time it can have passed: `crossings_`).
class Tiresias final : public Policy, PreemptiveQueues::Keys {
 public:
  explicit Tiresias(const PolicyContext& ctx)
      : queues_(ctx, read_scope(ctx.options, Scope::Isolated)),
        threshold_gpu_ms_(ctx.options.get_double("threshold", 18000, 0, 1e15) * kSecond),
        interval_(static_cast<Time>(ctx.options.get_double("interval", 60, 0.001, 1e9) * kSecond)),
        crossings_(queues_.partitions().size()),
        need_of_(queues_.partitions().size(), kNever),
        own_(queues_.partitions().size(), 0) {}

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    queues_.intake(s, out, *this);
    for (std::uint32_t p : queues_.changed()) touched(p);
    for (std::uint32_t p : queues_.restaled()) touched(p);
    if (s.now - floor_div(s.now, interval_) * interval_ != 0) {
      for (JobId id : s.arrived) {
        note_wait(out, id, WaitReason::Round);  // decided at the next round
        queues_.stated(s, id, WaitReason::Round);
      }
    } else {
      round(s, out);
    }
    for (std::uint32_t p : touched_) update_need(p, s.now);
    touched_.clear();
    const std::size_t pending =
        s.pending.size() + out.preempt.size() - out.reject.size() - out.start.size();
    if (pending > 0 && !needs_.empty()) {
      const Time next_round = (floor_div(s.now, interval_) + 1) * interval_;
      const Time t = needs_.begin()->first;
      out.wake_at = t <= s.now ? next_round : std::max(next_round, ceil_round(t));
    }
    return out;
  }

  WalkKey pending(const ClusterSnapshot& s, JobId id) override {
    const JobRuntime& r = s.runtime[id.index()];
    const JobSpec& j = s.jobs[id.index()];
    return {low(r.attained, j.gpus) ? 1 : 0, 2 * j.submit + 1, queues_.entry_order(id)};
  }
  WalkKey running(const ClusterSnapshot& s, JobId id) override {
    const JobRuntime& r = s.runtime[id.index()];
    const JobSpec& j = s.jobs[id.index()];
    const bool is_low = low(r.attained + s.now - r.last_start, j.gpus);
    // No earlier than this can a running job of the high queue pass into the low one.
    if (!is_low && j.gpus > 0)
      crossings_[queues_.partitions().of(j)].push(
          {r.last_start - r.attained +
               static_cast<Time>(std::floor(threshold_gpu_ms_ / static_cast<double>(j.gpus))),
           {id, ++run_[id]}});
    return {is_low ? 1 : 0, 2 * j.submit, queues_.entry_order(id)};
  }

 private:
  // (earliest time it may pass the threshold, (job, its run)).
  using Crossing = std::pair<Time, std::pair<JobId, std::uint32_t>>;
  using Crossings = std::priority_queue<Crossing, std::vector<Crossing>, std::greater<>>;

  [[nodiscard]] bool low(Time attained, int gpus) const {
    return static_cast<double>(attained) * gpus > threshold_gpu_ms_;
  }
  [[nodiscard]] Time ceil_round(Time t) const { return -floor_div(-t, interval_) * interval_; }

  // A decision time: a partition decides again only when something changed since its last
  // decision or a running job may have passed the threshold (the order's only change with
  // time).
  void round(const ClusterSnapshot& s, Decisions& out) {
    for (std::size_t p = 0; p < queues_.partitions().size(); ++p) {
      const Time next_pass = pass(p, s);
      if (!queues_.stale(p) && s.now < next_pass) continue;
      touched(p);
      if (queues_.waiting(p) == 0) {  // every running job fits: nothing to decide
        queues_.settle(p);
        continue;
      }
      const std::size_t acted = out.start.size() + out.preempt.size();
      queues_.decide(p, 0, s, out, [](JobId) {});
      own_[p] = out.start.size() + out.preempt.size() > acted ? 1 : 0;
    }
  }

  // Re-keys the running jobs of partition p that passed the threshold by now; the earliest
  // time one of its running jobs of the high queue may pass (kNever: none), counting those
  // that passed now: what the plain policy computes from its last sort.
  Time pass(std::size_t p, const ClusterSnapshot& s) {
    Crossings& c = crossings_[p];
    held_.clear();
    Time earliest = kNever;
    while (!c.empty() && c.top().first <= s.now) {
      const Crossing x = c.top();
      c.pop();
      if (!current(x)) continue;
      earliest = std::min(earliest, x.first);
      const JobId id = x.second.first;
      const JobRuntime& r = s.runtime[id.index()];
      const JobSpec& j = s.jobs[id.index()];
      if (low(r.attained + s.now - r.last_start, j.gpus))
        queues_.rekey_running(s, id, {1, 2 * j.submit, queues_.entry_order(id)});
      else
        held_.push_back(x);  // exactly at the threshold: it passes at a later round
    }
    for (const Crossing& x : held_) c.push(x);
    return std::min(earliest, next_crossing(p));
  }

  // Whether a crossing belongs to the job's current run (older ones are dropped lazily).
  [[nodiscard]] bool current(const Crossing& x) const {
    return queues_.running(x.second.first) && run_[x.second.first] == x.second.second;
  }
  Time next_crossing(std::size_t p) {
    Crossings& c = crossings_[p];
    while (!c.empty() && !current(c.top())) c.pop();
    return c.empty() ? kNever : c.top().first;
  }

  void touched(std::uint32_t p) {
    if (touched_flag_.size() < need_of_.size()) touched_flag_.assign(need_of_.size(), 0);
    if (touched_flag_[p]) return;
    touched_flag_[p] = 1;
    touched_.push_back(p);
  }

  // When partition p needs a round next: now (the next round) when it changed since it
  // decided or its decision changed the cluster, else when a running job may pass the
  // threshold; never while nothing of it waits.
  void update_need(std::uint32_t p, Time now) {
    touched_flag_[p] = 0;
    Time t = kNever;
    if (queues_.waiting(p) > 0) {
      if (queues_.stale(p) || own_[p])
        t = now;
      else
        t = next_crossing(p);
    }
    own_[p] = 0;
    if (t == need_of_[p]) return;
    if (need_of_[p] != kNever) needs_.erase({need_of_[p], p});
    need_of_[p] = t;
    if (t != kNever) needs_.emplace(t, p);
  }

  PreemptiveQueues queues_;
  double threshold_gpu_ms_;
  Time interval_;
  std::vector<Crossings> crossings_;  // by partition: (earliest pass time, running high job)
  std::vector<Crossing> held_;
  PerJob<std::uint32_t> run_;  // counts the job's filings as running
  // The rounds partitions need (queue_greedy.hpp: no wake-up at a round where nothing could
  // change): by partition, and ordered.
  std::vector<Time> need_of_;
  std::set<std::pair<Time, std::uint32_t>> needs_;
  std::vector<std::uint8_t> own_, touched_flag_;
  std::vector<std::uint32_t> touched_;
};

}  // namespace

std::unique_ptr<Policy> make_tiresias(const PolicyContext& ctx) {
  return std::make_unique<Tiresias>(ctx);
}

}  // namespace ds
