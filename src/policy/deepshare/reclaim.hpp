// Cost-aware, node-aware choice of borrowed jobs to preempt so that an entitled
// job can start ("what-if with undo", as Kueue's preemption search).
//
// Victim cost = (work lost since the victim's last checkpoint + restart overhead) x GPUs,
// in GPU-seconds; candidates with equal cost go most-recently-started first.
// Algorithm:
//  0. A whole-GPU job that could not fit even with every candidate gone, counting GPUs
//     (reclaim_may_fit), gets no plan at once: most plans in a full cluster end so.
//  1. Sort candidates by cost (ties: latest start, then highest job id).
//  2. Job fits on one node: for every node, give back the cheapest candidates touching it
//     until the job fits there (counting whole GPUs where that is exact, else on a trial of
//     the free map, FreeMap::Trial); keep the node whose set costs least. Larger jobs: give
//     back candidates cluster-wide in cost order until the job fits (on a trial).
//  3. Minimality: walk the chosen set in reverse and take back each victim whose
//     GPUs are not needed for the job to still fit.
//  4. Return the victims and the placement, or nothing when even all candidates
//     would not make room. Every trial is undone: `free` is as it was on return.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "model/job.hpp"
#include "model/snapshot.hpp"
#include "policy/placement.hpp"

namespace ds::deepshare {

struct Victim {
  JobId job;
  double cost = 0;  // GPU-seconds lost if preempted now
  Time started = 0;
  const Placement* placement = nullptr;
  int milli = 1000;  // share of each of its GPUs it frees
};

struct ReclaimPlan {
  std::vector<JobId> victims;
  Placement placement;
  double cost = 0;
};

// Cost of preempting a running job now, in GPU-seconds.
double preemption_cost(const JobSpec& job, const JobRuntime& rt, Time now, Time checkpoint_interval,
                       Time restart_overhead);

// Whether a whole-GPU job could be placed with every candidate gone, counting GPUs: on one
// of `nodes` when it asks at most `node_size` GPUs, else over them all (fractional jobs:
// always true). Necessary for any plan: plan_reclaim checks it first (issue #27).
bool reclaim_may_fit(const FreeMap& free, std::span<const NodeId> nodes, const JobSpec& job,
                     std::span<const Victim> candidates, int node_size);

// `nodes` in ascending id order. `free` is tried on and left as it was.
std::optional<ReclaimPlan> plan_reclaim(FreeMap& free, std::span<const NodeId> nodes,
                                        const JobSpec& job, std::vector<Victim> candidates);

}  // namespace ds::deepshare
