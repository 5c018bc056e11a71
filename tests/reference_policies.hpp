// Straightforward references of the baselines whose cycles follow changes (issue #27), for
// tests/deep_queue_test.cpp: each rebuilds what the policy keeps (its order, its free map)
// from the snapshot in every cycle and walks every queued job, as the policies did before
// they kept ordered structures. Kueue and Lucid keep their reference inside the policy
// (KueueConfig::reference_scan, LucidSetup::reference_scan): their state is too large to
// write twice.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "baselines/queue.hpp"
#include "model/execution.hpp"
#include "policy/placement.hpp"
#include "policy/policy.hpp"

namespace ds::testing {

// fifo / sjf: one ordered queue per partition, the start loop over every partition in every
// cycle (an unchanged partition repeats itself), every queued job tried with place_job.
class ReferenceOrdered final : public Policy {
 public:
  // by_work: SJF's order (true run time, arrival); else FIFO (arrival).
  ReferenceOrdered(const PolicyContext& ctx, Scope scope, StartRule rule, bool by_work)
      : parts_(ctx.cluster, ctx.tenants.size(), scope),
        rule_(rule),
        work_(ctx.oracle_work),
        by_work_(by_work),
        queues_(parts_.size()) {}

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    for (JobId id : s.withdrawn) queues_[parts_.of(s.jobs[id.index()])].erase(key(s, id));
    for (JobId id : s.arrived) {
      if (auto r = parts_.too_large(s, s.jobs[id.index()])) {
        out.reject.push_back(std::move(*r));
        continue;
      }
      queues_[parts_.of(s.jobs[id.index()])].insert(key(s, id));
      note_wait(out, id, WaitReason::Priority);
    }
    for (JobId id : s.requeued) {
      queues_[parts_.of(s.jobs[id.index()])].insert(key(s, id));
      note_wait(out, id, WaitReason::Priority);
    }
    FreeMap free(s);
    for (std::size_t p = 0; p < parts_.size(); ++p) start(p, s, free, out);
    return out;
  }

 private:
  using Key = std::tuple<double, JobId>;
  Key key(const ClusterSnapshot& s, JobId id) const {
    return {by_work_ ? static_cast<double>(oracle_work(work_, s.jobs[id.index()])) : 0, id};
  }
  void start(std::size_t p, const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
    auto& q = queues_[p];
    const auto nodes = parts_.nodes(p);
    int fractional = 0;
    for (const auto& [k, id] : q) fractional += s.jobs[id.index()].gpu_milli < kMilliPerGpu;
    for (auto it = q.begin(); it != q.end();) {
      const JobSpec& j = s.jobs[std::get<1>(*it).index()];
      const int free_gpus = free.total_free_gpus(nodes);
      if (free_gpus == 0 && fractional == 0) {
        note_wait(out, j.id, WaitReason::NoFit);
        break;
      }
      auto placement = place_job(free, nodes, j);
      if (!placement) {
        note_wait(out, j.id, room_reason(free_gpus, j));
        if (rule_ == StartRule::HeadOfLine) break;
        ++it;
        continue;
      }
      free.take(*placement, j.gpu_milli);
      out.start.push_back(StartJob{j.id, std::move(*placement)});
      fractional -= j.gpu_milli < kMilliPerGpu;
      it = q.erase(it);
    }
  }

  Partitions parts_;
  StartRule rule_;
  std::span<const Time> work_;
  bool by_work_;
  std::vector<std::set<Key>> queues_;
};

