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
// Overhang: the stand-ins are seen running a little longer than their work, and the
// controller's predictor learns those observed times; the simulations (not the one
// without latency) add the replay's measured overhang to each run (--overhang).
// Timing noise: it also simulates an ensemble with each start's latency jittered
// (excerpt_sim.hpp; jitter from the replay's measured spread) and reports the range of
// its means, i.e. how much of a difference timing noise alone can explain.
#pragma once

#include <string>

#include "replay/excerpt_sim.hpp"

namespace ds::slurm {

struct FidelityReport {
  std::string engine = "Slurm";  // what ran the replay ("Kubernetes, scheduler kueue")
  std::size_t jobs = 0;          // jobs compared (completed in both)
  double sim_avg_jct_s = 0, real_avg_jct_s = 0, jct_rel = 0;
  double sim_avg_queue_s = 0, real_avg_queue_s = 0, queue_rel = 0;
  double sim_qos = 1, real_qos = 1;  // QoS compliance of entitled jobs (report/metrics.hpp)
  double mean_abs_jct_diff_s = 0, mean_abs_queue_diff_s = 0;
  double p90_abs_jct_diff_s = 0;
  std::size_t sim_preemptions = 0, real_preemptions = 0;
  std::size_t real_shared_runs = 0, real_borrowed_runs = 0;
  // the most GPU slots the simulation ran shared at once (allocated - busy GPUs): 0 for a
  // Kubernetes replay, which places whole GPUs and is simulated so
  int sim_peak_shared_gpus = 0;
  std::size_t real_incomplete = 0;  // replayed jobs that did not complete on Slurm
  double time_scale = 1;
  double replay_wall_s = 0;
  double start_latency_wall_s = 0;  // used in the simulation (wall seconds)
  // the same simulation without start latency, over the same jobs
  double sim0_avg_jct_s = 0, sim0_avg_queue_s = 0, jct_rel0 = 0, queue_rel0 = 0;
  double jitter_wall_s = 0;                             // of the ensemble
  double overhang_wall_s = 0;                           // added to each run (both sims)
  Ensemble ensemble;                                    // runs == 0: not simulated
  double jct_rel_ensemble = 0, queue_rel_ensemble = 0;  // real vs. the ensemble's mean
  std::string markdown;
};

struct FidelityOptions {
  double start_latency_wall_s = -1;  // < 0: the latency the replay measured (0 if none)
  double jitter_wall_s = -1;         // < 0: measured (p90 - p50 of decision -> RUNNING)
  double overhang_wall_s = -1;       // < 0: measured (mean observed run - work), else the default
  std::size_t ensemble = 32;         // jittered simulations; 0: none
  std::string config;                // the controller config; empty: replay.json's path
};

// Whether a real run agrees with the simulation within `tolerance` (a fraction). With an
// ensemble, the real mean JCT and mean queueing delay must each lie inside the range the
// jittered simulations span, widened by tolerance x the ensemble's mean: timing noise alone
// moves the simulated means that much, so a single simulation is no sharper a reference.
// Without one, each real mean must be within tolerance of the single simulation's. Returns
// an empty string when it agrees, else what differs.
std::string fidelity_disagreement(const FidelityReport& rep, double tolerance);

// The excerpt `fidelity` simulates for a replay folder (checked as run_fidelity checks it;
// `config` empty: replay.json's), its jobs as the replay's engine ran them: a Kubernetes
// replay's cannot share a GPU (the driver places whole GPUs), a Slurm replay's may.
Workload fidelity_workload(const std::string& replay_dir, const std::string& config = "");

// Reads the replay folder as a checked input (replay/replay_folder.hpp; its excerpt, rebuilt
// from its trace and config, must be the one it replayed: same jobs and workload digest),
// then writes fidelity.json, fidelity.md, fidelity_jobs.csv, the simulation's outputs
// (sim/) and manifest.json to out_dir (the caller's staging folder: output_folder.hpp).
FidelityReport run_fidelity(const std::string& replay_dir, const std::string& out_dir,
                            FidelityOptions options = {});

}  // namespace ds::slurm
