// tiresias — discretized two-dimensional least-attained-service (2D-LAS).
//
// Source: Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep Learning",
// NSDI'19, §4.2 (Discretized 2D-LAS: priority from attained GPU-time, a few queues
// with FIFO order inside each); as the Lucid artifact codes it
// (simulation/policy/tiresias.py, the "Tiresias" baseline of Lucid's evaluation):
// two queues split at 18,000 GPU-seconds, decisions every 60 s.
// Assumptions: non-clairvoyant (it never looks at run times); a preempted job keeps
// the progress of its last checkpoint (Tenant::checkpoint_interval; Lucid assumes a
// checkpoint at preemption: --checkpoint-interval 0) and pays the simulator's restart
// overhead (40 s for <= 8 GPUs, 60 s above, Lucid's optimistic reading of Tiresias'
// measured 62 s average).
// Algorithm:
//  1. Arrivals join their partition (one per tenant when isolated, one for the cluster
//     when pooled); a job larger than it is rejected. Between decision times nothing
//     else happens: new jobs and freed GPUs wait for the next one.
//  2. At every multiple of `interval` (60 s) on the trace clock, in each partition with
//     a pending job: attained service = GPUs x wall time run so far (all runs). Jobs
//     with more than `threshold` (18,000) GPU-seconds are in the low queue, the others
//     in the high queue. Order: high queue first; inside a queue by submit time, ties:
//     running before pending, then the order in which they entered Lucid's lists
//     (tiresias.py sorts run_list + que_list stably by submit time).
//  3. The quota-greedy cycle of queue_greedy.hpp: walk that order with a budget of the
//     partition's GPUs; preempt running jobs that do not fit, start pending ones that
//     do (consolidate placement; a job that cannot be placed waits).
//  4. While a job is pending, ask for a cycle at the next decision time at which a
//     partition with a pending job would decide: one that changed since it last decided
//     (arrival, completion, its nodes' free GPUs, its own starts and preemptions), or the
//     first at or after the earliest time a running job may pass the threshold. At the
//     other decision times the plain loop looks at nothing and decides nothing, so they
//     are left out: the number of cycles follows the events, not 1 / interval.
// Cost: the order is kept across rounds, not sorted (queue_greedy.hpp).
// Options: scope=isolated|pooled (default isolated, as Lucid), threshold=GPU-SECONDS
// (18000), interval=SECONDS (60).
// Deliberate differences from Lucid:
//  - events plus a 60 s wake-up instead of 1 s ticks (Lucid decides only when
//    time % 60 == 0 too; nothing changes in between). Lucid ends a job one tick after
//    its remaining time reaches 0; a job here ends at start + remaining, so a job
//    ending on a decision time frees its GPUs for that decision, in Lucid for the next;
//  - a job larger than its tenant's virtual cluster is rejected at arrival;
//  - the pooled scope and checkpoint intervals other than 0 are ours.
#pragma once

#include <memory>

#include "policy/policy.hpp"

namespace ds {

std::unique_ptr<Policy> make_tiresias(const PolicyContext& ctx);

}  // namespace ds
