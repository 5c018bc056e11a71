#include "replay/excerpt_sim.hpp"

#include <algorithm>
#include <cmath>

#include "registry/registry.hpp"
#include "report/metrics.hpp"
#include "report/outputs.hpp"

namespace ds::slurm {

namespace {
Time to_trace_ms(double wall_s, double time_scale) {
  return static_cast<Time>(std::llround(wall_s * time_scale * 1000.0));
}
}  // namespace

Workload with_overhang(const Workload& w, double time_scale, double overhang_wall_s) {
  Workload out = w;
  const Time add = to_trace_ms(overhang_wall_s, time_scale);
  for (auto& t : out.truth) t.work += add;
  return out;
}

RunRecord simulate_excerpt(const Workload& w, const ControllerConfig& config, double time_scale,
                           const LatencyModel& latency, std::uint64_t seed) {
  if (latency.overhang_wall_s > 0) {
    const Workload seen = with_overhang(w, time_scale, latency.overhang_wall_s);
    return simulate_excerpt(seen, config, time_scale, {latency.mean_wall_s, latency.jitter_wall_s},
                            seed);
  }
  PolicyOptions options(config.options);
  PolicyContext ctx{w.cluster, w.tenants, options};
  auto policy = make_policy(config.policy, ctx);
  SimConfig sc;
  sc.speed_model = [](const JobSpec&, std::span<const JobSpec* const>) { return 1.0; };
  sc.start_latency = to_trace_ms(latency.mean_wall_s, time_scale);
  sc.start_latency_jitter = to_trace_ms(latency.jitter_wall_s, time_scale);
  sc.latency_seed = seed;
  sc.restarts_colocatable = false;  // as on Slurm: a restarted job's GRES request is fixed
  return simulate(w, *policy, sc);
}

void write_excerpt_outputs(const std::string& dir, const Workload& w,
                           const ControllerConfig& config, double load, const RunRecord& r,
                           const std::string& version) {
  RunInfo info;
  info.policy = config.policy;
  info.trace = w.name;
  info.format = w.format;
  info.load_factor = load;
  info.options = config.options;
  info.version = version;
  info.command = "excerpt";
  write_outputs(dir, w, r, compute_metrics(w, r), info);
}

ExcerptStats excerpt_stats(const Workload& w, const RunRecord& r,
                           const std::vector<bool>& include) {
  ExcerptStats s;
  double jct = 0, queue = 0;
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const JobOutcome& o = r.jobs[i];
    s.preemptions += o.preemptions;
    if (o.end == kNever || (!include.empty() && !include[i])) continue;
    ++s.jobs;
    jct += to_seconds(o.end - w.jobs[i].submit);
    queue += to_seconds(o.queue);
  }
  if (s.jobs > 0) s.avg_jct_s = jct / static_cast<double>(s.jobs);
  if (s.jobs > 0) s.avg_queue_s = queue / static_cast<double>(s.jobs);
  auto count = [&](const char* key) {
    auto it = r.policy_summary.find(key);
    return it == r.policy_summary.end() ? 0 : static_cast<std::size_t>(it->second);
  };
  s.qos_compliance = compute_metrics(w, r).qos_compliance;
  s.shared_starts = count("shared_starts");
  s.borrowed_starts = count("borrowed_starts");
  return s;
}

Ensemble simulate_ensemble(const Workload& w, const ControllerConfig& config, double time_scale,
                           const LatencyModel& latency, std::size_t runs,
                           const std::vector<bool>& include) {
  Ensemble e;
  e.runs = runs;
  auto add = [&](Range& r, double v, std::size_t k) {
    r.min = k == 0 ? v : std::min(r.min, v);
    r.max = k == 0 ? v : std::max(r.max, v);
    r.mean += v / static_cast<double>(runs);
  };
  const Workload seen = with_overhang(w, time_scale, latency.overhang_wall_s);
  const LatencyModel start{latency.mean_wall_s, latency.jitter_wall_s};
  for (std::size_t k = 0; k < runs; ++k) {
    const RunRecord r = simulate_excerpt(seen, config, time_scale, start, k + 1);
    const ExcerptStats s = excerpt_stats(w, r, include);
    add(e.avg_jct_s, s.avg_jct_s, k);
    add(e.avg_queue_s, s.avg_queue_s, k);
    add(e.preemptions, static_cast<double>(s.preemptions), k);
    add(e.qos_compliance, s.qos_compliance, k);
  }
  return e;
}

}  // namespace ds::slurm
