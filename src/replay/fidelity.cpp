#include "replay/fidelity.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "replay/excerpt.hpp"
#include "replay/excerpt_sim.hpp"
#include "report/metrics.hpp"
#include "sim/simulator.hpp"

namespace ds::slurm {

namespace {

// Half the width of the uniform jitter that matches the replay's measured spread of
// decision -> RUNNING: p90 - p50 of `actuate` (0 for replays that did not measure it).
double measured_jitter_wall_s(const nlohmann::json& rj) {
  if (!rj.contains("latency_wall_s") || !rj["latency_wall_s"].contains("actuate")) return 0;
  const auto& a = rj["latency_wall_s"]["actuate"];
  return std::max(0.0, a.value("p90", 0.0) - a.value("p50", 0.0));
}

// The ensemble's rows of fidelity.md, and a row for jobs Slurm did not complete.
std::string ensemble_rows(const FidelityReport& rep) {
  const Ensemble& e = rep.ensemble;
  char buf[1024];
  std::string incomplete;
  if (rep.real_incomplete > 0) {
    std::snprintf(buf, sizeof buf,
                  "| jobs that did not complete on Slurm (left out; observed.csv) | | %zu | |\n",
                  rep.real_incomplete);
    incomplete = buf;
  }
  if (e.runs == 0) return incomplete;
  std::snprintf(buf, sizeof buf,
                "| mean JCT, %zu simulations with start latency %.3f +- %.3f wall s: "
                "min-max (mean) | %.1f-%.1f (%.1f) | %.1f | %+.2f%% vs. mean |\n"
                "| mean queueing delay, same simulations | %.1f-%.1f (%.1f) | %.1f | %+.2f%% vs. "
                "mean |\n"
                "| preemptions, same simulations | %.0f-%.0f | | |\n"
                "| QoS compliance of entitled jobs, same simulations | %.3f-%.3f (%.3f) | %.3f | "
                "|\n",
                e.runs, rep.start_latency_wall_s, rep.jitter_wall_s, e.avg_jct_s.min,
                e.avg_jct_s.max, e.avg_jct_s.mean, rep.real_avg_jct_s, 100 * rep.jct_rel_ensemble,
                e.avg_queue_s.min, e.avg_queue_s.max, e.avg_queue_s.mean, rep.real_avg_queue_s,
                100 * rep.queue_rel_ensemble, e.preemptions.min, e.preemptions.max,
                e.qos_compliance.min, e.qos_compliance.max, e.qos_compliance.mean, rep.real_qos);
  return buf + incomplete;
}

// The replay's mean overhang (observed run - work), or the default for replays without it.
double measured_overhang_wall_s(const nlohmann::json& rj) {
  if (!rj.contains("latency_wall_s") || !rj["latency_wall_s"].contains("overhang"))
    return kDefaultOverhangWallS;
  const auto& o = rj["latency_wall_s"]["overhang"];
  if (o.value("n", 0) == 0) return kDefaultOverhangWallS;
  return std::max(0.0, o.value("mean", 0.0));
}

}  // namespace

FidelityReport run_fidelity(const std::string& replay_dir, const std::string& out_dir,
                            FidelityOptions opt) {
  namespace fs = std::filesystem;
  const fs::path dir(replay_dir);
  std::ifstream in(dir / "replay.json");
  if (!in)
    throw InputError((dir / "replay.json").string() +
                     ": cannot read (run `deepshare slurm replay` first)");
  nlohmann::json rj;
  try {
    in >> rj;
  } catch (const std::exception& e) {
    throw InputError((dir / "replay.json").string() + ": " + e.what());
  }
  const ControllerConfig config = load_controller_config(rj.at("config").get<std::string>());
  ExcerptSpec spec;
  spec.trace = rj.at("trace").get<std::string>();
  spec.format = rj.at("format").get<std::string>();
  spec.time_scale = rj.at("time_scale").get<double>();
  parse_excerpt(rj.at("excerpt").get<std::string>(), spec);
  std::vector<NodeShape> nodes;
  for (const auto& n : rj.at("nodes"))
    nodes.push_back({n.at("name").get<std::string>(), n.at("gpus").get<int>()});
  const Workload w = make_excerpt(spec, config, nodes);

  if (opt.start_latency_wall_s < 0)
    opt.start_latency_wall_s = rj.value("start_latency_wall_s", 0.0);
  if (opt.jitter_wall_s < 0) opt.jitter_wall_s = measured_jitter_wall_s(rj);
  if (opt.overhang_wall_s < 0) opt.overhang_wall_s = measured_overhang_wall_s(rj);
  const LatencyModel model{opt.start_latency_wall_s, opt.jitter_wall_s, opt.overhang_wall_s};
  const RunRecord sim =
      simulate_excerpt(w, config, spec.time_scale, {model.mean_wall_s, 0, model.overhang_wall_s});
  const RunRecord sim0 = simulate_excerpt(w, config, spec.time_scale, LatencyModel{});
  write_excerpt_outputs((fs::path(out_dir) / "sim").string(), w, config, spec.load, sim,
                        "fidelity-sim");

  std::map<std::string, std::size_t> by_name;
  for (const auto& j : w.jobs) by_name[j.name] = j.id.index();
  CsvReader csv = CsvReader::open((dir / "observed.csv").string());
  csv.read_header();
  const auto c_job = csv.require_column("job"), c_sub = csv.require_column("submit_ms"),
             c_first = csv.require_column("first_start_ms"), c_end = csv.require_column("end_ms"),
             c_queue = csv.require_column("queue_ms"), c_pre = csv.require_column("preemptions"),
             c_done = csv.require_column("completed"), c_sh = csv.require_column("shared_runs"),
             c_bo = csv.require_column("borrowed_runs");
  FidelityReport rep;
  rep.start_latency_wall_s = opt.start_latency_wall_s;
  rep.jitter_wall_s = opt.jitter_wall_s;
  rep.overhang_wall_s = opt.overhang_wall_s;
  rep.time_scale = spec.time_scale;
  rep.replay_wall_s = rj.value("wall_seconds", 0.0);
  for (const auto& o : sim.jobs) rep.sim_preemptions += o.preemptions;
  std::ofstream jobs_csv(fs::path(out_dir) / "fidelity_jobs.csv", std::ios::binary);
  jobs_csv << "job,tenant,gpus,sim_queue_s,real_queue_s,sim_jct_s,real_jct_s,sim_preemptions,real_"
              "preemptions\n";
  std::vector<double> abs_jct;
  std::vector<bool> compared(w.jobs.size(), false);
  double rq = 0, rj_sum = 0;
  auto num = [&](std::size_t c) { return std::atof(std::string(csv.field(c)).c_str()); };
  while (csv.next()) {
    auto it = by_name.find(std::string(csv.field(c_job)));
    if (it == by_name.end()) continue;
    const std::size_t i = it->second;
    rep.real_preemptions += static_cast<std::size_t>(num(c_pre));
    rep.real_shared_runs += static_cast<std::size_t>(num(c_sh));
    rep.real_borrowed_runs += static_cast<std::size_t>(num(c_bo));
    const JobOutcome& o = sim.jobs[i];
    const JobOutcome& o0 = sim0.jobs[i];
    if (num(c_done) != 1) ++rep.real_incomplete;
    if (num(c_done) != 1 || o.end == kNever || o0.end == kNever || num(c_first) < 0) continue;
    const double s_q = to_seconds(o.queue), r_q = num(c_queue) / 1000.0;
    const double s_j = to_seconds(o.end - w.jobs[i].submit),
                 r_j = (num(c_end) - num(c_sub)) / 1000.0;
    ++rep.jobs;
    compared[i] = true;
    rq += r_q, rj_sum += r_j;
    rep.mean_abs_queue_diff_s += std::abs(r_q - s_q);
    abs_jct.push_back(std::abs(r_j - s_j));
    jobs_csv << w.jobs[i].name << ',' << w.tenants[w.jobs[i].tenant.index()].name << ','
             << w.jobs[i].gpus << ',' << s_q << ',' << r_q << ',' << s_j << ',' << r_j << ','
             << o.preemptions << ',' << num(c_pre) << '\n';
  }
  if (rep.jobs == 0)
    throw InputError(replay_dir + ": no job completed in both the replay and the simulation");
  const double n = static_cast<double>(rep.jobs);
  rep.real_avg_queue_s = rq / n, rep.real_avg_jct_s = rj_sum / n;
  const ExcerptStats s1 = excerpt_stats(w, sim, compared), s0 = excerpt_stats(w, sim0, compared);
  rep.sim_avg_queue_s = s1.avg_queue_s, rep.sim_avg_jct_s = s1.avg_jct_s;
  rep.sim_qos = s1.qos_compliance;
  if (std::ifstream summary(dir / "summary.json"); summary) {
    const nlohmann::json sj = nlohmann::json::parse(summary, nullptr, false);
    if (sj.is_object()) rep.real_qos = sj.value("qos_compliance", 1.0);
  }
  rep.sim0_avg_queue_s = s0.avg_queue_s, rep.sim0_avg_jct_s = s0.avg_jct_s;
  auto rel = [](double real, double sim) { return sim > 0 ? (real - sim) / sim : 0.0; };
  rep.jct_rel = rel(rep.real_avg_jct_s, rep.sim_avg_jct_s);
  rep.queue_rel = rel(rep.real_avg_queue_s, rep.sim_avg_queue_s);
  rep.jct_rel0 = rel(rep.real_avg_jct_s, rep.sim0_avg_jct_s);
  rep.queue_rel0 = rel(rep.real_avg_queue_s, rep.sim0_avg_queue_s);
  rep.mean_abs_queue_diff_s /= n;
  for (double d : abs_jct) rep.mean_abs_jct_diff_s += d / n;
  rep.p90_abs_jct_diff_s = quantile(abs_jct, 0.9);

  if (opt.ensemble > 0) {
    rep.ensemble = simulate_ensemble(w, config, spec.time_scale, model, opt.ensemble, compared);
    rep.jct_rel_ensemble = rel(rep.real_avg_jct_s, rep.ensemble.avg_jct_s.mean);
    rep.queue_rel_ensemble = rel(rep.real_avg_queue_s, rep.ensemble.avg_queue_s.mean);
  }

  char buf[4096];
  std::snprintf(buf, sizeof buf,
                "| metric (trace seconds; time scale %g; simulated start latency %.3f wall s, "
                "overhang %.3f wall s) | simulator | real Slurm | difference |\n"
                "|---|---|---|---|\n"
                "| mean JCT | %.1f | %.1f | %+.2f%% |\n"
                "| mean queueing delay | %.1f | %.1f | %+.2f%% |\n"
                "| mean JCT, simulated without start latency and overhang | %.1f | | %+.2f%% |\n"
                "| mean queueing delay, simulated without start latency and overhang | %.1f | | "
                "%+.2f%% |\n"
                "| per-job mean abs. JCT difference | | | %.1f s (p90 %.1f s) |\n"
                "| per-job mean abs. queueing difference | | | %.1f s |\n"
                "| preemptions | %zu | %zu | |\n"
                "| QoS compliance of entitled jobs | %.3f | %.3f | |\n"
                "%s"
                "| jobs compared / replay wall time | %zu | %.0f s | |\n"
                "| real runs shared (MPS) / borrowed | | %zu / %zu | |\n",
                rep.time_scale, rep.start_latency_wall_s, rep.overhang_wall_s, rep.sim_avg_jct_s,
                rep.real_avg_jct_s, 100 * rep.jct_rel, rep.sim_avg_queue_s, rep.real_avg_queue_s,
                100 * rep.queue_rel, rep.sim0_avg_jct_s, 100 * rep.jct_rel0, rep.sim0_avg_queue_s,
                100 * rep.queue_rel0, rep.mean_abs_jct_diff_s, rep.p90_abs_jct_diff_s,
                rep.mean_abs_queue_diff_s, rep.sim_preemptions, rep.real_preemptions, rep.sim_qos,
                rep.real_qos, ensemble_rows(rep).c_str(), rep.jobs, rep.replay_wall_s,
                rep.real_shared_runs, rep.real_borrowed_runs);
  rep.markdown = buf;
  nlohmann::json fj = {{"jobs_compared", rep.jobs},
                       {"time_scale", rep.time_scale},
                       {"start_latency_wall_s", rep.start_latency_wall_s},
                       {"sim_no_latency_avg_jct_s", rep.sim0_avg_jct_s},
                       {"sim_no_latency_avg_queue_s", rep.sim0_avg_queue_s},
                       {"jct_rel_diff_no_latency", rep.jct_rel0},
                       {"queue_rel_diff_no_latency", rep.queue_rel0},
                       {"sim_avg_jct_s", rep.sim_avg_jct_s},
                       {"real_avg_jct_s", rep.real_avg_jct_s},
                       {"jct_rel_diff", rep.jct_rel},
                       {"sim_avg_queue_s", rep.sim_avg_queue_s},
                       {"real_avg_queue_s", rep.real_avg_queue_s},
                       {"queue_rel_diff", rep.queue_rel},
                       {"mean_abs_jct_diff_s", rep.mean_abs_jct_diff_s},
                       {"p90_abs_jct_diff_s", rep.p90_abs_jct_diff_s},
                       {"mean_abs_queue_diff_s", rep.mean_abs_queue_diff_s},
                       {"sim_preemptions", rep.sim_preemptions},
                       {"real_preemptions", rep.real_preemptions},
                       {"sim_qos_compliance", rep.sim_qos},
                       {"real_qos_compliance", rep.real_qos},
                       {"real_shared_runs", rep.real_shared_runs},
                       {"real_borrowed_runs", rep.real_borrowed_runs},
                       {"replay_wall_s", rep.replay_wall_s},
                       {"jitter_wall_s", rep.jitter_wall_s},
                       {"overhang_wall_s", rep.overhang_wall_s},
                       {"real_incomplete", rep.real_incomplete}};
  if (rep.ensemble.runs > 0) {
    auto range = [](const Range& r) {
      return nlohmann::json{{"min", r.min}, {"max", r.max}, {"mean", r.mean}};
    };
    fj["ensemble"] = {{"runs", rep.ensemble.runs},
                      {"avg_jct_s", range(rep.ensemble.avg_jct_s)},
                      {"avg_queue_s", range(rep.ensemble.avg_queue_s)},
                      {"preemptions", range(rep.ensemble.preemptions)},
                      {"qos_compliance", range(rep.ensemble.qos_compliance)},
                      {"jct_rel_diff", rep.jct_rel_ensemble},
                      {"queue_rel_diff", rep.queue_rel_ensemble}};
  }
  std::ofstream(fs::path(out_dir) / "fidelity.json", std::ios::binary) << fj.dump(2) << '\n';
  std::ofstream(fs::path(out_dir) / "fidelity.md", std::ios::binary) << rep.markdown;
  return rep;
}

std::string fidelity_disagreement(const FidelityReport& rep, double tolerance) {
  std::string out;
  const auto check = [&](const char* what, double real, double sim, const Range* spread) {
    double lo = sim * (1 - tolerance), hi = sim * (1 + tolerance);
    if (spread) {
      lo = spread->min - tolerance * spread->mean;
      hi = spread->max + tolerance * spread->mean;
    }
    if (real >= lo && real <= hi) return;
    char line[200];
    std::snprintf(line, sizeof line, "%smean %s %.1f s outside [%.1f, %.1f] s",
                  out.empty() ? "" : "; ", what, real, lo, hi);
    out += line;
  };
  const bool ens = rep.ensemble.runs > 0;
  check("JCT", rep.real_avg_jct_s, rep.sim_avg_jct_s, ens ? &rep.ensemble.avg_jct_s : nullptr);
  check("queueing delay", rep.real_avg_queue_s, rep.sim_avg_queue_s,
        ens ? &rep.ensemble.avg_queue_s : nullptr);
  return out;
}

}  // namespace ds::slurm
