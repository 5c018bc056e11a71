// What every real replay writes, whichever engine ran it (`deepshare slurm replay`,
// `deepshare k8s replay`): the simulator's outputs of what was observed (summary.json,
// jobs.csv, ...), observed.csv (per job: submit, first start, end, queue, runs, the engine's
// own id and times) and replay.json (what `deepshare fidelity` needs to simulate the same
// excerpt, and the measured latencies), with the manifest `deepshare fidelity` checks
// (replay_folder.hpp). The Kubernetes replay's writer; the Slurm replay (replay.cpp) still
// writes the same files itself, with its native-mode columns (to be folded into this one).
//
// Latency, in wall seconds, per run (docs/slurm.md §6, docs/kubernetes.md §7):
//  - detect:   submit -> the start decision, for first runs decided within 1 s;
//  - actuate:  the decision (ObservedRun::decided) -> seen running;
//  - overhang: observed run length - the job's work, for jobs that ran once.
// start_latency_wall_s = mean detect + mean actuate (what the simulations delay starts by).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "model/run_record.hpp"
#include "model/workload.hpp"
#include "replay/excerpt.hpp"
#include "replay/observed.hpp"
#include "report/metrics.hpp"

namespace ds::slurm {

struct ReplayFiles {
  const Workload* workload = nullptr;
  const std::vector<ObservedJob>* observed = nullptr;
  ExcerptSpec excerpt;
  std::string config_path;
  std::string policy;  // the config's (the simulator's stand-in for the engine's scheduler)
  std::map<std::string, std::string> options;
  std::vector<NodeShape> nodes;
  double wall_seconds = 0;
  std::size_t submitted = 0;
  std::string version;  // RunInfo::version of summary.json ("slurm-replay", "k8s-replay")
  std::string command;  // the manifest's command ("k8s replay")
  // The engine's columns of observed.csv: one after `job` (its id), some at the end.
  std::string id_header;                            // "slurm_id"
  std::vector<std::string> ids;                     // per job
  std::string tail_header;                          // "slurm_start_s,slurm_end_s"
  std::vector<std::vector<std::string>> tails;      // per job, the same number of fields
  nlohmann::json extra = nlohmann::json::object();  // merged into replay.json
};

struct ReplayResult {
  RunRecord record;
  Metrics metrics;
  std::size_t completed = 0;
  double start_latency_wall_s = 0;
};

// The fields every replay fills alike: what ran, on which nodes, from which excerpt and
// config (the engine's columns, wall time, submitted count and version are the caller's).
ReplayFiles replay_files(const Workload& w, const std::vector<ObservedJob>& observed,
                         const ExcerptSpec& spec, const ControllerConfig& config,
                         const std::string& config_path, const std::vector<NodeShape>& nodes);

// Writes the files to out_dir (a staged OutputFolder's, with manifest.json) and returns what
// they hold.
ReplayResult write_replay_files(const std::string& out_dir, const ReplayFiles& files);

// Actuation latency per run, in wall seconds (docs/slurm.md §6): detect = submit -> the
// scheduler's start decision (jobs placed at once, < 1 s), actuate = decision -> the engine
// shows the job running, overhang = observed run length - the job's work (jobs that ran
// once). `native`: no decision to time; submit -> running of the jobs started at once
// (< 2 s) counts as actuation. `deepshare fidelity` simulates with detect + actuate.
nlohmann::json observed_latencies(const Workload& w, const std::vector<ObservedJob>& obs,
                                  double scale, bool native);

}  // namespace ds::slurm
