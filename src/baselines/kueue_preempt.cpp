#include "baselines/kueue_preempt.hpp"

#include <algorithm>
#include <map>

namespace ds {
namespace {

// Scratch state of one search: quota and GPUs with candidates removed.
class WhatIf {
 public:
  WhatIf(const KueueRequest& req, std::span<const KueueRunning> running, CohortQuota quota,
         FreeMap free)
      : req_(req), running_(running), quota_(std::move(quota)), free_(std::move(free)) {}

  CohortQuota& quota() { return quota_; }

  void remove(std::size_t i) {
    const KueueRunning& r = running_[i];
    quota_.remove(r.tenant, r.gpus);
    free_.give(r.placement, r.milli);
  }
  void restore(std::size_t i) {
    const KueueRunning& r = running_[i];
    quota_.add(r.tenant, r.gpus);
    free_.take(r.placement, r.milli);
  }
  // The job's quota fits and it can be placed.
  [[nodiscard]] bool fits() const {
    return req_.job->gpus <= quota_.available(req_.tenant) &&
           place_job(free_, req_.nodes, *req_.job).has_value();
  }
  // fillBackWorkloads: re-add all but the last removed victim in reverse order, keeping
  // those whose return still lets the job fit.
  KueueVictims finish(std::vector<std::size_t> targets) {
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
  const KueueRequest& req_;
  std::span<const KueueRunning> running_;
  CohortQuota quota_;
  FreeMap free_;
};

// CandidatesOrdering: lower priority, then most recently started, then job id.
bool before(const KueueRunning& a, const KueueRunning& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.started != b.started) return a.started > b.started;
  return a.job < b.job;
}

// Running jobs of other tenants that borrow and that the policy lets the job preempt.
std::vector<std::size_t> candidates(const KueueRequest& req, std::span<const KueueRunning> running,
                                    const CohortQuota& quota, ReclaimPolicy policy) {
  std::vector<std::size_t> c;
  if (policy == ReclaimPolicy::Never) return c;
  for (std::size_t i = 0; i < running.size(); ++i) {
    const KueueRunning& r = running[i];
    if (r.admitted_now || r.tenant == req.tenant || !quota.borrowing(r.tenant)) continue;
    if (policy == ReclaimPolicy::LowerPriority && r.priority >= req.priority) continue;
    c.push_back(i);
  }
  std::sort(c.begin(), c.end(),
            [&](std::size_t a, std::size_t b) { return before(running[a], running[b]); });
  return c;
}

}  // namespace

std::optional<KueueVictims> kueue_classical_preemption(const KueueRequest& req,
                                                       std::span<const KueueRunning> running,
                                                       CohortQuota quota, FreeMap free,
                                                       ReclaimPolicy policy) {
  // borrowWithinCohort = Never: only a job that keeps its tenant within nominal reclaims.
  if (quota.borrowing(req.tenant, req.job->gpus)) return std::nullopt;
  const auto cands = candidates(req, running, quota, policy);
  if (cands.empty()) return std::nullopt;
  WhatIf w(req, running, std::move(quota), std::move(free));
  std::vector<std::size_t> targets;
  for (std::size_t i : cands) {
    if (!w.quota().borrowing(running[i].tenant)) continue;  // candidateIsValid
    w.remove(i);
    targets.push_back(i);
    if (w.fits()) return w.finish(std::move(targets));
  }
  return std::nullopt;
}

std::optional<KueueVictims> kueue_fair_preemption(const KueueRequest& req,
                                                  std::span<const KueueRunning> running,
                                                  CohortQuota quota, FreeMap free,
                                                  ReclaimPolicy policy) {
  const auto cands = candidates(req, running, quota, policy);
  if (cands.empty()) return std::nullopt;
  WhatIf w(req, running, std::move(quota), std::move(free));
  const int g = req.job->gpus;
  CohortQuota& q = w.quota();
  q.add(req.tenant, g);  // DRS values include the incoming job
  const bool within_nominal = !q.borrowing(req.tenant);
  auto fits = [&] {
    q.remove(req.tenant, g);
    const bool ok = w.fits();
    q.add(req.tenant, g);
    return ok;
  };

  // Candidates per tenant, in order (std::map: tenants in id order for determinism).
  std::map<std::size_t, std::vector<std::size_t>> by_tenant;
  for (std::size_t i : cands) by_tenant[running[i].tenant].push_back(i);
  // The borrowing tenant with the highest DRS that still has candidates (ties: the
  // tenant whose first candidate comes first); nullopt when none is left.
  auto next_tenant =
      [&](std::map<std::size_t, std::vector<std::size_t>>& pool) -> std::optional<std::size_t> {
    std::optional<std::size_t> best;
    for (auto& [t, list] : pool) {
      if (list.empty() || !q.borrowing(t)) continue;
      if (!best || q.drs(t) > q.drs(*best) ||
          (q.drs(t) == q.drs(*best) && before(running[list.front()], running[pool[*best].front()])))
        best = t;
    }
    return best;
  };

  std::vector<std::size_t> targets, retry;
  bool ok = false;
  // Steps 1-2.
  while (!ok) {
    auto t = next_tenant(by_tenant);
    if (!t) break;
    auto& list = by_tenant[*t];
    if (within_nominal) {
      const std::size_t i = list.front();
      list.erase(list.begin());
      w.remove(i);
      targets.push_back(i);
      ok = fits();
      continue;
    }
    const double preemptor = q.drs(req.tenant);
    while (!list.empty()) {
      const std::size_t i = list.front();
      list.erase(list.begin());
      q.remove(*t, running[i].gpus);
      const double target_after = q.drs(*t);
      q.add(*t, running[i].gpus);
      if (preemptor <= target_after) {  // S2-a: LessThanOrEqualToFinalShare
        w.remove(i);
        targets.push_back(i);
        ok = fits();
        break;  // shares changed: pick a tenant again
      }
      retry.push_back(i);
    }
  }
  // Step 3: S2-b, LessThanInitialShare, at most one victim per tenant.
  if (!ok && !retry.empty()) {
    std::map<std::size_t, std::vector<std::size_t>> pool;
    for (std::size_t i : retry) pool[running[i].tenant].push_back(i);
    for (auto t = next_tenant(pool); t && !ok; t = next_tenant(pool)) {
      auto& list = pool[*t];
      if (q.drs(req.tenant) < q.drs(*t)) {
        w.remove(list.front());
        targets.push_back(list.front());
        ok = fits();
      }
      list.clear();  // DropQueue
    }
  }
  q.remove(req.tenant, g);
  if (!ok) return std::nullopt;
  return w.finish(std::move(targets));
}

}  // namespace ds
