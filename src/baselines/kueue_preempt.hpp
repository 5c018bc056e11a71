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
//      removals so far); otherwise remove it (quota and GPUs).
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
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "baselines/kueue_quota.hpp"
#include "policy/placement.hpp"

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
  bool admitted_now = false;  // admitted in this cycle: holds capacity, not a candidate yet
};

struct KueueRequest {
  const JobSpec* job = nullptr;
  std::size_t tenant = 0;
  int priority = 0;
  std::span<const NodeId> nodes;  // where it may run
};

struct KueueVictims {
  std::vector<std::size_t> victims;  // indices into the running span
  Placement placement;               // where the job goes once they are gone
};

std::optional<KueueVictims> kueue_classical_preemption(const KueueRequest& req,
                                                       std::span<const KueueRunning> running,
                                                       CohortQuota quota, FreeMap free,
                                                       ReclaimPolicy policy);

std::optional<KueueVictims> kueue_fair_preemption(const KueueRequest& req,
                                                  std::span<const KueueRunning> running,
                                                  CohortQuota quota, FreeMap free,
                                                  ReclaimPolicy policy);

}  // namespace ds
