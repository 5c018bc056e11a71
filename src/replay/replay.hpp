// Time-scaled trace replay on a real Slurm cluster (`deepshare slurm replay`).
//
// Algorithm:
//  1. Build the excerpt workload (excerpt.hpp) on the partition's real nodes.
//  2. Start the controller in this process (its clock: trace time = (wall - wall0) x scale).
//  3. Submit each job at its scaled time as a real batch job under its tenant's account
//     (the submission gate parks it for DeepShare): a stand-in that sleeps its scaled run
//     time, checkpointing at the tenant's scaled checkpoint interval and paying the scaled
//     restart overhead after a requeue (the simulator's preemption model), with its GPUs
//     and profile as `--comment=ds:gpus=N;u=..;mem=..;trace=..`.
//  4. Poll Slurm every 100 ms and record each job's runs (start, end, pin, requeued or not).
//  5. When every job has ended (or the timeout passes), stop the controller and write
//     summary.json, jobs.csv, tenants.csv, timeseries.csv (as the simulator), observed.csv
//     (per job, incl. Slurm's own second-resolution times) and replay.json (what
//     `deepshare fidelity` needs to simulate the same excerpt).
// Native (`--native`, docs/slurm.md §14): the controller does not run; Slurm schedules the jobs
// by itself (deploy/slurm/native/); each asks for `gres:gpu:N`, N x cpus_per_gpu CPUs, its
// account's QOS or `scavenger`, and a time limit (baselines/slurm_user.hpp), and the
// measured start latency is submit -> RUNNING of the jobs Slurm started at once.
// Assumptions: the cluster runs the submission gate (deploy/slurm/job_submit.lua); the
// config lists the tenants (tenant_source: config: the simulation needs their quotas).
// The replay owns the partition while it runs (other jobs there would be scheduled by the
// same controller and skew the comparison).
#pragma once

#include <string>

#include "driver/log.hpp"
#include "replay/excerpt.hpp"
#include "report/metrics.hpp"
#include "slurm/config.hpp"

namespace ds::slurm {

struct ReplayRequest {
  ExcerptSpec excerpt;
  ControllerConfig config;
  std::string config_path;
  std::string out_dir;
  std::string work_dir;  // stand-in checkpoints and job output (must be visible to slurmd)
  double timeout_s = 1800;
  // Native Slurm: no controller, no gate; jobs ask Slurm for GPUs, CPUs (this many per GPU),
  // a QOS and a time limit as the `slurm` baseline's users do (config.options: its keys).
  bool native = false;
  int cpus_per_gpu = 0;
};

struct ReplayOutcome {
  Metrics metrics;
  double wall_seconds = 0;
  std::size_t submitted = 0;
  std::size_t completed = 0;
  double start_latency_wall_s = 0;  // measured: submit/event -> decision -> RUNNING (mean)
};

ReplayOutcome run_replay(const ReplayRequest& request, driver::Log& log);

}  // namespace ds::slurm
