// srtf — preemptive Shortest Remaining Time First with the true run time (an oracle).
//
// Source: Lucid artifact (Hu et al., ASPLOS'23), simulation/policy/srtf.py: the "SRTF"
// baseline of Lucid's evaluation.
// Assumptions: run times are known exactly (registered as an oracle); a preempted job
// keeps the progress of its last checkpoint (Tenant::checkpoint_interval; Lucid
// assumes a checkpoint at preemption: run with --checkpoint-interval 0 to match) and
// pays the simulator's restart overhead (40 s for <= 8 GPUs, 60 s above: Lucid's
// ckpt_overhead), both of which this policy mirrors to know a job's remaining time.
// Algorithm, every cycle with an arrival or a completion in a partition (one per
// tenant when isolated, one for the cluster when pooled):
//  1. New jobs join the partition; a job larger than it is rejected.
//  2. Its pending and running jobs are in order of remaining time = true run time +
//     restart overheads - progress kept; ties: pending before running, then the order
//     in which they entered Lucid's lists (srtf.py sorts que_list + run_list stably).
//     The order is kept across cycles, not sorted (queue_greedy.hpp): a pending job's
//     remaining time is fixed, and running jobs' all fall at the same rate.
//  3. The quota-greedy cycle of queue_greedy.hpp: walk that order with a budget of the
//     partition's GPUs; preempt running jobs that do not fit, start pending ones that
//     do (consolidate placement; a job that cannot be placed waits).
// Options: scope=isolated|pooled (default isolated, as Lucid).
// Deliberate differences from Lucid:
//  - events, not 1 s ticks. Between events the decision cannot change: every running
//    job's remaining time falls at the same rate, so running jobs only move ahead of
//    pending ones, which never changes the greedy selection. Lucid ends a job one
//    tick after its remaining time reaches 0 (end = start + remain + 1 s); here it
//    ends at start + remain;
//  - a job larger than its tenant's virtual cluster is rejected at arrival (Lucid
//    would keep it queued forever);
//  - the pooled scope and checkpoint intervals other than 0 are ours.
#pragma once

#include <memory>

#include "policy/policy.hpp"

namespace ds {

std::unique_ptr<Policy> make_srtf(const PolicyContext& ctx);

}  // namespace ds
