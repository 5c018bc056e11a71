// Simulator-vs-real fidelity (`deepshare fidelity`): simulates the excerpt a replay ran
// (same trace, excerpt, time scale, cluster, tenants and policy options, read from its
// replay.json) and compares it job by job with what Slurm did (its observed.csv).
//
// Assumptions: the simulation uses speed 1 for shared GPUs (the replay's stand-ins are
// sleeps on fake GPUs: no interference to reproduce) and the simulator's restart model
// (which the stand-ins implement). Differences are reported in trace seconds; relative
// differences are (real - sim) / sim of the means.
// Start latency: a real start takes time (the controller sees the event within a poll,
// Slurm starts a released job on its next scheduling pass, ~0.6-0.8 s wall here), which
// the simulator counts as zero unless told (SimConfig::start_latency). The comparison
// simulates with the latency the replay measured (replay.json start_latency_wall_s, or
// --start-latency), scaled to trace time, and also reports the simulation without it.
#pragma once

#include <string>

namespace ds::slurm {

struct FidelityReport {
  std::size_t jobs = 0;  // jobs compared (completed in both)
  double sim_avg_jct_s = 0, real_avg_jct_s = 0, jct_rel = 0;
  double sim_avg_queue_s = 0, real_avg_queue_s = 0, queue_rel = 0;
  double mean_abs_jct_diff_s = 0, mean_abs_queue_diff_s = 0;
  double p90_abs_jct_diff_s = 0;
  std::size_t sim_preemptions = 0, real_preemptions = 0;
  std::size_t real_shared_runs = 0, real_borrowed_runs = 0;
  double time_scale = 1;
  double replay_wall_s = 0;
  double start_latency_wall_s = 0;  // used in the simulation (wall seconds)
  // the same simulation without start latency, over the same jobs
  double sim0_avg_jct_s = 0, sim0_avg_queue_s = 0, jct_rel0 = 0, queue_rel0 = 0;
  std::string markdown;
};

// Writes fidelity.json, fidelity_jobs.csv and the simulation's outputs (sim/) to out_dir.
// start_latency_wall_s < 0: the latency the replay measured (0 for replays without one).
FidelityReport run_fidelity(const std::string& replay_dir, const std::string& out_dir,
                            double start_latency_wall_s = -1);

}  // namespace ds::slurm
