#include "cli/trace_args.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "cli/compare.hpp"
#include "cli/validators.hpp"
#include "core/error.hpp"
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
  cmd->add_option("--aux", a.aux,
                  "Folder of auxiliary inputs: measured colocation pairs (colocate_info.csv, "
                  "single_data.csv: sharing ground truth and interference model) and Lucid's "
                  "estimate and forecast files. Default: the trace's aux/ folder when it has "
                  "one; 'none': no auxiliary inputs");
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
  if (a.aux == "none") {
    w.aux_dir.clear();
  } else if (!a.aux.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(a.aux, ec))
      throw InputError("--aux " + quote_input(a.aux) + ": not a folder");
    w.aux_dir = a.aux;
  }
  for (const auto& n : w.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  override_checkpoint_interval(w, a.checkpoint_interval);
  return w;
}

}  // namespace ds
