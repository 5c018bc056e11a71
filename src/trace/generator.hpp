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
//     and mean GPUs, capped at the VC's GPUs) and a duration model (published quantiles,
//     moved to the VC's median, upper tail stretched to the VC's published GPU-hours per
//     job); users: 118 users, each homed in one VC, some also submitting to others.
//  3. Jobs come in same-second batches (geometric size, 13.2 % zero gaps) of one tenant,
//     user, GPU count and model. A tenant is drawn per batch with weight proportional to
//     its published offered load x GPUs / expected GPU-seconds per job (at scale 1: its
//     published job share). Batches are drawn until the jobs' GPU-seconds reach
//     load x GPUs x span: this sets the arrival rate so that the offered load hits the
//     target. A batch that would overshoot it by more than 1 % is drawn again, so a
//     single huge job at the end cannot skew a short run's load.
//  4. Arrival times: a non-homogeneous Poisson process; given the number of batches,
//     their times are i.i.d. with the hourly intensity hour-of-day x weekday (day 0 is a
//     Monday) x log-normal day and hour factors, floored to whole seconds, sorted, and
//     given to the batches in order.
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
};

// Throws InputError for out-of-range settings.
Workload generate_workload(const GeneratorConfig& config);

// "seed 1, 7 days, scale 1, load 0.89": how a generated workload is labelled.
std::string describe(const GeneratorConfig& config);

}  // namespace ds
