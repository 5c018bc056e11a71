#include "baselines/srtf.hpp"

#include <algorithm>
#include <cmath>

#include "baselines/queue_greedy.hpp"
#include "core/error.hpp"
#include "model/execution.hpp"

namespace ds {

namespace {

// The walk order (queue_greedy.hpp): (remaining time, running, entry order). A running
// job's remaining time is its remaining work at its last (re)start minus the time since,
// so it is kept as (remaining work + last start) and read less now.
class Srtf final : public Policy, PreemptiveQueues::Keys {
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
    queues_.intake(s, out, *this);
    for (const std::uint32_t p : queues_.changed())
      queues_.decide(p, s.now, s, out, [&](JobId id) { preempted(id, s); });
    return out;
  }

  WalkKey pending(const ClusterSnapshot& /*s*/, JobId id) override {
    return {remaining_[id], 0, queues_.entry_order(id)};
  }
  WalkKey running(const ClusterSnapshot& s, JobId id) override {
    return {remaining_[id] + s.runtime[id.index()].last_start, 1, queues_.entry_order(id)};
  }

 private:
  // Mirrors the simulator: progress since the tenant's last checkpoint is lost and
  // the restart overhead is added to what remains.
  void preempted(JobId id, const ClusterSnapshot& s) {
    const JobSpec& j = s.jobs[id.index()];
    const JobRuntime& r = s.runtime[id.index()];
    const Time work = oracle_work(work_, j);
    const Time left = remaining_[id] - (s.now - r.last_start);
    const Time done = work - left;
    const Time interval = s.tenants[j.tenant.index()].checkpoint_interval;
    remaining_[id] = work - checkpoint_kept(done, interval) + restart_overhead(j.gpus);
  }

  PreemptiveQueues queues_;
  std::span<const Time> work_;  // true run time, by JobId
  PerJob<Time> remaining_;      // remaining work at the job's last (re)start
};

}  // namespace

std::unique_ptr<Policy> make_srtf(const PolicyContext& ctx) {
  return std::make_unique<Srtf>(ctx);
}

}  // namespace ds
