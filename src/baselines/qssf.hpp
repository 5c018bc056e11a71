// qssf — Quasi-Shortest-Service-First: shortest estimated GPU time first.
//
// Source: Helios (Hu et al., "Characterization and Prediction of Deep Learning
// Workloads in Large-Scale GPU Datacenters", SC'21, §5: the QSSF service), as the
// Lucid artifact codes it (simulation/policy/qssf.py, estimator/estimator.py) for
// Lucid's "QSSF" baseline. Priority = estimated run time x GPUs, fixed once given.
// Assumptions: estimates come either from Lucid's own files (fidelity mode) or from
// our online predictor, which learns only from jobs finished before now.
// Algorithm, every cycle (job arrivals and completions):
//  1. Finished jobs teach the predictor (normal mode) and score its accuracy.
//  2. New jobs get their priority: estimate(job) x GPUs, where estimate is
//     - fidelity=lucid: Lucid's per-job estimate from aux/Venus_Sept_lgb.csv
//       (estimates=lgb, default, as `simulator.py -s qssf`) or
//       aux/Venus_Sept_ebm_weekly_updated.csv (estimates=ebm, negatives -> 1000 s,
//       what the artifact's `--sweep` feeds QSSF);
//     - otherwise: the online predictor's estimate at submit (predictor=history|...).
//     A job larger than its queue's GPUs is rejected.
//  3. Order of a queue (one per tenant when isolated, one when pooled), as Lucid's two
//     stable sorts give it: when every queued job arrived in this cycle, by (GPUs,
//     arrival); otherwise by (priority, GPUs, arrival).
//  4. Queued jobs start in that order with consolidate placement; the first that does
//     not fit stops the loop (head-of-line blocking), or, with backfill, is skipped.
// Options: fidelity=lucid|off, estimates=lgb|ebm, aux=DIR (default: the trace's aux
// folder), predictor=history|tenant|global, scope=isolated|pooled (default
// isolated), backfill=on|off (default off when isolated, on when pooled).
// Deliberate differences from Lucid:
//  - events, not 1 s ticks (equivalent for this non-preemptive policy);
//  - priorities are given at arrival, not at the first tick with an older job queued
//    (same values: Lucid's estimate of a job does not change over time);
//  - a job larger than its tenant's virtual cluster is rejected at arrival;
//  - normal mode, the pooled scope and backfill are ours.
#pragma once

#include <memory>

#include "policy/policy.hpp"

namespace ds {

std::unique_ptr<Policy> make_qssf(const PolicyContext& ctx);

}  // namespace ds
