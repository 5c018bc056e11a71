#include "baselines/kueue.hpp"

#include <algorithm>
#include <climits>
#include <set>

#include "core/error.hpp"

namespace ds {
namespace {

// A tenant's nominated head for this round (step 2).
struct Entry {
  JobId job;
  std::size_t tenant = 0;
  int priority = 0;
  bool borrows = false;  // admitting it takes its tenant above nominal
  double share = 0;      // DRS of its tenant after admission (fair sharing)
  Placement placement;
  std::vector<std::size_t> victims;  // indices into the running list
};

class Kueue final : public Policy {
 public:
  Kueue(const PolicyContext& ctx, const KueueConfig& cfg) : cfg_(cfg), queues_(ctx.tenants.size()) {
    if (!cfg_.pooled) cfg_.limits.cohort = false;
    bool owned = false;
    for (const auto& n : ctx.cluster.nodes) owned = owned || n.owner.valid();
    per_tenant_ = !cfg_.pooled && owned;
    nodes_.resize(per_tenant_ ? ctx.tenants.size() : 1);
    capacity_.resize(nodes_.size(), 0);
    for (const auto& n : ctx.cluster.nodes) {
      if (per_tenant_ && !n.owner.valid()) continue;
      const std::size_t p = per_tenant_ ? n.owner.index() : 0;
      nodes_[p].push_back(n.id);
      capacity_[p] += n.gpus;
    }
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    CohortQuota quota(s.tenants, cfg_.limits);
    std::vector<KueueRunning> running;
    running.reserve(s.running.size());
    for (JobId id : s.running) {
      const JobSpec& j = s.jobs[id.index()];
      const JobRuntime& r = s.runtime[id.index()];
      quota.add(j.tenant.index(), j.gpus);
      running.push_back({id, j.tenant.index(), j.gpus, j.gpu_milli, kueue_priority(j), r.last_start,
                         r.placement});
    }
    for (JobId id : s.withdrawn)
      if (queued_[id]) {
        queues_[s.jobs[id.index()].tenant.index()].erase(id);
        queued_[id] = 0;
      }
    for (JobId id : s.arrived) arrive(s, quota, id, out);
    for (JobId id : s.requeued)
      if (!queued_[id] && s.runtime[id.index()].status == JobStatus::Pending) {
        enqueue(s.jobs[id.index()]);
        note_wait(out, id, WaitReason::Priority);
      }

    ++stamp_;
    cutoff_.assign(queues_.size(), INT_MAX);
    FreeMap free(s);
    for (;;) {
      std::optional<Entry> best;
      for (std::size_t t = 0; t < queues_.size(); ++t) {
        if (queues_[t].empty()) continue;
        auto e = nominate(s, quota, free, running, t, out);
        if (e && (!best || better(*e, *best, s))) best = std::move(e);
      }
      if (!best) break;
      admit(s, quota, free, running, std::move(*best), out);
    }
    return out;
  }

  void summarize(std::map<std::string, double>& out) const override {
    out["kueue_borrowed_starts"] = static_cast<double>(borrowed_starts_);
    out["kueue_preempting_admissions"] = static_cast<double>(preempting_admissions_);
    out["kueue_victims"] = static_cast<double>(victims_);
    out["kueue_preemption_searches"] = static_cast<double>(searches_);
  }

 private:
  [[nodiscard]] std::size_t part(std::size_t tenant) const { return per_tenant_ ? tenant : 0; }

  void enqueue(const JobSpec& j) {
    mark_.reset(j.id);
    queues_[j.tenant.index()].insert(j.id);
    queued_[j.id] = 1;
  }

  void arrive(const ClusterSnapshot& s, const CohortQuota& quota, JobId id, Decisions& out) {
    const JobSpec& j = s.jobs[id.index()];
    const std::size_t t = j.tenant.index();
    const int limit = std::min(quota.potential(t), capacity_[part(t)]);
    if (j.gpus > limit) {
      out.reject.push_back({id, "needs " + std::to_string(j.gpus) + " GPUs; tenant '" +
                                    s.tenants[t].name + "' can hold at most " +
                                    std::to_string(limit) + " (quota and nodes)"});
      return;
    }
    enqueue(j);
    note_wait(out, id, WaitReason::Priority);
  }

  // Step 2: the tenant's first job that fits now or after preemption.
  std::optional<Entry> nominate(const ClusterSnapshot& s, const CohortQuota& quota,
                                const FreeMap& free, const std::vector<KueueRunning>& running,
                                std::size_t t, Decisions& out) {
    const auto nodes = std::span<const NodeId>(nodes_[part(t)]);
    for (JobId id : queues_[t]) {
      if (mark_[id] == stamp_) {
        if (cfg_.strict_fifo) return std::nullopt;
        continue;
      }
      const JobSpec& j = s.jobs[id.index()];
      Entry e{id, t, kueue_priority(j), quota.borrowing(t, j.gpus), quota.drs(t, j.gpus), {}, {}};
      const bool in_quota = j.gpus <= quota.available(t);
      if (in_quota) {
        if (auto p = place_job(free, nodes, j)) {
          e.placement = std::move(*p);
          return e;
        }
      }
      if (cfg_.limits.cohort && cfg_.reclaim != ReclaimPolicy::Never && j.gpus < cutoff_[t]) {
        ++searches_;
        const KueueRequest req{&j, t, e.priority, nodes};
        auto v = cfg_.fair_sharing
                     ? kueue_fair_preemption(req, running, quota, free, cfg_.reclaim)
                     : kueue_classical_preemption(req, running, quota, free, cfg_.reclaim);
        if (v) {
          e.placement = std::move(v->placement);
          e.victims = std::move(v->victims);
          return e;
        }
        // A search that failed is not repeated for as large a job of this tenant in
        // this cycle (Kueue: the workload waits as inadmissible until something changes).
        cutoff_[t] = j.gpus;
      }
      mark_[id] = stamp_;
      note_wait(out, id,
                in_quota ? room_reason(free.total_free_gpus(nodes), j) : WaitReason::Quota);
      if (cfg_.strict_fifo) return std::nullopt;
    }
    return std::nullopt;
  }

