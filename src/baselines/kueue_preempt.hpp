// Kueue's preemption search: which borrowers to evict so that a pending job fits.
//
// Source: kubernetes-sigs/kueue @ff69552, pkg/scheduler/preemption/preemption.go
// (classicalPreemptions, fillBackWorkloads, fairPreemptions, runFirstFsStrategy,
// runSecondFsStrategy), classical/candidate_generator.go + hierarchical_preemption.go
// (which candidates, candidateIsValid), common/ordering.go (CandidatesOrdering),
// fairsharing/ordering.go (target ClusterQueue order), fairsharing/strategy.go (S2-a/S2-b).
//
// Assumptions:
//  - Candidates are running jobs (admitted in an earlier cycle) of OTHER tenants whose tenant
//  borrows
//    (reclaimWithinCohort; Any by default, LowerPriority optional); preemption inside
//    the preemptor's own tenant (withinClusterQueue) stays Never, borrowWithinCohort Never.
//  - "Fits" is node-aware here: the job's quota fits (CohortQuota::available) AND a
//    consolidate placement exists on a scratch FreeMap with the victims removed. Kueue
//    checks quota only (or TAS topology); GPUs on nodes are what a job really needs.
// Algorithm (DESIGN §2 what-if with undo, on scratch copies of quota and FreeMap):
//  Candidate order (CandidatesOrdering): lower priority first, then the most recently
//  started first, then job id.
//  Classical (requires that the preemptor stays within its nominal quota with the job):
//   1. Walk the candidates in order; skip one whose tenant no longer borrows (after the
//      removals so far), or, in a tenant tree, one whose cohorts below the lowest common
//      ancestor with the preemptor no longer exceed their nominal quota; otherwise remove it
//      (quota and GPUs).
//   2. As soon as the job fits: add the removed ones back in reverse order (all but the
//      last), keeping each re-added one whose return still lets the job fit.
//  Fair sharing (weighted DRS of borrowed GPUs; preemption also while borrowing):
//   1. Count the job into its tenant. Repeatedly pick the borrowing tenant with the
//      highest DRS that still has candidates (ties: its first candidate in order).
//   2. If the preemptor is within nominal, remove that tenant's next candidate.
//      Otherwise (S2-a) remove the first candidate whose removal leaves its tenant's DRS
//      >= the preemptor's DRS with the job; candidates that fail go to a retry list.
//      After a removal, stop when the job fits, else pick a tenant again (step 1).
//   3. S2-b, if the job still does not fit: for tenants in the same order, remove the
//      first retry candidate of a tenant whose current DRS exceeds the preemptor's.
//   4. Undo the job's count; fill back as in classical step 2.
// Cost: the search runs on the policy's own quota and free map, removing candidates and
// putting back exactly what it removed (no copies); candidates come from per-tenant lists
// kept in candidate order across cycles, merged lazily, so a search costs O(borrowing
// tenants + candidates it looks at x log), placements use the free map's node-set index.
#pragma once

#include <optional>
#include <set>
#include <span>
#include <vector>

#include "baselines/kueue_quota.hpp"
#include "model/tenant_tree.hpp"
#include "policy/placement.hpp"
#include "policy/policy.hpp"

namespace ds {

enum class ReclaimPolicy : std::uint8_t { Never, LowerPriority, Any };

// A running job as the search sees it.
struct KueueRunning {
  JobId job;
  std::size_t tenant = 0;
  int gpus = 0;
  int milli = kMilliPerGpu;
  int priority = 0;
  Time started = 0;
  Placement placement;
};

// The running jobs that may be preempted (admitted in an earlier cycle), kept across cycles:
// per tenant, in CandidatesOrdering (lower priority, then most recently started, then id).
class KueueRunningSet {
 public:
  explicit KueueRunningSet(std::size_t tenants) : by_tenant_(tenants) {}

  void add(KueueRunning r);
  // Takes the job out; false when it was not in the set.
  bool remove(JobId id);
  [[nodiscard]] bool contains(JobId id) const { return in_[id] != 0; }
  [[nodiscard]] const KueueRunning& at(JobId id) const { return info_[id]; }

  // The candidates of tenants other than `except` that borrow (quota as it is now) and that
  // `policy` lets a job of `priority` preempt, in CandidatesOrdering; calls f(job) for each
  // until f returns false.
  template <class F>
  void for_each_candidate(std::size_t except, int priority, const CohortQuota& quota,
                          ReclaimPolicy policy, F f) const;
  // Tenant t's running jobs in candidate order; f(job) returns false to stop.
  template <class F>
  void for_each_of(std::size_t t, F f) const {
    for (const Key& k : by_tenant_[t])
      if (!f(k.job)) return;
  }
  // All of them, in order.
  [[nodiscard]] std::vector<JobId> candidates(std::size_t except, int priority,
                                              const CohortQuota& quota, ReclaimPolicy policy) const;

 private:
  struct Key {
    int priority;
    Time neg_started;
    JobId job;
    auto operator<=>(const Key&) const = default;
  };
  static Key key(const KueueRunning& r) { return Key{r.priority, -r.started, r.job}; }

  std::vector<std::set<Key>> by_tenant_;
  std::set<std::size_t> tenants_;  // with a running job
  PerJob<KueueRunning> info_;
  PerJob<std::uint8_t> in_;
};

struct KueueRequest {
  const JobSpec* job = nullptr;
  std::size_t tenant = 0;
  int priority = 0;
  FreeMap::SetId nodes = 0;  // where it may run (a node set of `free`)
  // In a tenant tree, a candidate is valid only when its groups exceed their nominal quota up
  // to where they meet the preemptor (Kueue's hierarchical reclaim; model/tenant_tree.hpp).
  const TenantTree* tree = nullptr;
};

struct KueueVictims {
  std::vector<JobId> victims;
  Placement placement;  // where the job goes once they are gone
};

// Both searches leave `quota` and `free` as they found them.
std::optional<KueueVictims> kueue_classical_preemption(const KueueRequest& req,
                                                       const KueueRunningSet& running,
                                                       CohortQuota& quota, FreeMap& free,
                                                       ReclaimPolicy policy);

std::optional<KueueVictims> kueue_fair_preemption(const KueueRequest& req,
                                                  const KueueRunningSet& running,
                                                  CohortQuota& quota, FreeMap& free,
                                                  ReclaimPolicy policy);

template <class F>
void KueueRunningSet::for_each_candidate(std::size_t except, int priority, const CohortQuota& quota,
                                         ReclaimPolicy policy, F f) const {
  if (policy == ReclaimPolicy::Never) return;
  // A k-way merge of the borrowing tenants' lists (each already in order).
  using It = std::set<Key>::const_iterator;
  struct Head {
    It it, end;
  };
  std::vector<Head> heads;
  for (std::size_t t : tenants_) {
    if (t == except || !quota.borrowing(t)) continue;
    heads.push_back({by_tenant_[t].begin(), by_tenant_[t].end()});
  }
  auto later = [](const Head& a, const Head& b) { return *b.it < *a.it; };
  std::make_heap(heads.begin(), heads.end(), later);
  while (!heads.empty()) {
    std::pop_heap(heads.begin(), heads.end(), later);
    Head& h = heads.back();
    const Key k = *h.it;
    if (++h.it == h.end)
      heads.pop_back();
    else
      std::push_heap(heads.begin(), heads.end(), later);
    if (policy == ReclaimPolicy::LowerPriority && k.priority >= priority) continue;
    if (!f(k.job)) return;
  }
}

}  // namespace ds
