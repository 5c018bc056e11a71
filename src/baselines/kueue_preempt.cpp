#include "baselines/kueue_preempt.hpp"

#include <algorithm>
#include <map>

namespace ds {

void KueueRunningSet::add(KueueRunning r) {
  const JobId id = r.job;
  if (in_[id]) remove(id);
  by_tenant_[r.tenant].insert(key(r));
  tenants_.insert(r.tenant);
  in_[id] = 1;
  info_[id] = std::move(r);
}

bool KueueRunningSet::remove(JobId id) {
  if (!in_[id]) return false;
  const KueueRunning& r = info_[id];
  auto& list = by_tenant_[r.tenant];
  list.erase(key(r));
  if (list.empty()) tenants_.erase(r.tenant);
  in_[id] = 0;
  info_[id].placement.clear();
  return true;
}

std::vector<JobId> KueueRunningSet::candidates(std::size_t except, int priority,
                                               const CohortQuota& quota,
                                               ReclaimPolicy policy) const {
  std::vector<JobId> c;
  for_each_candidate(except, priority, quota, policy, [&](JobId id) {
    c.push_back(id);
    return true;
  });
  return c;
}

namespace {

// One search's removals from the policy's quota and free map, undone in full by its
// destructor (DESIGN §2: what-if with undo).
class WhatIf {
 public:
  WhatIf(const KueueRequest& req, const KueueRunningSet& running, CohortQuota& quota, FreeMap& free)
      : req_(req), running_(running), quota_(quota), free_(free) {}
  WhatIf(const WhatIf&) = delete;
  WhatIf& operator=(const WhatIf&) = delete;
  ~WhatIf() {
    for (auto it = removed_.rbegin(); it != removed_.rend(); ++it) put_back(*it);
  }

  CohortQuota& quota() { return quota_; }

  void remove(JobId id) {
    const KueueRunning& r = running_.at(id);
    quota_.remove(r.tenant, r.gpus);
    free_.give(r.placement, r.milli);
    removed_.push_back(id);
  }
  void restore(JobId id) {
    put_back(id);
    removed_.erase(std::find(removed_.begin(), removed_.end(), id));
  }
  // The job's quota fits and it can be placed.
  [[nodiscard]] bool fits() const {
    if (req_.job->gpus > quota_.available(req_.tenant)) return false;
    if (req_.job->gpu_milli >= kMilliPerGpu && !constrained(*req_.job))  // one node size
      if (const auto largest = free_.set_largest_fit(req_.nodes)) return req_.job->gpus <= *largest;
    return place_job(free_, req_.nodes, *req_.job).has_value();
  }
  // fillBackWorkloads: re-add all but the last removed victim in reverse order, keeping
  // those whose return still lets the job fit.
  KueueVictims finish(std::vector<JobId> targets) {
    for (std::size_t k = targets.size() - 1; k-- > 0;) {
      restore(targets[k]);
      if (fits()) {
        targets.erase(targets.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        remove(targets[k]);
      }
    }
    return KueueVictims{std::move(targets), *place_job(free_, req_.nodes, *req_.job)};
  }

 private:
  void put_back(JobId id) {
    const KueueRunning& r = running_.at(id);
    quota_.add(r.tenant, r.gpus);
    free_.take(r.placement, r.milli);
  }

  const KueueRequest& req_;
  const KueueRunningSet& running_;
  CohortQuota& quota_;
  FreeMap& free_;
  std::vector<JobId> removed_;
};

// candidateIsValid's walk up the cohort tree (hierarchical_preemption.go): the victim's
// cohorts up to the lowest common ancestor with the preemptor all exceed their nominal quota.
bool valid_in_tree(const KueueRequest& req, const CohortQuota& q, std::size_t victim) {
  if (!req.tree || req.tree->flat()) return true;
  std::vector<std::int64_t> own(q.size()), sub;
  for (std::size_t t = 0; t < q.size(); ++t) own[t] = q.usage(t);
  req.tree->subtree_sums(own, sub);
  return req.tree->may_reclaim(req.tenant, victim, sub, 1);
}

// CandidatesOrdering: lower priority, then most recently started, then job id.
bool before(const KueueRunning& a, const KueueRunning& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.started != b.started) return a.started > b.started;
  return a.job < b.job;
}

using TenantPool = std::map<std::size_t, std::vector<JobId>>;  // tenant -> its candidates

// What the fair-sharing search's steps work on: the request, the running jobs, and the
// what-if whose quota `q` counts the incoming job's `g` GPUs while the search runs.
struct FairSearch {
  const KueueRequest& req;
  const KueueRunningSet& running;
  WhatIf& w;
  CohortQuota& q;
  int g;

