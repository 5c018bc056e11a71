#include "cli/trace_args.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/compare.hpp"
#include "cli/validators.hpp"
#include "core/limits.hpp"
#include "trace/load.hpp"

namespace ds {

std::string format_list() {
  std::string formats;
  for (const auto& f : trace_formats()) formats += "\n  " + f.name + ": " + f.summary;
  return formats;
}

void add_trace_options(CLI::App* cmd, TraceArgs& a, bool workload_options) {
  cmd->add_option("--trace", a.trace, "Trace file (or folder, for Lucid's per-VC logs)")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--format", a.format, "Trace format:" + format_list())->capture_default_str();
  cmd->add_option("--cluster", a.cluster,
                  "YAML file with nodes and tenants (replaces those derived from the trace)");
  cmd->add_option("--columns", a.columns,
                  "Native format: FIELD=COLUMN mappings for CSVs with other headers");
  if (!workload_options) return;
  cmd->add_option("--checkpoint-interval", a.checkpoint_interval,
                  "Checkpoint interval of every tenant in seconds (0: at preemption, as Lucid)")
      ->check(number_in(0, static_cast<double>(limits::kMaxInterval / kSecond)));
  cmd->add_option("--fit-load", a.fit_load,
                  "Resize the cluster (every owner's nodes and quotas alike) so that the "
                  "offered load is about this, e.g. 0.9 for openb's mostly idle node list")
      ->check(number_in(limits::kMinFactor, limits::kMaxFactor));
}

Workload load_workload(const TraceArgs& a) {
  LoadOptions lo;
  lo.format = a.format;
  lo.cluster_file = a.cluster;
  lo.columns = a.columns;
  lo.fit_load = a.fit_load;
  Workload w = load_trace(a.trace, lo);
  for (const auto& n : w.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  override_checkpoint_interval(w, a.checkpoint_interval);
  return w;
}

}  // namespace ds
