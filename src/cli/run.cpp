#include "cli/run.hpp"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "model/colocation.hpp"
#include "policy/interference/interference.hpp"
#include "registry/registry.hpp"
#include "sim/simulator.hpp"
#include "sim/speed_models.hpp"
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

  // Ground truth of GPU sharing: measured pairs where Lucid profiled them, the fitted
  // interference model otherwise (never shown to the policy).
  SimConfig cfg;
  cfg.max_samples = max_samples_for(workload);
  const ColocationTable* table = aux->colocation ? &*aux->colocation : nullptr;
  InterferenceOptions no_cv;
  no_cv.folds = 0;  // the truth needs the model, not its cross-validated error
  const InterferenceFit truth_fit = fit_interference(table, no_cv);
  cfg.speed_model = measured_speed_model(workload, table, *truth_fit.model);
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
  RunRecord result = simulate(workload, *policy, cfg);
  if (printed && tty) std::fprintf(stderr, "\n");
  RunOutcome out;
  out.metrics = compute_metrics(workload, result);
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
  if (!req.out_dir.empty()) write_outputs(req.out_dir, workload, result, out.metrics, info);
  return out;
}

}  // namespace ds