  // Step 3.
  [[nodiscard]] bool better(const Entry& a, const Entry& b, const ClusterSnapshot& s) const {
    if (a.borrows != b.borrows) return !a.borrows;
    if (cfg_.fair_sharing && a.share != b.share) return a.share < b.share;
    if (a.priority != b.priority) return a.priority > b.priority;
    const Time ta = s.jobs[a.job.index()].submit, tb = s.jobs[b.job.index()].submit;
    if (ta != tb) return ta < tb;
    return a.job < b.job;
  }

  // Step 4.
  void admit(const ClusterSnapshot& s, CohortQuota& quota, FreeMap& free,
             std::vector<KueueRunning>& running, Entry e, Decisions& out) {
    std::sort(e.victims.begin(), e.victims.end(), std::greater<>());
    for (std::size_t v : e.victims) {
      const KueueRunning& r = running[v];
      out.preempt.push_back({r.job});
      quota.remove(r.tenant, r.gpus);
      free.give(r.placement, r.milli);
      // Requeued at its old place, but not readmitted in the cycle that evicted it.
      enqueue(s.jobs[r.job.index()]);
      mark_[r.job] = stamp_;
      note_wait(out, r.job, WaitReason::Priority);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(v));
      ++victims_;
    }
    if (!e.victims.empty()) {
      ++preempting_admissions_;
      cutoff_.assign(queues_.size(), INT_MAX);  // capacity moved: searches may succeed again
    }
    const JobSpec& j = s.jobs[e.job.index()];
    const bool borrowed = quota.borrowing(e.tenant, j.gpus);
    borrowed_starts_ += borrowed ? 1 : 0;
    quota.add(e.tenant, j.gpus);
    free.take(e.placement, j.gpu_milli);
    running.push_back({e.job, e.tenant, j.gpus, j.gpu_milli, e.priority, s.now, e.placement, true});
    queues_[e.tenant].erase(e.job);
    queued_[e.job] = 0;
    out.start.push_back(StartJob{e.job, std::move(e.placement), borrowed});
  }

  KueueConfig cfg_;
  bool per_tenant_ = false;
  std::vector<std::vector<NodeId>> nodes_;
  std::vector<int> capacity_;
  std::vector<std::set<JobId>> queues_;  // by creation order (job ids follow submit)
  PerJob<std::uint8_t> queued_;
  PerJob<std::uint32_t> mark_;  // == stamp_: not admissible in this cycle
  std::uint32_t stamp_ = 0;
  std::vector<int> cutoff_;
  std::size_t borrowed_starts_ = 0, preempting_admissions_ = 0, victims_ = 0, searches_ = 0;
};

}  // namespace

int kueue_priority(const JobSpec& job) {
  switch (job.qos) {
    case Qos::Guaranteed:
    case Qos::LatencySensitive:
      return 1;
    case Qos::BestEffort:
      return -1;
    default:
      return 0;
  }
}

const char* kueue_options() {
  return "scope=pooled|isolated, fair_sharing=on|off, queueing=best_effort|strict, "
         "reclaim=any|lower_priority|never, lending_limit=GPUS, borrowing_limit=GPUS";
}

std::unique_ptr<Policy> make_kueue(const PolicyContext& ctx, const KueueConfig& config) {
  return std::make_unique<Kueue>(ctx, config);
}

std::unique_ptr<Policy> make_kueue(const PolicyContext& ctx) {
  const PolicyOptions& o = ctx.options;
  KueueConfig c;
  const std::string scope = o.get("scope", "pooled");
  if (scope != "pooled" && scope != "isolated")
    throw InputError("--set scope: expected pooled or isolated, got '" + scope + "'");
  c.pooled = scope == "pooled";
  c.fair_sharing = o.get_bool("fair_sharing", false);
  const std::string queueing = o.get("queueing", "best_effort");
  if (queueing != "best_effort" && queueing != "strict")
    throw InputError("--set queueing: expected best_effort or strict, got '" + queueing + "'");
  c.strict_fifo = queueing == "strict";
  const std::string reclaim = o.get("reclaim", "any");
  if (reclaim == "any")
    c.reclaim = ReclaimPolicy::Any;
  else if (reclaim == "lower_priority")
    c.reclaim = ReclaimPolicy::LowerPriority;
  else if (reclaim == "never")
    c.reclaim = ReclaimPolicy::Never;
  else
    throw InputError("--set reclaim: expected any, lower_priority or never, got '" + reclaim + "'");
  // GPUs, or -1 for no limit; ranged so that the int cannot wrap.
  c.limits.lending_limit = static_cast<int>(o.get_int("lending_limit", -1, -1, 100'000));
  c.limits.borrowing_limit = static_cast<int>(o.get_int("borrowing_limit", -1, -1, 100'000));
  return make_kueue(ctx, c);
}

}  // namespace ds
