#include "replay/fidelity.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/atomic_file.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/manifest.hpp"
#include "replay/excerpt.hpp"
#include "replay/excerpt_sim.hpp"
#include "replay/replay_folder.hpp"
#include "report/metrics.hpp"
#include "sim/simulator.hpp"

namespace ds::slurm {

namespace {

// Half the width of the uniform jitter that matches the replay's measured spread of
// decision -> RUNNING: p90 - p50 of `actuate` (0 for replays that did not measure it).
double measured_jitter_wall_s(const ReplayRecord& r) {
  return r.has_latency ? std::max(0.0, r.actuate.p90 - r.actuate.p50) : 0.0;
}

// (real - sim) / sim (0 without a simulated value).
double relative(double real, double sim) {
  return sim > 0 ? (real - sim) / sim : 0.0;
}

// The replay's engine as the tables name it: replay.json's "engine" and "scheduler" (written
// by `deepshare k8s replay`); Slurm replays predate the field.
std::string engine_name(const ReplayRecord& rec) {
  if (rec.engine != "kubernetes") return "Slurm";
  return "Kubernetes, scheduler " + (rec.scheduler.empty() ? std::string("?") : rec.scheduler);
}

// The ensemble's rows of fidelity.md, and a row for jobs the engine did not complete.
std::string ensemble_rows(const FidelityReport& rep) {
  const Ensemble& e = rep.ensemble;
  char buf[1024];
  std::string incomplete;
  if (rep.real_incomplete > 0) {
    std::snprintf(buf, sizeof buf,
                  "| jobs that did not complete on %s (left out; observed.csv) | | %zu | |\n",
                  rep.engine.c_str(), rep.real_incomplete);
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
double measured_overhang_wall_s(const ReplayRecord& r) {
  if (!r.has_latency || r.overhang.n == 0) return kDefaultOverhangWallS;
  return std::max(0.0, r.overhang.mean);
}

struct ReplayInput {
  ReplayFolder folder;
  ControllerConfig config;
  ExcerptSpec spec;
  Workload w;
};

// Step 1: the replay folder, verified (replay_folder.hpp), and the excerpt its trace and
// config give now, which must be the one it replayed (else the comparison would be of two
// different workloads).
ReplayInput load_replay(const std::string& replay_dir, const std::string& config) {
  ReplayInput in{read_replay_folder(replay_dir), {}, {}, {}};
  const ReplayRecord& r = in.folder.record;
  in.config = load_controller_config(config.empty() ? r.config : config);
  in.spec.trace = r.trace;
  in.spec.format = r.format;
  in.spec.time_scale = r.time_scale;
  parse_excerpt(r.excerpt, in.spec);
  std::vector<NodeShape> nodes;
  for (const auto& [name, gpus] : r.nodes) nodes.push_back({name, gpus});
  in.w = make_excerpt(in.spec, in.config, nodes);
  if (in.w.jobs.size() != r.jobs || in.w.digest() != in.folder.excerpt_digest)
    throw InputError(SourceLocation{(std::filesystem::path(replay_dir) / "replay.json").string()},
                     "its trace " + quote_input(r.trace) + " and controller config " +
                         quote_input(config.empty() ? r.config : config) +
                         " now give another excerpt (" + std::to_string(in.w.jobs.size()) +
                         " jobs) than the replay ran (" + std::to_string(r.jobs) +
                         " jobs): one of them changed since the replay");
  // DeepShare on Kubernetes places whole GPUs (no MPS yet: its adapter tells the policy that
  // no pod can share), so its excerpt is simulated without sharing too; on Slurm jobs may
  // share. (Simulated with sharing, DeepShare's Kubernetes replays were predicted 24 shared
  // starts and about a quarter less JCT than a cluster without MPS can give: results.md.)
  // And its jobs' user is their namespace (k8s/adapter.cpp: pods name no user), which the
  // policies' run-time predictors key their user level by: one user per tenant.
  if (r.engine == "kubernetes")
    for (JobSpec& j : in.w.jobs) {
      j.colocatable = false;
      j.user = in.w.intern_user(in.w.tenants[j.tenant.index()].name);
    }
  return in;
}

// The last step: fidelity_jobs.csv, fidelity.json, fidelity.md and manifest.json in one
// checked set (the simulation's outputs are in sim/, written before).
void write_fidelity(const std::string& out_dir, const std::string& replay_dir,
                    const std::string& jobs_csv, const nlohmann::json& fj,
                    const FidelityReport& rep) {
  namespace fs = std::filesystem;
  const fs::path out(out_dir);
  AtomicFileSet files;
  files.add((out / "fidelity_jobs.csv").string()).write(jobs_csv);
  files.add((out / "fidelity.json").string()).write(fj.dump(2) + "\n");
  files.add((out / "fidelity.md").string()).write(rep.markdown);
  Manifest m;
  m.kind = "fidelity";
  m.command = "fidelity";
  m.version = DEEPSHARE_VERSION;
  m.identity = {{"replay", fs::absolute(replay_dir).lexically_normal().string()},
                {"replay_manifest", file_digest(fs::path(replay_dir) / kManifestName)},
                {"jobs_compared", rep.jobs}};
  m.folders = {"sim"};
  for (const AtomicFile& f : files.finish_all()) m.add(f);
  files.add((out / kManifestName).string()).write(m.json());
  files.commit();
}

// Job by job: the replay's observed rows against the two simulations (fidelity_jobs.csv's
// rows, the jobs compared, their sums); the counts go into `rep`.
struct Comparison {
  std::string jobs_csv;
  std::vector<bool> compared;
  std::vector<double> abs_jct;
  double real_queue_sum = 0, real_jct_sum = 0;
};

Comparison compare_jobs(const ReplayInput& in, const std::string& replay_dir, const RunRecord& sim,
                        const RunRecord& sim0, FidelityReport& rep) {
  namespace fs = std::filesystem;
  const Workload& w = in.w;
  std::map<std::string, std::size_t> by_name;
  for (const auto& j : w.jobs) by_name[j.name] = j.id.index();
  Comparison c;
  c.compared.assign(w.jobs.size(), false);
  std::string& jobs_csv = c.jobs_csv;
  jobs_csv =
      "job,tenant,gpus,sim_queue_s,real_queue_s,sim_jct_s,real_jct_s,sim_preemptions,"
      "real_preemptions\n";
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  for (const ObservedRow& row : in.folder.observed) {
    auto it = by_name.find(row.job);
    if (it == by_name.end())
      throw InputError(SourceLocation{(fs::path(replay_dir) / "observed.csv").string()},
                       "job " + quote_input(row.job) + " is not in the replay's excerpt");
    const std::size_t i = it->second;
    rep.real_preemptions += row.preemptions;
    rep.real_shared_runs += row.shared_runs;
    rep.real_borrowed_runs += row.borrowed_runs;
    const JobOutcome& o = sim.jobs[i];
    const JobOutcome& o0 = sim0.jobs[i];
    if (!row.completed) ++rep.real_incomplete;
    if (!row.completed || o.end == kNever || o0.end == kNever || row.first_start_ms < 0 ||
        row.end_ms < 0)
      continue;
    const double s_q = to_seconds(o.queue), r_q = static_cast<double>(row.queue_ms) / 1000.0;
    const double s_j = to_seconds(o.end - w.jobs[i].submit),
                 r_j = static_cast<double>(row.end_ms - row.submit_ms) / 1000.0;
    ++rep.jobs;
    c.compared[i] = true;
    c.real_queue_sum += r_q, c.real_jct_sum += r_j;
    rep.mean_abs_queue_diff_s += std::abs(r_q - s_q);
    c.abs_jct.push_back(std::abs(r_j - s_j));
    append_csv_row(jobs_csv,
                   {w.jobs[i].name, w.tenants[w.jobs[i].tenant.index()].name,
                    std::to_string(w.jobs[i].gpus), num(s_q), num(r_q), num(s_j), num(r_j),
                    std::to_string(o.preemptions), std::to_string(row.preemptions)});
  }
  return c;
}

// The comparison's sums into means and relative differences.
void summarize(FidelityReport& rep, const ReplayInput& in, const RunRecord& sim,
               const RunRecord& sim0, Comparison& c) {
  const Workload& w = in.w;
  const std::vector<bool>& compared = c.compared;
  const double rq = c.real_queue_sum, rj_sum = c.real_jct_sum;
  std::vector<double>& abs_jct = c.abs_jct;
  const double n = static_cast<double>(rep.jobs);
  rep.real_avg_queue_s = rq / n, rep.real_avg_jct_s = rj_sum / n;
  const ExcerptStats s1 = excerpt_stats(w, sim, compared), s0 = excerpt_stats(w, sim0, compared);
  rep.sim_avg_queue_s = s1.avg_queue_s, rep.sim_avg_jct_s = s1.avg_jct_s;
  rep.sim_qos = s1.qos_compliance;
  rep.real_qos = in.folder.real_qos;
  rep.sim0_avg_queue_s = s0.avg_queue_s, rep.sim0_avg_jct_s = s0.avg_jct_s;
  rep.jct_rel = relative(rep.real_avg_jct_s, rep.sim_avg_jct_s);
  rep.queue_rel = relative(rep.real_avg_queue_s, rep.sim_avg_queue_s);
  rep.jct_rel0 = relative(rep.real_avg_jct_s, rep.sim0_avg_jct_s);
  rep.queue_rel0 = relative(rep.real_avg_queue_s, rep.sim0_avg_queue_s);
  rep.mean_abs_queue_diff_s /= n;
  for (double d : abs_jct) rep.mean_abs_jct_diff_s += d / n;
  rep.p90_abs_jct_diff_s = quantile(abs_jct, 0.9);
}

std::string markdown_of(const FidelityReport& rep) {
  char buf[4096];
  std::snprintf(buf, sizeof buf,
                "| metric (trace seconds; time scale %g; simulated start latency %.3f wall s, "
                "overhang %.3f wall s) | simulator | real %s | difference |\n"
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
                rep.time_scale, rep.start_latency_wall_s, rep.overhang_wall_s, rep.engine.c_str(),
                rep.sim_avg_jct_s, rep.real_avg_jct_s, 100 * rep.jct_rel, rep.sim_avg_queue_s,
                rep.real_avg_queue_s, 100 * rep.queue_rel, rep.sim0_avg_jct_s, 100 * rep.jct_rel0,
                rep.sim0_avg_queue_s, 100 * rep.queue_rel0, rep.mean_abs_jct_diff_s,
                rep.p90_abs_jct_diff_s, rep.mean_abs_queue_diff_s, rep.sim_preemptions,
                rep.real_preemptions, rep.sim_qos, rep.real_qos, ensemble_rows(rep).c_str(),
                rep.jobs, rep.replay_wall_s, rep.real_shared_runs, rep.real_borrowed_runs);
  return buf;
}

nlohmann::json json_of(const FidelityReport& rep) {
  nlohmann::json fj = {{"engine", rep.engine},
                       {"jobs_compared", rep.jobs},
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
                       {"sim_peak_shared_gpus", rep.sim_peak_shared_gpus},
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
  return fj;
}

}  // namespace

Workload fidelity_workload(const std::string& replay_dir, const std::string& config) {
  return load_replay(replay_dir, config).w;
}

// The steps: read and verify the replay folder, simulate its excerpt (with and without start
// latency), compare job by job, summarize, simulate the jittered ensemble, write the report.
FidelityReport run_fidelity(const std::string& replay_dir, const std::string& out_dir,
                            FidelityOptions opt) {
  namespace fs = std::filesystem;
  const ReplayInput in = load_replay(replay_dir, opt.config);
  const ReplayRecord& rec = in.folder.record;
  const ControllerConfig& config = in.config;
  const ExcerptSpec& spec = in.spec;
  const Workload& w = in.w;

  if (opt.start_latency_wall_s < 0) opt.start_latency_wall_s = rec.start_latency_wall_s;
  if (opt.jitter_wall_s < 0) opt.jitter_wall_s = measured_jitter_wall_s(rec);
  if (opt.overhang_wall_s < 0) opt.overhang_wall_s = measured_overhang_wall_s(rec);
  const LatencyModel model{opt.start_latency_wall_s, opt.jitter_wall_s, opt.overhang_wall_s};
  const RunRecord sim =
      simulate_excerpt(w, config, spec.time_scale, {model.mean_wall_s, 0, model.overhang_wall_s});
  const RunRecord sim0 = simulate_excerpt(w, config, spec.time_scale, LatencyModel{});
  write_excerpt_outputs((fs::path(out_dir) / "sim").string(), w, config, spec.load, sim,
                        "fidelity-sim");

  FidelityReport rep;
  rep.start_latency_wall_s = opt.start_latency_wall_s;
  rep.jitter_wall_s = opt.jitter_wall_s;
  rep.overhang_wall_s = opt.overhang_wall_s;
  rep.engine = engine_name(rec);
  rep.time_scale = spec.time_scale;
  rep.replay_wall_s = rec.wall_seconds;
  for (const auto& o : sim.jobs) rep.sim_preemptions += o.preemptions;
  for (const StepPoint& p : sim.steps)
    rep.sim_peak_shared_gpus = std::max(rep.sim_peak_shared_gpus, p.allocated_gpus - p.busy_gpus);
  Comparison c = compare_jobs(in, replay_dir, sim, sim0, rep);
  if (rep.jobs == 0)
    throw InputError(replay_dir + ": no job completed in both the replay and the simulation");
  summarize(rep, in, sim, sim0, c);
  if (opt.ensemble > 0) {
    rep.ensemble = simulate_ensemble(w, config, spec.time_scale, model, opt.ensemble, c.compared);
    rep.jct_rel_ensemble = relative(rep.real_avg_jct_s, rep.ensemble.avg_jct_s.mean);
    rep.queue_rel_ensemble = relative(rep.real_avg_queue_s, rep.ensemble.avg_queue_s.mean);
  }

  rep.markdown = markdown_of(rep);
  write_fidelity(out_dir, replay_dir, c.jobs_csv, json_of(rep), rep);
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
