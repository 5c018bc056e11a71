// Ground-truth speed models for the simulator (SimConfig::speed_model).
//
// Assumptions:
//  - The truth of two jobs sharing a GPU is Lucid's measurement of that pair
//    (colocate_info.csv) when it exists; otherwise the fitted interference model stands
//    in for it (no better truth is available). Measured speeds above 1 (noise) count as 1.
//  - A multi-GPU job shares each GPU with the same pattern as the measured 1-GPU pairs;
//    the simulator takes its slowest GPU.
// Algorithm, for `job` on one GPU with partners o_1..o_n:
//  1. For each partner, the pairwise speed s_i: the measured speed when both jobs have
//     profiles and the pair is in the table, else fallback.speed(job, o_i).
//  2. Speed = product of min(1, s_i), floored at 0.001: each partner takes its own share of the
//     job's throughput, independently (exact for n = 1; the measured data has no triples).
// The policy never sees this: it only gets its own InterferenceModel predictions.
#pragma once

#include "model/colocation.hpp"
#include "policy/interference/interference.hpp"
#include "sim/simulator.hpp"

namespace ds {

// `workload`, `table` (may be null) and `fallback` must outlive the returned function.
SpeedModel measured_speed_model(const Workload& workload, const ColocationTable* table,
                                const InterferenceModel& fallback);

// The JobShape of a job (its profile from workload.profiles, util and memory).
JobShape job_shape(const Workload& workload, const JobSpec& job);

// One interference model for every pair, measured or not (`--truth fallback` uses the
// built-in util/memory model: a model family other than the policy's profile model).
SpeedModel model_speed_model(const Workload& workload, const InterferenceModel& model);

// Time slicing: each of n jobs on a GPU runs at 1/n (`--truth slicing`; the simulator's
// default when no model is given).
SpeedModel time_slicing_speed_model();

// The misprediction option (`--truth-error E`): every shared job's slowdown is (1 + E)
// times what `base` says (speed = base / (1 + E)), so the policy's interference model is
// optimistic by E. E = 0 returns `base`.
SpeedModel worse_than_predicted(SpeedModel base, double error);

}  // namespace ds
