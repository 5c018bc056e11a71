// Writes a run's outputs: summary.json, jobs.csv, tenants.csv, timeseries.csv
// (formats in docs/outputs.md). Everything but summary.json's wall_seconds is
// a pure function of the inputs, so two runs give byte-identical files.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "report/metrics.hpp"

namespace ds {

struct RunInfo {
  std::string policy;
  std::string trace;
  std::string format;
  double load_factor = 1.0;
  std::uint64_t seed = 0;
  std::map<std::string, std::string> options;
  double wall_seconds = 0;
  std::string version;
  bool oracle = false;             // the policy saw true run times
  std::string truth = "measured";  // the simulator's ground truth of shared GPUs (--truth)
  // For the folder's manifest.json (core/manifest.hpp): the command that wrote it, and the
  // digest of the workload before any load scaling (Workload::digest; empty: the
  // simulated workload's own), shared by every run of one comparison.
  std::string command = "simulate";
  std::string workload_digest;
  // A folder of another kind than a run (`slurm replay`: "replay"), its own files (written
  // in the same set, before manifest.json) and more identity (merged into run_identity).
  std::string kind = "run";
  std::vector<std::pair<std::string, std::string>> extra_files;
  nlohmann::json extra_identity = nlohmann::json::object();
};

// The identity a run folder's manifest records: command, policy, trace, format, load
// factor, seed, workload digest and counts (jobs, tenants, GPUs).
nlohmann::json run_identity(const Workload& w, const RunInfo& info);

// Writes summary.json, jobs.csv, tenants.csv, timeseries.csv and, last, manifest.json
// (their sizes and digests, run_identity). Creates `dir` if needed; throws InputError when
// it cannot be written.
void write_outputs(const std::string& dir, const Workload& w, const RunRecord& r, const Metrics& m,
                   const RunInfo& info);

// "12" for whole seconds, "12.345" otherwise.
std::string format_seconds(Time t);

}  // namespace ds
