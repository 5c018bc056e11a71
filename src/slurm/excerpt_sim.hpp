// Simulating a replay excerpt, once or as an ensemble over start-latency jitter. Used by
// `deepshare fidelity` (against a replay) and `deepshare excerpt` (before one).
//
// A real start takes a varying time (the controller's poll, Slurm's scheduling pass:
// 0.2-1 s wall here, docs/slurm.md §6). One simulation uses the mean latency; the
// ensemble re-simulates with each start's latency drawn uniformly from
// mean +- jitter (seeds 1..runs), which shows how far the excerpt's outcome moves with
// the timing noise alone: near a reclaim threshold a few hundred milliseconds decide
// which job is preempted, and an excerpt whose ensemble spreads widely cannot be
// reproduced closely by any single run, simulated or real.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/workload.hpp"
#include "sim/simulator.hpp"
#include "slurm/config.hpp"

namespace ds::slurm {

struct LatencyModel {
  double mean_wall_s = 0;    // decision -> running
  double jitter_wall_s = 0;  // each start: mean +- uniform(jitter)
};

// Speed 1 on shared GPUs (the replay's stand-ins are sleeps on fake GPUs).
RunRecord simulate_excerpt(const Workload& w, const ControllerConfig& config, double time_scale,
                           double latency_wall_s, double jitter_wall_s = 0, std::uint64_t seed = 1);

// The simulator's outputs (summary.json, jobs.csv, ...: report/outputs.hpp) in `dir`.
void write_excerpt_outputs(const std::string& dir, const Workload& w,
                           const ControllerConfig& config, double load, const RunRecord& r,
                           const std::string& version);

struct Range {
  double min = 0, max = 0, mean = 0;
};

struct ExcerptStats {
  std::size_t jobs = 0;  // jobs averaged over
  double avg_jct_s = 0, avg_queue_s = 0;
  std::size_t preemptions = 0, shared_starts = 0, borrowed_starts = 0;
};

// Means over the jobs that finished (and, when `include` is not empty, are marked in it).
ExcerptStats excerpt_stats(const Workload& w, const RunRecord& r,
                           const std::vector<bool>& include = {});

struct Ensemble {
  std::size_t runs = 0;
  Range avg_jct_s, avg_queue_s, preemptions;
};

Ensemble simulate_ensemble(const Workload& w, const ControllerConfig& config, double time_scale,
                           const LatencyModel& latency, std::size_t runs,
                           const std::vector<bool>& include = {});

}  // namespace ds::slurm
