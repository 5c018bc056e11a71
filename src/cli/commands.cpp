#include "cli/commands.hpp"

#include <cstdio>
#include <functional>
#include <map>

#include "cli/compare.hpp"
#include "cli/run.hpp"
#include "core/error.hpp"
#include "registry/registry.hpp"
#include "trace/load.hpp"

namespace ds {
namespace {

struct SimulateArgs {
  std::string trace;
  std::string format = "venus";
  std::string cluster;
  std::string policy = "fifo-isolated";
  std::vector<std::string> sets;
  std::vector<std::string> columns;
  double load_factor = 1.0;
  std::uint64_t seed = 1;
  std::string out;
  double checkpoint_interval = -1;  // seconds; < 0: keep the trace's intervals
  bool quiet = false;
};

SimulateArgs g_sim;
std::map<const CLI::App*, std::function<int()>> g_actions;

void print_headline(const std::string& label, const RunOutcome& r) {
  const Metrics& m = r.metrics;
  std::printf(
      "%-16s jobs %zu (completed %zu)  avg queue %.0f s  avg JCT %.0f s  occupancy %.3f "
      "(Lucid-compatible %.3f)  QoS %.3f  wall %.3f s\n",
      label.c_str(), m.jobs, m.jobs_completed, m.avg_queue_s, m.avg_jct_s, m.gpu_occupancy_full,
      m.gpu_occupancy_lucid, m.qos_compliance, r.wall_seconds);
}

int cmd_simulate() {
  LoadOptions lo;
  lo.format = g_sim.format;
  lo.cluster_file = g_sim.cluster;
  lo.columns = g_sim.columns;
  Workload w = load_trace(g_sim.trace, lo);
  override_checkpoint_interval(w, g_sim.checkpoint_interval);
  w.scale_load(g_sim.load_factor);
  RunRequest req;
  req.policy = g_sim.policy;
  for (const auto& s : g_sim.sets) req.options.set(s);
  req.load_factor = g_sim.load_factor;
  req.seed = g_sim.seed;
  req.out_dir = g_sim.out;
  req.progress = !g_sim.quiet;
  req.label = g_sim.policy;
  RunOutcome r = run_simulation(w, req, g_sim.trace);
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

}  // namespace

void register_commands(CLI::App& app) {
  auto* sim = app.add_subcommand("simulate", "Replay a trace under one policy and write outputs");
  sim->add_option("--trace", g_sim.trace, "Trace file (or folder, for Lucid's per-VC logs)")
      ->required();
  std::string formats;
  for (const auto& f : trace_formats()) formats += "\n  " + f.name + ": " + f.summary;
  sim->add_option("--format", g_sim.format, "Trace format:" + formats)->capture_default_str();
  sim->add_option("--cluster", g_sim.cluster,
                  "YAML file with nodes and tenants (replaces those derived from the trace)");
  sim->add_option("--policy", g_sim.policy, "Policy name (see `deepshare policies`)")
      ->capture_default_str();
  sim->add_option("--set", g_sim.sets, "Policy option KEY=VALUE (repeatable)");
  sim->add_option("--columns", g_sim.columns,
                  "Native format: FIELD=COLUMN mappings for CSVs with other headers");
  sim->add_option("--load-factor", g_sim.load_factor,
                  "Compress inter-arrival times: load x FACTOR")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sim->add_option("--seed", g_sim.seed, "Seed for any randomness")->capture_default_str();
  sim->add_option("--out", g_sim.out, "Output folder (summary.json, jobs.csv, ...)")->required();
  sim->add_option("--checkpoint-interval", g_sim.checkpoint_interval,
                  "Checkpoint interval of every tenant in seconds (0: at preemption, as Lucid)")
      ->check(CLI::NonNegativeNumber);
  sim->add_flag("--quiet", g_sim.quiet, "No progress output");
  g_actions[sim] = cmd_simulate;

  auto* pol = app.add_subcommand("policies", "List the registered policies, one line each");
  g_actions[pol] = cmd_policies;

  register_compare(app, [](CLI::App* cmd, std::function<int()> action) {
    g_actions[cmd] = std::move(action);
  });
}

int run_selected_command(CLI::App& app) {
  for (auto* sub : app.get_subcommands()) {
    auto it = g_actions.find(sub);
    if (it != g_actions.end()) return it->second();
  }
  throw InputError("no command given (try --help)");
}

}  // namespace ds
