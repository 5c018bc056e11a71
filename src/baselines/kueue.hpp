// kueue — Kubernetes Kueue's cohort model: nominal quota per tenant, borrowing of idle
// quota in the cohort, reclaim by preempting borrowers, optional fair sharing.
//
// Source: kubernetes-sigs/kueue @ff69552 (read, not copied):
// pkg/scheduler/scheduler.go (schedule: heads, nominate, classicalIterator order),
// pkg/scheduler/fair_sharing_iterator.go (tournament by DRS after admission),
// pkg/scheduler/flavorassigner/flavorassigner.go (fitsResourceQuota: Fit / Preempt /
// NoFit), pkg/scheduler/preemption/ (kueue_preempt.hpp), pkg/cache/scheduler/
// resource_node.go + fair_sharing.go (kueue_quota.hpp), pkg/workload/workload.go
// (GetQueueOrderTimestamp: a preempted workload keeps its creation time), concepts docs
// cluster_queue.md, preemption.md, fair_sharing.md.
//
// Assumptions:
//  - One ClusterQueue per tenant with nominalQuota = the tenant's guaranteed GPUs, all in
//    one cohort (`scope=pooled`, the default: jobs run on any node); `scope=isolated`
//    removes the cohort (no borrowing) and keeps each tenant on the nodes it owns.
//  - Tenant trees (model/tenant_tree.hpp): a tenant with sub-tenants is also a cohort of its
//    subtree (Kueue's hierarchical cohorts, nominal quota = the subtree's guarantee). Jobs
//    still borrow idle quota anywhere in the tree (no cohort borrowing limits); a reclaim
//    takes only from cohorts above their nominal quota up to where they meet the preemptor
//    (hierarchical_preemption.go). Fair sharing compares tenants, not cohorts.
//  - Priority (WorkloadPriorityClass) from the job's QoS: Guaranteed and
//    LatencySensitive 1, BestEffort -1, others 0 (Venus: all 0).
//  - queueingStrategy BestEffortFIFO (default) or StrictFIFO; reclaimWithinCohort Any
//    (default), LowerPriority or Never; withinClusterQueue and borrowWithinCohort Never.
//  - Admission is node-aware (a job is admitted only with a consolidate placement) and
//    the preemption search is too; Kueue admits on quota and leaves pods to kube-scheduler.
//
// Algorithm (one cycle; Kueue's cycles repeat back to back, so we loop to a fixed point):
//  1. Arrivals and preempted jobs join their tenant's queue, ordered by submit time
//     (a preempted job keeps its place). A job that can never fit (more GPUs than its
//     potential quota or than its nodes) is rejected.
//  2. Nominate each tenant's head: in queue order (StrictFIFO: only the first job), the
//     first job that fits now (quota available and placeable: Fit) or whose preemption
//     search finds victims (Preempt).
//  3. Order the heads. Classical: jobs that keep their tenant within nominal first, then
//     higher priority, then earlier submit. Fair sharing: the same non-borrowing rule,
//     then the lower DRS of its tenant after admission, then priority, then submit.
//  4. Admit the first: preempt its victims (the simulator requeues them, losing the work
//     since their last checkpoint), start it (borrowed when its tenant goes above
//     nominal). Repeat from 2 until no head can be admitted.
//
// Options (--set): scope=pooled|isolated, fair_sharing=on|off,
// queueing=best_effort|strict, reclaim=any|lower_priority|never, lending_limit=GPUS,
// borrowing_limit=GPUS (per tenant; -1 = no limit).
#pragma once

#include <memory>

#include "baselines/kueue_preempt.hpp"
#include "policy/policy.hpp"

namespace ds {

struct KueueConfig {
  bool pooled = true;
  bool fair_sharing = false;
  bool strict_fifo = false;
  ReclaimPolicy reclaim = ReclaimPolicy::Any;
  KueueLimits limits;
  // Nominate by walking each queue job by job instead of per request class: the reference
  // the indexed scan is checked against (tests/deep_queue_test.cpp); same results.
  bool reference_scan = false;
};

std::unique_ptr<Policy> make_kueue(const PolicyContext& ctx);
std::unique_ptr<Policy> make_kueue(const PolicyContext& ctx, const KueueConfig& config);
const char* kueue_options();
// The WorkloadPriorityClass value we give a job (see the assumptions above).
int kueue_priority(const JobSpec& job);

}  // namespace ds
