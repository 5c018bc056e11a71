// The `compare` subcommand: arguments, loading, and the printed summary.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/compare.hpp"
#include "cli/report_command.hpp"
#include "cli/validators.hpp"
#include "trace/load.hpp"

namespace ds {
namespace {

struct CompareArgs {
  std::string trace;
  std::string format = "venus";
  std::string cluster;
  std::vector<std::string> columns;
  std::vector<std::string> policies;
  std::vector<double> loads = {1.0};
  std::vector<std::string> sets;
  double checkpoint_interval = -1;
  double fit_load = 0;
  std::uint64_t seed = 1;
  unsigned threads = 0;
  std::string out;
  bool quiet = false;
};

CompareArgs g_args;

int cmd_compare() {
  LoadOptions lo;
  lo.format = g_args.format;
  lo.cluster_file = g_args.cluster;
  lo.columns = g_args.columns;
  lo.fit_load = g_args.fit_load;
  Workload w = load_trace(g_args.trace, lo);
  for (const auto& n : w.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  override_checkpoint_interval(w, g_args.checkpoint_interval);
  CompareRequest req;
  req.policies = g_args.policies.empty() ? main_policies() : g_args.policies;
  req.loads = g_args.loads;
  req.sets = g_args.sets;
  req.out_dir = g_args.out;
  req.seed = g_args.seed;
  req.threads = g_args.threads;
  req.progress = !g_args.quiet;
  const auto rows = run_compare(w, req, g_args.trace);
  std::printf("%s\nReport written to %s (comparison.md, comparison.csv, one folder per run)\n",
              comparison_table(rows).c_str(), g_args.out.c_str());
  write_report_after_runs(g_args.out);
  return 0;
}

}  // namespace

void register_compare(CLI::App& app,
                      const std::function<void(CLI::App*, std::function<int()>)>& on_selected) {
  auto* cmd = app.add_subcommand(
      "compare", "Run several policies at several loads on one trace, in parallel, and tabulate");
  cmd->add_option("--trace", g_args.trace, "Trace file (or folder, for Lucid's per-VC logs)")
      ->required();
  std::string formats;
  for (const auto& f : trace_formats()) formats += "\n  " + f.name + ": " + f.summary;
  cmd->add_option("--format", g_args.format, "Trace format:" + formats)->capture_default_str();
  cmd->add_option("--cluster", g_args.cluster,
                  "YAML file with nodes and tenants (replaces those derived from the trace)");
  cmd->add_option("--columns", g_args.columns,
                  "Native format: FIELD=COLUMN mappings for CSVs with other headers");
  cmd->add_option("--policies", g_args.policies,
                  "Comma-separated policy names (default: the main policies)")
      ->delimiter(',');
  cmd->add_option("--loads", g_args.loads, "Comma-separated load factors (inter-arrival x 1/F)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--set", g_args.sets,
                  "KEY=VALUE for every policy that reads KEY, or POLICY:KEY=VALUE (repeatable)");
  cmd->add_option("--checkpoint-interval", g_args.checkpoint_interval,
                  "Checkpoint interval of every tenant in seconds (0: at preemption, as Lucid)")
      ->check(non_negative_number());
  cmd->add_option("--seed", g_args.seed, "Seed for any randomness")->capture_default_str();
  cmd->add_option("--threads", g_args.threads, "Parallel runs (default: one per core)");
  cmd->add_option("--fit-load", g_args.fit_load,
                  "Resize the cluster so that the offered load is about this (see simulate)")
      ->check(positive_number());
  cmd->add_option("--out", g_args.out, "Report folder")->required();
  cmd->add_flag("--quiet", g_args.quiet, "No progress output");
  on_selected(cmd, cmd_compare);
}

}  // namespace ds