  const KueueRunning& at(JobId id) const { return running.at(id); }
  // Whether the job fits now (the quota without its own GPUs, as WhatIf::fits counts them).
  bool fits() {
    q.remove(req.tenant, g);
    const bool ok = w.fits();
    q.add(req.tenant, g);
    return ok;
  }
  // Removes victim `i` (into `targets`); whether the job fits now.
  bool take(JobId i, std::vector<JobId>& targets) {
    w.remove(i);
    targets.push_back(i);
    return fits();
  }
  // The borrowing tenant with the highest DRS that still has candidates (ties: the
  // tenant whose first candidate comes first); nullopt when none is left.
  std::optional<std::size_t> next_tenant(TenantPool& pool) {
    std::optional<std::size_t> best;
    for (auto& [t, list] : pool) {
      if (list.empty() || !q.borrowing(t)) continue;
      if (!best || q.drs(t) > q.drs(*best) ||
          (q.drs(t) == q.drs(*best) && before(at(list.front()), at(pool[*best].front()))))
        best = t;
    }
    return best;
  }
};

// Steps 1-2: victims from the tenant of highest DRS, again after each removal; a tenant
// within nominal after the job takes any candidate, else only one whose tenant's share
// after its removal stays >= the preemptor's (S2-a); the others go to `retry`. Whether
// the job fits.
bool preempt_to_final_share(FairSearch& s, bool within_nominal, TenantPool& by_tenant,
                            std::vector<JobId>& targets, std::vector<JobId>& retry) {
  bool ok = false;
  while (!ok) {
    auto t = s.next_tenant(by_tenant);
    if (!t) break;
    auto& list = by_tenant[*t];
    if (within_nominal) {
      const JobId i = list.front();
      list.erase(list.begin());
      ok = s.take(i, targets);
      continue;
    }
    const double preemptor = s.q.drs(s.req.tenant);
    while (!list.empty()) {
      const JobId i = list.front();
      list.erase(list.begin());
      s.q.remove(*t, s.at(i).gpus);
      const double target_after = s.q.drs(*t);
      s.q.add(*t, s.at(i).gpus);
      if (preemptor <= target_after) {  // S2-a: LessThanOrEqualToFinalShare
        ok = s.take(i, targets);
        break;  // shares changed: pick a tenant again
      }
      retry.push_back(i);
    }
  }
  return ok;
}

// Step 3: S2-b, LessThanInitialShare, at most one victim per tenant. Whether the job fits.
bool preempt_below_initial_share(FairSearch& s, const std::vector<JobId>& retry,
                                 std::vector<JobId>& targets) {
  bool ok = false;
  TenantPool pool;
  for (JobId i : retry) pool[s.at(i).tenant].push_back(i);
  for (auto t = s.next_tenant(pool); t && !ok; t = s.next_tenant(pool)) {
    auto& list = pool[*t];
    if (s.q.drs(s.req.tenant) < s.q.drs(*t)) ok = s.take(list.front(), targets);
    list.clear();  // DropQueue
  }
  return ok;
}

}  // namespace

std::optional<KueueVictims> kueue_classical_preemption(const KueueRequest& req,
                                                       const KueueRunningSet& running,
                                                       CohortQuota& quota, FreeMap& free,
                                                       ReclaimPolicy policy) {
  // borrowWithinCohort = Never: only a job that keeps its tenant within nominal reclaims.
  if (quota.borrowing(req.tenant, req.job->gpus)) return std::nullopt;
  // The candidates are fixed by the quota before any removal (candidate order, merged
  // lazily): their tenants' borrowing is checked again as removals go (candidateIsValid).
  std::optional<KueueVictims> found;
  WhatIf w(req, running, quota, free);
  std::vector<JobId> targets;
  running.for_each_candidate(req.tenant, req.priority, quota, policy, [&](JobId id) {
    if (!w.quota().borrowing(running.at(id).tenant)) return true;  // candidateIsValid
    if (!valid_in_tree(req, w.quota(), running.at(id).tenant)) return true;
    w.remove(id);
    targets.push_back(id);
    if (!w.fits()) return true;
    found = w.finish(std::move(targets));
    return false;
  });
  return found;
}

std::optional<KueueVictims> kueue_fair_preemption(const KueueRequest& req,
                                                  const KueueRunningSet& running,
                                                  CohortQuota& quota, FreeMap& free,
                                                  ReclaimPolicy policy) {
  auto cands = running.candidates(req.tenant, req.priority, quota, policy);
  std::erase_if(cands, [&](JobId id) { return !valid_in_tree(req, quota, running.at(id).tenant); });
  if (cands.empty()) return std::nullopt;
  WhatIf w(req, running, quota, free);
  const int g = req.job->gpus;
  CohortQuota& q = w.quota();
  q.add(req.tenant, g);  // DRS values include the incoming job
  const bool within_nominal = !q.borrowing(req.tenant);
  FairSearch search{req, running, w, q, g};

  // Candidates per tenant, in order (std::map: tenants in id order for determinism).
  TenantPool by_tenant;
  for (JobId i : cands) by_tenant[search.at(i).tenant].push_back(i);
  std::vector<JobId> targets, retry;
  bool ok = preempt_to_final_share(search, within_nominal, by_tenant, targets, retry);
  if (!ok && !retry.empty()) ok = preempt_below_initial_share(search, retry, targets);
  q.remove(req.tenant, g);
  if (!ok) return std::nullopt;
  return w.finish(std::move(targets));
}

}  // namespace ds
