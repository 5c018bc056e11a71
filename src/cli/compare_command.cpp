// The `compare` subcommand: arguments, loading, and the printed summary.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/compare.hpp"
#include "cli/output_rules.hpp"
#include "cli/report_command.hpp"
#include "cli/trace_args.hpp"
#include "cli/validators.hpp"
#include "core/limits.hpp"

namespace ds {
namespace {

struct CompareArgs {
  TraceArgs trace{"venus"};
  std::vector<std::string> policies;
  std::vector<double> loads = {1.0};
  std::vector<std::string> sets;
  std::uint64_t seed = 1;
  unsigned threads = 0;
  std::string out;
  bool quiet = false;
  TruthOptions truth;
  bool force = false;
};

CompareArgs g_args;

int cmd_compare() {
  Workload w = load_workload(g_args.trace);
  CompareRequest req;
  req.policies = g_args.policies.empty() ? main_policies() : g_args.policies;
  req.loads = g_args.loads;
  req.sets = g_args.sets;
  req.out_dir = g_args.out;
  req.seed = g_args.seed;
  req.threads = g_args.threads;
  req.progress = !g_args.quiet;
  req.truth = g_args.truth;
  req.force = g_args.force;
  req.inputs = inputs_of(g_args.trace);
  req.html_report = true;
  const auto rows = run_compare(w, req, g_args.trace.label());
  std::printf("%s\nReport written to %s (comparison.md, comparison.csv, one folder per run)\n",
              comparison_table(rows).c_str(), g_args.out.c_str());
  return 0;
}

}  // namespace

void register_compare(CLI::App& app,
                      const std::function<void(CLI::App*, std::function<int()>)>& on_selected) {
  auto* cmd = app.add_subcommand(
      "compare", "Run several policies at several loads on one trace, in parallel, and tabulate");
  add_trace_options(cmd, g_args.trace);
  cmd->add_option("--policies", g_args.policies,
                  "Comma-separated policy names (default: the main policies)")
      ->delimiter(',');
  cmd->add_option("--loads", g_args.loads, "Comma-separated load factors (inter-arrival x 1/F)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(number_in(limits::kMinFactor, limits::kMaxFactor));
  cmd->add_option("--set", g_args.sets,
                  "KEY=VALUE for every policy that reads KEY, or POLICY:KEY=VALUE (repeatable)");
  cmd->add_option("--seed", g_args.seed, "Seed for any randomness")
      ->capture_default_str()
      ->check(seed_value());
  cmd->add_option("--threads", g_args.threads, "Parallel runs (default: one per core)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--out", g_args.out, "Report folder (must be empty or absent)")
      ->required()
      ->check(non_empty_path());
  cmd->add_flag("--force", g_args.force,
                "Replace the results of an earlier comparison in --out (a folder that holds "
                "anything else is refused)");
  cmd->add_flag("--quiet", g_args.quiet, "No progress output");
  add_truth_options(cmd, g_args.truth);
  on_selected(cmd, cmd_compare);
}

}  // namespace ds
