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

// What a real start and end take beyond the simulator's instant ones (wall seconds).
// Overhang: a stand-in is seen running for longer than its work (launch, TaskProlog, the
// end seen on the next poll: 0.06-0.08 s on an idle machine, ~0.55 s with the other core
// busy, docs/slurm.md §12). The controller holds the GPUs that long and its predictor
// learns those observed run times, so the simulation adds it to every job's run time.
struct LatencyModel {
  double mean_wall_s = 0;      // decision -> running
  double jitter_wall_s = 0;    // each start: mean +- uniform(jitter)
  double overhang_wall_s = 0;  // added to each job's run time (its completing run)
};

// Without a measurement (`deepshare excerpt`, replays from before it was measured): the
// overhang measured on an idle machine (docs/slurm.md §12).
inline constexpr double kDefaultOverhangWallS = 0.07;

// The workload as the controller sees it run: each job's work + overhang (trace time).
Workload with_overhang(const Workload& w, double time_scale, double overhang_wall_s);

// Speed 1 on shared GPUs (the replay's stand-ins are sleeps on fake GPUs). `seed` draws
// each start's latency when latency.jitter_wall_s > 0.
RunRecord simulate_excerpt(const Workload& w, const ControllerConfig& config, double time_scale,
                           const LatencyModel& latency, std::uint64_t seed = 1);

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
  double qos_compliance = 1;  // of the whole run (report/metrics.hpp), not just `include`
  std::size_t preemptions = 0, shared_starts = 0, borrowed_starts = 0;
};

// Means over the jobs that finished (and, when `include` is not empty, are marked in it).
ExcerptStats excerpt_stats(const Workload& w, const RunRecord& r,
                           const std::vector<bool>& include = {});

struct Ensemble {
  std::size_t runs = 0;
  Range avg_jct_s, avg_queue_s, preemptions, qos_compliance;
};

Ensemble simulate_ensemble(const Workload& w, const ControllerConfig& config, double time_scale,
                           const LatencyModel& latency, std::size_t runs,
                           const std::vector<bool>& include = {});

}  // namespace ds::slurm
