// The `deepshare` subcommands: simulate, demo, policies, trace stats.
//
// Each subcommand fills a plain argument struct through CLI11 and registers its
// action in g_actions (keyed by its CLI::App); run_selected_command runs the action
// of the innermost selected subcommand. Import notes (Workload::notes) go to stderr
// so that stdout holds only results.
#include "cli/commands.hpp"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "cli/compare.hpp"
#include "cli/output_rules.hpp"
#include "cli/pack.hpp"
#include "cli/report_command.hpp"
#include "cli/run.hpp"
#include "cli/slurm_commands.hpp"
#include "cli/trace_args.hpp"
#include "cli/validators.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/output_folder.hpp"
#include "registry/registry.hpp"
#include "report/comparison.hpp"
#include "trace/generator.hpp"
#include "trace/load.hpp"
#include "trace/stats.hpp"

namespace ds {
namespace {

struct SimulateArgs {
  TraceArgs trace{"venus"};
  std::string policy = "fifo-isolated";
  std::vector<std::string> sets;
  double load_factor = 1.0;
  std::uint64_t seed = 1;
  std::string out;
  bool quiet = false;
  TruthOptions truth;
};

struct DemoArgs {
  std::string out = "demo-report";
  GeneratorConfig workload;
  std::vector<std::string> policies;
  bool quiet = false;
  bool force = false;
};

struct StatsArgs {
  std::string path;
  std::string format = "venus";
  std::string cluster;
  std::vector<std::string> columns;
  bool generated = false;
  GeneratorConfig workload;
};

SimulateArgs g_sim;
DemoArgs g_demo;
StatsArgs g_stats;
std::map<const CLI::App*, std::function<int()>> g_actions;

void print_notes(const Workload& w) {
  for (const auto& n : w.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
}

void print_headline(const std::string& label, const RunOutcome& r) {
  const Metrics& m = r.metrics;
  std::printf(
      "%-16s jobs %zu (completed %zu)  avg queue %.0f s  avg JCT %.0f s  occupancy %.3f "
      "(Lucid-compatible %.3f)  QoS %.3f  wall %.3f s\n",
      label.c_str(), m.jobs, m.jobs_completed, m.avg_queue_s, m.avg_jct_s, m.gpu_occupancy_full,
      m.gpu_occupancy_lucid, m.qos_compliance, r.wall_seconds);
}

int cmd_simulate() {
  Workload w = load_workload(g_sim.trace);
  const std::string digest = w.digest();  // of the trace as loaded, before --load-factor
  scale_load_checked(w, g_sim.load_factor);
  // Checked, locked and staged before the run: complete or absent (core/output_folder.hpp).
  OutputFolder out(g_sim.out, run_folder_rules(inputs_of(g_sim.trace)));
  RunRequest req;
  req.policy = g_sim.policy;
  for (const auto& s : g_sim.sets) req.options.set(s);
  req.load_factor = g_sim.load_factor;
  req.seed = g_sim.seed;
  req.out_dir = out.dir().string();
  req.progress = !g_sim.quiet;
  req.label = g_sim.policy;
  req.truth = g_sim.truth;
  req.workload_digest = digest;
  RunOutcome r = run_simulation(w, req, g_sim.trace.label());
  out.commit();
  print_headline(g_sim.policy, r);
  std::printf("outputs written to %s\n", g_sim.out.c_str());
  return 0;
}

int cmd_policies() {
  for (const auto& p : policy_registry()) {
    std::printf("%-16s %s", p.name.c_str(), p.summary.c_str());
    if (!p.options.empty()) std::printf(" [--set %s]", p.options.c_str());
    std::printf("\n");
  }
  return 0;
}

// Runs every policy on the built-in workload. A policy that fails (a bug, since the
// workload is valid) is reported and left out of the table; the others still run,
// and the exit status is 3.
int cmd_demo() {
  // The demo is a `compare` of the main policies (compare.hpp) at load 1 on the
  // built-in workload, with folders named by policy.
  const std::vector<std::string> policies =
      g_demo.policies.empty() ? main_policies() : g_demo.policies;
  for (const auto& p : policies)
    if (!find_policy(p))
      throw InputError("unknown policy " + quote_input(p) + " (see `deepshare policies`)");
  const Workload w = generate_workload(g_demo.workload);
  std::printf("DeepShare demo on the built-in workload (%s): %zu jobs, %zu tenants, %d GPUs\n",
              describe(g_demo.workload).c_str(), w.jobs.size(), w.tenants.size(),
              w.cluster.total_gpus());
  std::fflush(stdout);
  print_notes(w);
  namespace fs = std::filesystem;
  const fs::path dir(g_demo.out);
  CompareRequest req;
  req.policies = policies;
  req.seed = g_demo.workload.seed;
  req.out_dir = dir.string();
  req.progress = !g_demo.quiet;
  req.by_policy_only = true;
  req.force = g_demo.force;
  req.title = "DeepShare demo: " + w.name;
  req.command = "demo";
  req.extra_files = {{"workload.md", stats_markdown(compute_stats(w))}};
  req.html_report = true;
  std::vector<std::string> failed;
  const std::vector<ComparisonRow> rows = run_compare(w, req, w.name, &failed);
  for (const auto& r : rows) print_headline(r.policy, RunOutcome{r.metrics, r.wall_seconds});
  std::printf("\n%s\n", comparison_table(rows).c_str());
  if (!failed.empty()) {
    std::string names;
    for (const auto& p : failed) names += (names.empty() ? "" : ", ") + p;
    std::printf("Failed (not in the table): %s\n", names.c_str());
  }
  std::printf("Report written to %s\n", dir.string().c_str());
  return failed.empty() ? 0 : 3;
}

int cmd_trace_stats() {
  if (g_stats.generated == !g_stats.path.empty())
    throw InputError("trace stats: give either a trace PATH or --generated");
  Workload w;
  if (g_stats.generated) {
    w = generate_workload(g_stats.workload);
  } else {
    LoadOptions lo;
    lo.format = g_stats.format;
    lo.cluster_file = g_stats.cluster;
    lo.columns = g_stats.columns;
    w = load_trace(g_stats.path, lo);
  }
  print_notes(w);
  std::fputs(stats_markdown(compute_stats(w)).c_str(), stdout);
  return 0;
}

// --seed/--days/--scale/--load of the built-in workload generator.
void add_generator_options(CLI::App* cmd, GeneratorConfig& c) {
  cmd->add_option("--seed", c.seed, "Seed of the built-in workload")
      ->capture_default_str()
      ->check(seed_value());
  cmd->add_option("--days", c.days, "Submission span in days")->capture_default_str();
  cmd->add_option("--scale", c.scale,
                  "Cluster size factor: 1 = Venus (15 tenants, 1,080 GPUs); each tenant keeps "
                  "at least one 8-GPU node")
      ->capture_default_str();
  cmd->add_option("--load", c.load, "Target offered load: GPU-hours / (GPUs x span)")
      ->capture_default_str();
}

void register_demo(CLI::App& app) {
  auto* demo = app.add_subcommand(
      "demo",
      "Generate the built-in Venus-like workload and compare policies on it (no data needed)");
  demo->add_option("--out", g_demo.out,
                   "Report folder (must be empty or absent): comparison.md, comparison.csv, "
                   "workload.md and one folder of outputs per policy")
      ->capture_default_str()
      ->check(non_empty_path());
  demo->add_flag("--force", g_demo.force,
                 "Replace the results of an earlier demo in --out (a folder that holds "
                 "anything else is refused)");
  add_generator_options(demo, g_demo.workload);
  demo->add_option("--policy", g_demo.policies,
                   "Policy to compare (repeatable); default: the registered ones of "
                   "fifo-isolated, fifo-pooled, sjf, srtf, qssf, tiresias, lucid, kueue, "
                   "deepshare (run in parallel, as `compare`)");
  demo->add_flag("--quiet", g_demo.quiet, "No progress output");
  demo->footer("Example: deepshare demo --days 3 --scale 0.25 --out /tmp/demo");
  g_actions[demo] = cmd_demo;
}

void register_trace(CLI::App& app) {
  auto* trace = app.add_subcommand("trace", "Inspect traces and the built-in workload");
  trace->require_subcommand(1);
  auto* stats = trace->add_subcommand(
      "stats",
      "Summarise a workload as Markdown: per-tenant table, GPU-count mix, duration quantiles, "
      "final states, arrivals (as in STATS.md)");
  stats->add_option("path", g_stats.path, "Trace file (or folder, for Lucid's per-VC logs)");
  stats->add_option("--format", g_stats.format, "Trace format:" + format_list())
      ->capture_default_str();
  stats->add_option("--cluster", g_stats.cluster,
                    "YAML file with nodes and tenants (replaces those derived from the trace)");
  stats->add_option("--columns", g_stats.columns,
                    "Native format: FIELD=COLUMN mappings for CSVs with other headers");
  stats->add_flag("--generated", g_stats.generated,
                  "Describe the built-in workload instead of a trace file");
  add_generator_options(stats, g_stats.workload);
  stats->footer(
      "Examples:\n  deepshare trace stats ../shared/traces/venus-sept/venus_sept_23859_jobs.csv\n"
      "  deepshare trace stats --generated --seed 2 --days 7");
  g_actions[stats] = cmd_trace_stats;
}

const std::function<int()>* find_action(const CLI::App& app) {
  for (const auto* sub : app.get_subcommands()) {
    if (const auto* inner = find_action(*sub)) return inner;
    auto it = g_actions.find(sub);
    if (it != g_actions.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace

void register_commands(CLI::App& app) {
  auto* sim = app.add_subcommand("simulate", "Replay a trace under one policy and write outputs");
  add_trace_options(sim, g_sim.trace);
  sim->add_option("--policy", g_sim.policy, "Policy name (see `deepshare policies`)")
      ->capture_default_str();
  sim->add_option("--set", g_sim.sets, "Policy option KEY=VALUE (repeatable)");
  sim->add_option("--load-factor", g_sim.load_factor, "Compress inter-arrival times: load x FACTOR")
      ->capture_default_str()
      ->check(number_in(limits::kMinFactor, limits::kMaxFactor));
  sim->add_option("--seed", g_sim.seed, "Seed for any randomness")
      ->capture_default_str()
      ->check(seed_value());
  sim->add_option("--out", g_sim.out, "Output folder (summary.json, jobs.csv, ...)")
      ->required()
      ->check(non_empty_path());
  sim->add_flag("--quiet", g_sim.quiet, "No progress output");
  add_truth_options(sim, g_sim.truth);
  g_actions[sim] = cmd_simulate;

  auto* pol = app.add_subcommand("policies", "List the registered policies, one line each");
  g_actions[pol] = cmd_policies;

  register_compare(
      app, [](CLI::App* cmd, std::function<int()> action) { g_actions[cmd] = std::move(action); });
  register_report(
      app, [](CLI::App* cmd, std::function<int()> action) { g_actions[cmd] = std::move(action); });
  register_demo(app);
  register_pack(
      app, [](CLI::App* cmd, std::function<int()> action) { g_actions[cmd] = std::move(action); });
  register_trace(app);
  register_slurm_commands(
      app, [](CLI::App* cmd, std::function<int()> action) { g_actions[cmd] = std::move(action); });
}

int run_selected_command(CLI::App& app) {
  if (const auto* action = find_action(app)) return (*action)();
  throw InputError("no command given (try --help)");
}

}  // namespace ds
