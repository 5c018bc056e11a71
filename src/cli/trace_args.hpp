// The trace options that `simulate`, `compare` and `pack` share, and loading a workload
// from them (import notes printed, --checkpoint-interval applied).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/workload.hpp"

namespace CLI {
class App;
}

namespace ds {

struct TraceArgs {
  explicit TraceArgs(std::string default_format) : format(std::move(default_format)) {}

  std::string trace;
  std::string format;
  std::string cluster;
  std::vector<std::string> columns;
  std::string aux;                  // --aux: folder of auxiliary inputs, "none", or empty
  double fit_load = 0;              // > 0: resize the cluster to this offered load
  double checkpoint_interval = -1;  // seconds; < 0: keep the trace's intervals
  bool no_profiles = false;         // --no-profiles: drop_profiles() (trace/load.hpp)
  std::string generated;            // --generated SPEC: the built-in workload instead of --trace
  double jitter_s = 0;              // --jitter: largest random submission delay (seconds)
  std::uint64_t jitter_seed = 1;    // --jitter-seed

  // The workload's label in reports: the trace path, or "generated (seed 1, ...)".
  [[nodiscard]] std::string label() const;
};

// "\n  name: summary" for every trace format, for --help texts.
std::string format_list();

// Adds --trace --format --cluster --columns --aux --no-profiles and, with `workload_options`,
// --fit-load, --checkpoint-interval, --jitter, --jitter-seed and --generated. `args.format` holds
// the default format.
void add_trace_options(CLI::App* cmd, TraceArgs& args, bool workload_options = true);

// Loads the trace (or generates the workload), prints its import notes to stderr and
// applies --aux, --no-profiles, --jitter and --checkpoint-interval.
Workload load_workload(const TraceArgs& args);

}  // namespace ds
