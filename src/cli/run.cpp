#include "cli/run.hpp"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "registry/registry.hpp"
#include "sim/simulator.hpp"
#include "trace/aux_files.hpp"

namespace ds {

std::size_t max_samples_for(const Workload& w) {
  constexpr std::size_t kSamples = 10'000, kRows = 500'000;
  const std::size_t by_rows = kRows / (w.tenants.size() + 1);
  return std::max<std::size_t>(2, std::min(kSamples, by_rows));
}

RunOutcome run_simulation(const Workload& workload, const RunRequest& req,
                          const std::string& trace_label) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  std::vector<Time> oracle;
  const PolicyInfo* info_entry = find_policy(req.policy);
  if (info_entry && info_entry->oracle) {
    oracle.reserve(workload.truth.size());
    for (const auto& t : workload.truth) oracle.push_back(t.work);
  }
  std::optional<AuxData> own_aux;
  const AuxData* aux = req.aux;
  if (!aux) aux = &own_aux.emplace(load_aux(workload.aux_dir));
  PolicyContext ctx{workload.cluster, workload.tenants, req.options, oracle, aux};
  auto policy = make_policy(req.policy, ctx);

  // Ground truth of GPU sharing (never shown to the policy): by default measured pairs
  // where Lucid profiled them, the fitted interference model otherwise (cli/truth.hpp).
  SimConfig cfg;
  const GroundTruth truth(workload, req.truth, req.policy, *aux);
  truth.apply(cfg);
  const Workload& simulated = truth.workload();
  cfg.max_samples = max_samples_for(workload);
  auto last_print = t0;
  bool printed = false;
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (req.progress) {
    cfg.progress = [&](Time now, std::size_t settled, std::size_t total) {
      const auto wall = Clock::now();
      const bool done = settled == total;
      if (wall - t0 < std::chrono::seconds(1)) return;
      if (!done && wall - last_print < std::chrono::milliseconds(tty ? 250 : 5000)) return;
      last_print = wall;
      printed = true;
      std::fprintf(
          stderr, "%s[%s] simulated %.1f days, %zu/%zu jobs settled (%.0f%%)%s", tty ? "\r" : "",
          req.label.c_str(),
          to_seconds(now - (workload.jobs.empty() ? 0 : workload.jobs.front().submit)) / 86400.0,
          settled, total, total ? 100.0 * static_cast<double>(settled) / total : 100.0,
          tty ? "   " : "\n");
    };
  }
  RunRecord result = simulate(simulated, *policy, cfg);
  if (printed && tty) std::fprintf(stderr, "\n");
  RunOutcome out;
  out.metrics = compute_metrics(simulated, result);
  // The simulation ended with jobs still waiting (nothing left to happen): the policy
  // left them; a result that says so, not one that looks complete.
  if (const std::size_t left =
          out.metrics.jobs - out.metrics.jobs_completed - out.metrics.jobs_rejected)
    std::fprintf(stderr,
                 "deepshare: warning: [%s] %zu jobs were still waiting when the simulation "
                 "ended (status never_started or pending in jobs.csv, with their wait_reason)\n",
                 req.label.c_str(), left);
  out.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  RunInfo info;
  info.policy = req.policy;
  info.trace = trace_label;
  info.format = workload.format;
  info.load_factor = req.load_factor;
  info.seed = req.seed;
  info.options = req.options.values();
  info.wall_seconds = out.wall_seconds;
  info.version = DEEPSHARE_VERSION;
  info.oracle = !oracle.empty();
  info.truth = req.truth.describe();
  info.command = req.command;
  info.workload_digest = req.workload_digest;
  if (!req.out_dir.empty()) write_outputs(req.out_dir, simulated, result, out.metrics, info);
  return out;
}

}  // namespace ds
