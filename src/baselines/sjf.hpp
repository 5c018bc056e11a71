// sjf — Shortest Job First with the true run time (an oracle).
//
// Source: Lucid artifact (Hu et al., ASPLOS'23), simulation/policy/sjf.py: the "SJF"
// rows of Lucid's evaluation (Table 4) and of the DeepShare paper's comparison.
// Assumptions: run times are known exactly at submit (registered as an oracle: it
// reads PolicyContext::oracle_work, nothing else of the truth); jobs are not preempted.
// Algorithm, every cycle (job arrivals and completions):
//  1. New jobs join their queue (one per tenant when isolated, one for the cluster
//     when pooled); a job larger than its queue's GPUs is rejected (see differences).
//  2. The queue is ordered by (true run time, arrival order). Lucid re-sorts its list
//     with Python's stable sort every tick, which gives exactly this order.
//  3. Queued jobs start in order with consolidate placement; the first that does not
//     fit stops the loop (head-of-line blocking), or, with backfill, is skipped.
// Options: scope=isolated|pooled (default isolated, as Lucid: one simulation per VC),
// backfill=on|off (default off when isolated, as Lucid; on when pooled).
// Deliberate differences from Lucid:
//  - events, not 1 s ticks: equivalent for a non-preemptive policy whose state only
//    changes at arrivals and completions (fifo-isolated reproduces Lucid per job);
//  - a job larger than its tenant's virtual cluster is rejected at arrival (Lucid
//    would block that VC forever);
//  - the pooled scope and backfill are ours (Lucid has neither for SJF).
#pragma once

#include <memory>

#include "policy/policy.hpp"

namespace ds {

std::unique_ptr<Policy> make_sjf(const PolicyContext& ctx);

}  // namespace ds
