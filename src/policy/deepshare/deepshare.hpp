// The DeepShare policy: one per-tenant assurance signal drives quota lending,
// reclaim by cost-aware preemption, run-time-aware ordering and MPS colocation.
//
// Assumptions: quotas are GPU counts over a pooled cluster (a tenant's guaranteed
// jobs may run on any node); a job runs guaranteed when its tenant's guaranteed use
// plus the job fits the quota, otherwise borrowed (preemptible). Guaranteed jobs are
// never preempted. The policy sees only observable state: run times are predicted
// online from jobs that have finished, sharing slowdowns from its interference model.
//
// One cycle, in phases (each a short function in deepshare.cpp):
//  1. ingest     arrivals (predict, entitlement at submit), completions (learn), requeues,
//                observed speeds of new pairs (probation; after phase 3, pairs observed
//                beyond a tenant's bound are split: split_pairs)
//  2. assurance  update A_t from share, entitled waiting and the outlook of lent GPUs
//  3. entitled   start entitled jobs in submit order on free GPUs, else share, else
//                wait for borrowers predicted to end before the SLO deadline, or reclaim
//  4. quota      other pending jobs that fit their tenant's quota not owed to entitled
//                jobs, shortest predicted GPU time first
//  5. lending    each tenant's lendable idle quota (its reserve grows as A_t falls)
//  6. borrowed   pending jobs on lent capacity: tenants by weighted borrowed share,
//                jobs by predicted GPU time; long jobs only while lendable headroom remains
//  7. share      colocate pending jobs with running ones within assurance-scaled budgets
//                (entitled jobs, either side, only once the model passed probation)
//  8. emit       decisions, plus a wake-up at the next reclaim deadline
#pragma once

#include <memory>

#include "policy/policy.hpp"

namespace ds {

std::unique_ptr<Policy> make_deepshare(const PolicyContext& ctx);
const char* deepshare_options();

}  // namespace ds
