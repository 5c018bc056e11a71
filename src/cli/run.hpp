// The shared "load, simulate, measure, write" pipeline behind `simulate` and `demo`.
#pragma once

#include <string>

#include "cli/truth.hpp"
#include "model/aux_data.hpp"
#include "policy/policy.hpp"
#include "report/metrics.hpp"
#include "report/outputs.hpp"

namespace ds {

struct RunRequest {
  std::string policy;
  PolicyOptions options;
  double load_factor = 1.0;
  std::uint64_t seed = 1;
  std::string out_dir;
  bool progress = true;  // print progress to stderr on runs longer than a second
  std::string label;     // progress prefix
  // The workload's auxiliary inputs (measured colocation pairs for the ground truth of
  // shared GPUs and for policies, Lucid's files), read once by the caller; null: read
  // from the workload's aux folder here.
  const AuxData* aux = nullptr;
  TruthOptions truth;  // the simulator's ground truth (cli/truth.hpp)
  // For manifest.json (report/outputs.hpp, RunInfo): the command, and the digest of the
  // workload before load scaling (empty: the simulated workload's own).
  std::string command = "simulate";
  std::string workload_digest;
};

struct RunOutcome {
  Metrics metrics;
  double wall_seconds = 0;
};

// The timeseries bound for a workload (SimConfig::max_samples): at most 10,000 samples and
// at most 500,000 rows of timeseries.csv (one per sample and scope: cluster + tenants).
std::size_t max_samples_for(const Workload& workload);

// Simulates `workload` (already load-scaled) under the request and writes outputs.
RunOutcome run_simulation(const Workload& workload, const RunRequest& request,
                          const std::string& trace_label);

}  // namespace ds