// srtf / tiresias: the quota-greedy cycle (baselines/queue_greedy.hpp) over every job of a
// partition sorted afresh. SRTF decides the partitions with an arrival or a completion;
// Tiresias every partition with a pending job at every round, and wakes at every round
// while a job is pending (a partition that did not change repeats itself).
class ReferenceGreedy final : public Policy {
 public:
  enum class Kind : std::uint8_t { Srtf, Tiresias };
  ReferenceGreedy(const PolicyContext& ctx, Kind kind, Scope scope, double threshold_s = 18000,
                  double interval_s = 60)
      : kind_(kind),
        parts_(ctx.cluster, ctx.tenants.size(), scope),
        work_(ctx.oracle_work),
        threshold_(threshold_s * kSecond),
        interval_(static_cast<Time>(interval_s * kSecond)),
        active_(parts_.size()) {}

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    std::set<std::size_t> changed;
    const auto drop = [&](JobId id) {
      const std::size_t p = parts_.of(s.jobs[id.index()]);
      auto& a = active_[p];
      auto it = std::find(a.begin(), a.end(), id);
      if (it == a.end()) return;
      a.erase(it);
      changed.insert(p);
    };
    const auto add = [&](JobId id) {
      const std::size_t p = parts_.of(s.jobs[id.index()]);
      active_[p].push_back(id);
      entry_[id] = next_entry_++;
      changed.insert(p);
    };
    for (JobId id : s.arrived) remaining_[id] = oracle_work_or_zero(s, id);
    for (JobId id : s.adopted)
      remaining_[id] =
          std::max<Time>(0, oracle_work_or_zero(s, id) - s.runtime[id.index()].attained);
    for (const auto& f : s.finished) drop(f.job);
    for (JobId id : s.withdrawn) drop(id);
    for (JobId id : s.adopted) {
      drop(id);
      add(id);
    }
    for (JobId id : s.arrived) {
      if (auto r = parts_.too_large(s, s.jobs[id.index()])) {
        out.reject.push_back(std::move(*r));
        continue;
      }
      add(id);
      note_wait(out, id, WaitReason::Priority);
    }
    FreeMap free(s);
    if (kind_ == Kind::Srtf) {
      for (std::size_t p : changed) cycle(p, s, free, out);
      return out;
    }
    const Time round = s.now / interval_ - (s.now % interval_ != 0 && s.now < 0 ? 1 : 0);
    if (s.now != round * interval_) {
      for (JobId id : s.arrived) note_wait(out, id, WaitReason::Round);
    } else {
      for (std::size_t p = 0; p < parts_.size(); ++p) cycle(p, s, free, out);
    }
    const std::size_t pending =
        s.pending.size() + out.preempt.size() - out.reject.size() - out.start.size();
    if (pending > 0) out.wake_at = (round + 1) * interval_;
    return out;
  }

 private:
  Time oracle_work_or_zero(const ClusterSnapshot& s, JobId id) const {
    return work_.empty() ? 0 : oracle_work(work_, s.jobs[id.index()]);
  }

  void cycle(std::size_t p, const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
    using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::uint64_t>;
    std::vector<std::pair<Key, JobId>> keyed;
    bool any_pending = false;
    for (JobId id : active_[p]) {
      const JobRuntime& r = s.runtime[id.index()];
      const JobSpec& j = s.jobs[id.index()];
      const bool running = r.status == JobStatus::Running;
      any_pending = any_pending || !running;
      if (kind_ == Kind::Srtf) {
        const Time left = remaining_[id] - (running ? s.now - r.last_start : 0);
        keyed.push_back({Key{left, running, 0, entry_[id]}, id});
      } else {
        const Time attained = r.attained + (running ? s.now - r.last_start : 0);
        const bool low = static_cast<double>(attained) * j.gpus > threshold_;
        keyed.push_back({Key{low, j.submit, !running, entry_[id]}, id});
      }
    }
    if (!any_pending) return;
    std::sort(keyed.begin(), keyed.end());
    int budget = parts_.capacity(p);
    std::vector<JobId> preempt, prerun, behind;
    for (const auto& [key, id] : keyed) {
      const int gpus = s.jobs[id.index()].gpus;
      const bool running = s.runtime[id.index()].status == JobStatus::Running;
      if (gpus <= budget) {
        budget -= gpus;
        if (!running) prerun.push_back(id);
      } else if (running) {
        preempt.push_back(id);
      } else {
        behind.push_back(id);
      }
    }
    for (JobId id : preempt) {
      if (kind_ == Kind::Srtf) preempted(id, s);
      free.give(s.runtime[id.index()].placement, s.jobs[id.index()].gpu_milli);
      out.preempt.push_back(PreemptJob{id});
      note_wait(out, id, WaitReason::Priority);
      entry_[id] = next_entry_++;
    }
    for (JobId id : behind) note_wait(out, id, WaitReason::Priority);
    const auto nodes = parts_.nodes(p);
    for (JobId id : prerun) {
      const JobSpec& j = s.jobs[id.index()];
      if (auto placement = place_job(free, nodes, j)) {
        free.take(*placement, j.gpu_milli);
        out.start.push_back(StartJob{id, std::move(*placement)});
        entry_[id] = next_entry_++;
      } else {
        note_wait(out, id, room_reason(free.total_free_gpus(nodes), j));
      }
    }
  }

  void preempted(JobId id, const ClusterSnapshot& s) {
    const JobSpec& j = s.jobs[id.index()];
    const JobRuntime& r = s.runtime[id.index()];
    const Time work = oracle_work(work_, j);
    const Time done = work - (remaining_[id] - (s.now - r.last_start));
    const Time interval = s.tenants[j.tenant.index()].checkpoint_interval;
    remaining_[id] = work - checkpoint_kept(done, interval) + restart_overhead(j.gpus);
  }

  Kind kind_;
  Partitions parts_;
  std::span<const Time> work_;
  double threshold_;
  Time interval_;
  std::vector<std::vector<JobId>> active_;
  PerJob<Time> remaining_;
  PerJob<std::uint64_t> entry_;
  std::uint64_t next_entry_ = 0;
};

}  // namespace ds::testing
