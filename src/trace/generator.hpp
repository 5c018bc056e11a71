// The built-in workload generator: a Venus-like multi-tenant GPU workload from a
// seed, so that DeepShare runs on a fresh machine with no trace at all.
//
// Calibrated from the published statistics of the Venus September 2020 trace
// (generator_calibration.hpp cites them); it never reads or embeds trace rows.
//
// Algorithm:
//  1. Cluster: the 15 Venus VCs become tenants (quota = the VC's GPUs) owning nodes of
//     8 GPUs, 24 GiB each; `scale` multiplies each VC's node count (at least 1 node).
//  2. Per tenant: a GPU-count model (published mix, tilted to the VC's multi-GPU share
//     and mean GPUs, capped at the VC's GPUs) and duration models for single- and
//     multi-GPU jobs (published quantiles moved to the VC's median; upper tails
//     stretched so that single-GPU jobs hold the published 4.1 % of GPU time and the
//     VC's GPU-hours per job match its published offered load); users: 118 users, each
//     homed in one VC, some also submitting to others.
//  3. Jobs come in same-second batches (geometric size; 13.2 % zero gaps) of one tenant,
//     user, GPU count and model. Each tenant has a budget of GPU-seconds: its published
//     offered load x its GPUs x span, scaled so that the budgets add up to
//     load x GPUs x span. It draws batches until the budget is spent; this sets the
//     arrival rate so that the offered load hits the target overall and per tenant
//     (as in the trace's weeks, where tenants' loads are steadier than their job
//     counts). A batch that would overshoot the budget by more than 1 % is drawn again,
//     so a single huge job cannot skew a short run. At scale 1 the expected job counts
//     follow the published per-VC job rates over long runs; short runs have more of
//     the shorter jobs, most visibly in the smallest tenants, since a job larger than
//     the tenant's whole budget never fits.
//  4. Arrival times: a non-homogeneous Poisson process; given the number of batches,
//     their times are i.i.d. with the hourly intensity hour-of-day x weekday (day 0 is a
//     Monday) x log-normal day and hour factors, floored to whole seconds. Jobs are
//     then ordered by submit time and named 1, 2, ... in that order.
//  5. Each job gets a workload profile (model, batch size, AMP; GPU utilization and
//     memory drawn within the model's profiled range) and a final state.
// Only ds::Rng draws numbers (separate streams per step), so a seed gives the same
// workload on every compiler and platform.
#pragma once

#include <cstdint>

#include "model/workload.hpp"

namespace ds {

struct GeneratorConfig {
  std::uint64_t seed = 1;
  double days = 7;     // submission span
  double scale = 1.0;  // cluster size factor (1 = Venus: 15 VCs, 1,080 GPUs)
  double load = 0.89;  // target offered load: GPU-hours / (GPUs x span)
  // Heavier tail of large jobs: multiplies the mean GPUs of each tenant's multi-GPU jobs
  // (the published mix tilted further towards large sizes, capped at the tenant's quota);
  // per-GPU durations keep their calibration, so the same load comes in fewer, larger jobs.
  // 1 = Venus.
  double large_jobs = 1.0;
};

// Throws InputError for out-of-range settings.
Workload generate_workload(const GeneratorConfig& config);

// "seed 1, 7 days, scale 1, load 0.89": how a generated workload is labelled.
std::string describe(const GeneratorConfig& config);

}  // namespace ds
