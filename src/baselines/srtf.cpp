#include "baselines/srtf.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "baselines/queue_greedy.hpp"
#include "core/error.hpp"

namespace ds {

Time lucid_restart_overhead(int gpus) {
  return gpus <= 8 ? seconds(40) : seconds(60);
}

namespace {

class Srtf final : public Policy {
 public:
  explicit Srtf(const PolicyContext& ctx)
      : queues_(ctx, read_scope(ctx.options, Scope::Isolated)), work_(ctx.oracle_work) {
    if (work_.empty())
      throw InputError("srtf needs the jobs' true run times (it is an oracle policy)");
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    for (JobId id : s.arrived) remaining_[id] = oracle_work(work_, s.jobs[id.index()]);
    // Found running (a restarted controller): its work less what it ran before this run.
    for (JobId id : s.adopted)
      remaining_[id] = std::max<Time>(
          0, oracle_work(work_, s.jobs[id.index()]) - s.runtime[id.index()].attained);
    queues_.intake(s, out);
    for (const std::uint32_t p : queues_.changed()) {
      sort_partition(p, s);
      queues_.decide(p, order_, s, out, [&](JobId id) { preempted(id, s); });
    }
    return out;
  }

 private:
  using Key = std::tuple<Time, bool, std::uint64_t>;  // remaining, running, entry order

  void sort_partition(std::size_t p, const ClusterSnapshot& s) {
    keyed_.clear();
    for (JobId id : queues_.active(p)) {
      const JobRuntime& r = s.runtime[id.index()];
      const bool running = r.status == JobStatus::Running;
      const Time left = remaining_[id] - (running ? s.now - r.last_start : 0);
      keyed_.emplace_back(Key{left, running, queues_.entry_order(id)}, id);
    }
    std::sort(keyed_.begin(), keyed_.end());
    order_.clear();
    for (const auto& [key, id] : keyed_) order_.push_back(id);
  }

  // Mirrors the simulator: progress since the tenant's last checkpoint is lost and
  // the restart overhead is added to what remains.
  void preempted(JobId id, const ClusterSnapshot& s) {
    const JobSpec& j = s.jobs[id.index()];
    const JobRuntime& r = s.runtime[id.index()];
    const Time work = oracle_work(work_, j);
    const Time left = remaining_[id] - (s.now - r.last_start);
    const Time done = work - left;
    const Time interval = s.tenants[j.tenant.index()].checkpoint_interval;
    const Time kept = interval > 0 && done > 0 ? (done / interval) * interval : done;
    remaining_[id] = work - kept + lucid_restart_overhead(j.gpus);
  }

  PreemptiveQueues queues_;
  std::span<const Time> work_;  // true run time, by JobId
  PerJob<Time> remaining_;      // remaining work at the job's last (re)start
  std::vector<std::pair<Key, JobId>> keyed_;
  std::vector<JobId> order_;
};

}  // namespace

std::unique_ptr<Policy> make_srtf(const PolicyContext& ctx) {
  return std::make_unique<Srtf>(ctx);
}

}  // namespace ds
