// `deepshare slurm run` (the controller daemon), `deepshare slurm replay` (time-scaled
// trace replay on a real cluster) and `deepshare fidelity` (simulator vs. replay).
// `slurm run|replay` exist only in builds with libslurm (DEEPSHARE_HAVE_SLURM); `fidelity`
// needs no Slurm at all.
#include "cli/slurm_commands.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "cli/output_rules.hpp"
#include "cli/validators.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/output_folder.hpp"
#include "core/spec.hpp"
#include "driver/log.hpp"
#include "replay/excerpt.hpp"
#include "replay/excerpt_sim.hpp"
#include "replay/fidelity.hpp"
#include "replay/replay_folder.hpp"
#include "slurm/config.hpp"
#ifdef DEEPSHARE_HAVE_SLURM
#include "driver/metrics_server.hpp"
#include "model/tenant_tree.hpp"
#include "replay/replay.hpp"
#include "slurm/accounts.hpp"
#include "slurm/api.hpp"
#include "slurm/controller.hpp"
#include "slurm/models.hpp"
#endif

namespace ds {
namespace {

struct SlurmArgs {
  std::string config;
  std::string trace;
  std::string format = "venus";
  std::string excerpt = "jobs=200";
  double time_scale = 60;
  std::string out;
  std::string work_dir;
  std::string metrics;
  double timeout_s = 1800;
  bool quiet = false;
  bool native = false;
  int cpus_per_gpu = 0;
  std::string replay_dir;
  double tolerance = 0;
  double start_latency = -1;
  double jitter = -1;
  double overhang = -1;
  std::size_t ensemble = 32;
  std::string nodes = "4x4";
  std::uint64_t seed = 0;
  bool json = false;
};
SlurmArgs g_args;

// Wall-second options (start latency, jitter, overhang) and ensembles: ranges far beyond any
// real replay, small enough that the simulated times they make cannot overflow.
constexpr double kMaxLatencyS = 3600;
constexpr std::uint64_t kMaxEnsemble = 10'000;

// The options that name a replay excerpt (`slurm replay`, `excerpt`) and what they build.
void add_excerpt_options(CLI::App* cmd) {
  cmd->add_option("--config", g_args.config, "Controller YAML; tenants name their trace tenant")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--trace", g_args.trace, "Trace file")->required()->check(non_empty_path());
  cmd->add_option("--format", g_args.format, "Trace format")->capture_default_str();
  cmd->add_option("--excerpt", g_args.excerpt,
                  "from=N,jobs=N,load=F,min=WALL_S,max=WALL_S (each key once: from 0..1e7, jobs "
                  "1..1e7, load 0.001..1000, min and max 0..1e6 wall seconds, max 0: no cap)")
      ->capture_default_str();
  cmd->add_option("--time-scale", g_args.time_scale, "Trace seconds per wall second")
      ->capture_default_str()
      ->check(number_in(slurm::kMinTimeScale, slurm::kMaxTimeScale));
}

slurm::ExcerptSpec excerpt_spec() {
  slurm::ExcerptSpec spec;
  spec.trace = g_args.trace;
  spec.format = g_args.format;
  spec.time_scale = g_args.time_scale;
  slurm::parse_excerpt(g_args.excerpt, spec);
  return spec;
}

#ifdef DEEPSHARE_HAVE_SLURM
std::atomic<bool> g_stop{false};
slurm::Controller* g_controller = nullptr;
extern "C" void on_signal(int) {
  g_stop = true;
}
// SIGHUP: re-read the configuration (the controller's loop applies it; only a flag here).
extern "C" void on_hangup(int) {
  if (g_controller) g_controller->request_reload();
}

int cmd_slurm_run() {
  std::signal(SIGHUP, SIG_IGN);  // until the controller can reload (below)
  slurm::ControllerConfig cfg = slurm::load_controller_config(g_args.config);
  if (!g_args.metrics.empty()) cfg.metrics = g_args.metrics;
  // Before the lease and libslurm: an oracle is refused even where no Slurm is reachable.
  slurm::Controller::check_policy(cfg.policy);
  driver::Log log(stderr, g_args.quiet);
  driver::DriverClock clock;  // scale 1: controller time = Unix ms; a journal overrides it
  clock.scale = cfg.time_scale;
  clock.wall0_ms = driver::wall_now_ms();
  clock.origin = cfg.time_scale == 1.0 ? clock.wall0_ms : 0;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // Leadership: wait as a hot standby until the lease is ours (the leader's exit or death
  // releases it), then take over (docs/slurm.md, High availability).
  std::unique_ptr<driver::Lease> lease;
  if (!cfg.state_dir.empty()) {
    lease = std::make_unique<driver::Lease>(cfg.state_dir);
    bool said = false;
    while (!g_stop && !lease->try_acquire()) {
      if (!said)
        log.info("standby", {{"state_dir", cfg.state_dir},
                             {"detail", "another controller holds the lease: waiting"}});
      said = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (g_stop) return 0;
    log.info("leader", {{"state_dir", cfg.state_dir}, {"epoch", lease->epoch()}});
    clock.wall0_ms = driver::wall_now_ms();
    clock.origin = cfg.time_scale == 1.0 ? clock.wall0_ms : 0;
  } else {
    log.warn("no_lease", {{"detail",
                           "no state_dir: nothing keeps a second controller from acting on this "
                           "cluster (set state_dir for one leader and hot standbys)"}});
  }
  slurm::SlurmApi api;
  driver::SystemClock wall;
  slurm::Controller ctl(cfg, log, clock, slurm::Ports{&api, &api, &wall});
  api.set_stats(&ctl.rpc_stats());
  ctl.set_lease(lease.get());
  ctl.reload_source = [] {
    slurm::ControllerConfig c = slurm::load_controller_config(g_args.config);
    if (!g_args.metrics.empty()) c.metrics = g_args.metrics;
    return c;
  };
  ctl.init();
  std::unique_ptr<driver::MetricsServer> server;
  if (!cfg.metrics.empty()) {
    server =
        std::make_unique<driver::MetricsServer>(cfg.metrics, [&] { return ctl.metrics_text(); });
    log.info("metrics_listening", {{"address", server->host()}, {"port", server->port()}});
  }
  g_controller = &ctl;
  std::signal(SIGHUP, on_hangup);
  ctl.run(g_stop);
  std::signal(SIGHUP, SIG_IGN);
  g_controller = nullptr;
  // Deposed: another controller leads; exit 3 (systemd: RestartPreventExitStatus=3).
  return ctl.deposed() ? 3 : 0;
}

// `slurm check`: Slurm's account tree as DeepShare reads it, and what does not fit
// (sub-accounts whose GrpTRES exceed their parent's, guarantees beyond the partition).
void print_account(const std::vector<Tenant>& ts, const TenantTree& tree,
                   const slurm::Accounts& accounts, std::size_t t, int depth) {
  const slurm::Account& a = accounts.at(ts[t].name);
  std::printf("%*s%-*s %9s %10d %8d\n", 2 * depth, "", 24 - 2 * depth, ts[t].name.c_str(),
              a.grp_quota < 0 ? "-" : std::to_string(a.grp_quota).c_str(), ts[t].quota_gpus,
              tree.guarantee(t));
  for (std::size_t k = 0; k < ts.size(); ++k)
    if (ts[k].parent.valid() && ts[k].parent.index() == t)
      print_account(ts, tree, accounts, k, depth + 1);
}

// GPUs per model on the partition's nodes (their Features that gpu_models lists), so that an
// operator sees the controller will find the models the gate accepts; problems appended.
void print_models(const slurm::ControllerConfig& cfg, const std::vector<slurm::NodeInfo>& nodes,
                  std::vector<std::string>& problems) {
  if (cfg.gpu_models.empty()) return;
  std::map<std::string, int> gpus;
  for (const auto& n : nodes) {
    if (std::find(n.partitions.begin(), n.partitions.end(), cfg.partition) == n.partitions.end())
      continue;
    try {
      gpus[slurm::node_model(n, cfg)] += n.gpus;
    } catch (const InputError& e) {
      problems.emplace_back(e.what());
    }
  }
  std::printf("GPU models (node Features in gpu_models):");
  for (const auto& [model, mib] : cfg.gpu_models) {
    std::printf(" %s %d GPUs", model.c_str(), gpus[model]);
    if (gpus[model] == 0)
      problems.push_back("no node of partition " + cfg.partition + " has Feature " + model +
                         " (gpu_models)");
  }
  std::printf(", untyped %d GPUs\n", gpus[""]);
}

int cmd_slurm_check() {
  slurm::ControllerConfig cfg;
  if (!g_args.config.empty()) cfg = slurm::load_controller_config(g_args.config);
  slurm::SlurmApi api;
  const auto assocs = api.associations(cfg.quota_tres);
  if (!assocs) throw InputError("cannot read Slurm's associations: " + api.last_error());
  int gpus = -1;
  const auto nodes = api.nodes();
  if (nodes) {
    gpus = 0;
    for (const auto& n : *nodes)
      if (std::find(n.partitions.begin(), n.partitions.end(), cfg.partition) != n.partitions.end())
        gpus += n.gpus;
  }
  const slurm::Accounts accounts = slurm::accounts_of(*assocs);
  std::vector<Tenant> tenants;
  for (const auto& [name, a] : accounts) {
    tenants.emplace_back();
    tenants.back().id = TenantId(static_cast<std::uint32_t>(tenants.size() - 1));
    tenants.back().name = name;
  }
  auto problems = slurm::apply_accounts(tenants, accounts, gpus);
  const TenantTree tree(tenants);
  std::printf("partition %s: %d GPUs; quotas from GrpTRES=%s=N\n", cfg.partition.c_str(), gpus,
              cfg.quota_tres.c_str());
  if (nodes) print_models(cfg, *nodes, problems);
  std::printf("%-24s %9s %10s %8s\n", "account", "GrpTRES", "guaranteed", "subtree");
  for (std::size_t t = 0; t < tenants.size(); ++t)
    if (!tenants[t].parent.valid()) print_account(tenants, tree, accounts, t, 0);
  for (const auto& p : problems) std::printf("problem: %s\n", p.c_str());
  if (problems.empty()) std::printf("the tenant tree fits\n");
  return problems.empty() ? 0 : 1;
}

int cmd_slurm_replay() {
  slurm::ReplayRequest req;
  req.config = slurm::load_controller_config(g_args.config);
  req.config_path = g_args.config;
  if (!g_args.metrics.empty()) req.config.metrics = g_args.metrics;
  req.excerpt = excerpt_spec();
  // Checked, locked and staged before the replay: complete or absent (output_folder.hpp).
  OutputFolder out(g_args.out, replay_rules({g_args.trace, g_args.config, g_args.work_dir}));
  req.out_dir = out.dir().string();
  req.work_dir = g_args.work_dir.empty() ? (std::filesystem::absolute(out.dir()) / "work").string()
                                         : g_args.work_dir;
  req.timeout_s = g_args.timeout_s;
  req.native = g_args.native;
  req.cpus_per_gpu = g_args.cpus_per_gpu;
  driver::Log log(stderr, g_args.quiet);
  const auto r = slurm::run_replay(req, log);
  out.commit();
  std::printf(
      "replayed %zu jobs (%zu completed) in %.0f s wall: avg queue %.0f s  avg JCT %.0f s  "
      "preemptions %zu  occupancy %.3f (trace seconds, time scale %g)\n"
      "measured start latency %.3f wall s (event -> decision -> RUNNING)\noutputs written to %s\n",
      r.submitted, r.completed, r.wall_seconds, r.metrics.avg_queue_s, r.metrics.avg_jct_s,
      r.metrics.preemptions, r.metrics.gpu_occupancy_full, g_args.time_scale,
      r.start_latency_wall_s, g_args.out.c_str());
  return r.completed == r.submitted ? 0 : 1;
}
#endif

int cmd_fidelity() {
  // A folder of its own (default REPLAY/fidelity), checked, locked and staged: complete or
  // absent (output_folder.hpp); the replay folder itself is read as a checked input.
  const std::string target = g_args.out.empty()
                                 ? (std::filesystem::path(g_args.replay_dir) / "fidelity").string()
                                 : g_args.out;
  OutputFolder folder(target, fidelity_rules({g_args.replay_dir, g_args.config}));
  const std::string out = folder.dir().string();
  slurm::FidelityOptions opt;
  opt.config = g_args.config;
  opt.start_latency_wall_s = g_args.start_latency;
  opt.jitter_wall_s = g_args.jitter;
  opt.overhang_wall_s = g_args.overhang;
  opt.ensemble = g_args.ensemble;
  const auto rep = slurm::run_fidelity(g_args.replay_dir, out, opt);
  folder.commit();
  std::printf("%s\nwritten to %s/fidelity.json, fidelity_jobs.csv, fidelity.md, sim/\n",
              rep.markdown.c_str(), target.c_str());
  if (g_args.tolerance > 0) {
    const std::string diff = slurm::fidelity_disagreement(rep, g_args.tolerance);
    if (!diff.empty()) {
      std::fprintf(stderr, "fidelity: beyond the tolerance of %.1f%%: %s\n", 100 * g_args.tolerance,
                   diff.c_str());
      return 1;
    }
  }
  return 0;
}

// "4x4": 4 nodes (node1..node4) of 4 GPUs, as scripts/slurm/start-cluster.sh makes them;
// 1..100,000 nodes of 1..64 GPUs, at most 100,000 GPUs in all (docs/formats.md, Ranges).
std::vector<slurm::NodeShape> parse_nodes(const std::string& text) {
  const auto x = text.find('x');
  std::uint64_t n = 0, g = 0;
  const bool ok = x != std::string::npos &&
                  parse_unsigned(text.substr(0, x), 1, limits::kMaxNodes, n) &&
                  parse_unsigned(text.substr(x + 1), 1, 64, g) && n * g <= limits::kMaxClusterGpus;
  if (!ok)
    throw InputError("--nodes " + quote_input(text) +
                     ": expected NODESxGPUS (e.g. 4x4): 1..100000 nodes of 1..64 GPUs, at most "
                     "100000 GPUs");
  std::vector<slurm::NodeShape> nodes;
  for (std::uint64_t i = 1; i <= n; ++i)
    nodes.push_back({"node" + std::to_string(i), static_cast<int>(g)});
  return nodes;
}

// Relative half-width of a range around its mean.
double spread(const slurm::Range& r) {
  return r.mean > 0 ? (r.max - r.min) / 2 / r.mean : 0;
}

int cmd_excerpt() {
  const slurm::ControllerConfig config = slurm::load_controller_config(g_args.config);
  const slurm::ExcerptSpec spec = excerpt_spec();
  const Workload w = slurm::make_excerpt(spec, config, parse_nodes(g_args.nodes));
  const double latency = g_args.start_latency < 0 ? 0.48 : g_args.start_latency;
  const double jitter = g_args.jitter < 0 ? 0.46 : g_args.jitter;
  const double overhang = g_args.overhang < 0 ? slurm::kDefaultOverhangWallS : g_args.overhang;
  const RunRecord sim = slurm::simulate_excerpt(
      w, config, spec.time_scale, {latency, g_args.seed > 0 ? jitter : 0, overhang}, g_args.seed);
  const auto one = slurm::excerpt_stats(w, sim);
  if (!g_args.out.empty()) {
    OutputFolder out(g_args.out, run_folder_rules({g_args.trace, g_args.config}));
    slurm::write_excerpt_outputs(out.dir().string(), w, config, spec.load, sim, "excerpt-sim");
    out.commit();
  }
  const auto e = slurm::simulate_ensemble(w, config, spec.time_scale, {latency, jitter, overhang},
                                          std::max<std::size_t>(1, g_args.ensemble));
  std::map<std::string, int> per_tenant;
  for (const auto& j : w.jobs) ++per_tenant[w.tenants[j.tenant.index()].name];
  const double span_s = to_seconds(w.jobs.back().submit - w.jobs.front().submit);
  if (g_args.json) {
    auto range = [](const slurm::Range& r) {
      return nlohmann::json{{"min", r.min}, {"max", r.max}, {"mean", r.mean}};
    };
    nlohmann::json j = {{"excerpt", slurm::format_excerpt(spec)},
                        {"jobs", w.jobs.size()},
                        {"tenants", per_tenant},
                        {"submit_span_s", span_s},
                        {"start_latency_wall_s", latency},
                        {"jitter_wall_s", jitter},
                        {"overhang_wall_s", overhang},
                        {"avg_jct_s", one.avg_jct_s},
                        {"avg_queue_s", one.avg_queue_s},
                        {"preemptions", one.preemptions},
                        {"qos_compliance", one.qos_compliance},
                        {"shared_starts", one.shared_starts},
                        {"borrowed_starts", one.borrowed_starts},
                        {"ensemble",
                         {{"runs", e.runs},
                          {"avg_jct_s", range(e.avg_jct_s)},
                          {"avg_queue_s", range(e.avg_queue_s)},
                          {"preemptions", range(e.preemptions)},
                          {"qos_compliance", range(e.qos_compliance)},
                          {"jct_spread", spread(e.avg_jct_s)},
                          {"queue_spread", spread(e.avg_queue_s)}}}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::string tenants;
  for (const auto& [name, n] : per_tenant)
    tenants += (tenants.empty() ? "" : ", ") + name + " " + std::to_string(n);
  std::printf(
      "excerpt %s: %zu jobs (%s), submitted over %.0f trace s = %.0f wall s at time scale %g\n"
      "simulated with start latency %.2f wall s%s, overhang %.2f wall s: avg JCT %.1f s, "
      "avg queue %.1f s, preemptions %zu, shared starts %zu, borrowed starts %zu\n"
      "%zu simulations with start latency %.2f +- %.2f wall s:\n"
      "  avg JCT   %.1f-%.1f s (mean %.1f, +-%.1f%%)\n"
      "  avg queue %.1f-%.1f s (mean %.1f, +-%.1f%%)\n"
      "  preemptions %.0f-%.0f\n",
      slurm::format_excerpt(spec).c_str(), w.jobs.size(), tenants.c_str(), span_s,
      span_s / spec.time_scale, spec.time_scale, latency,
      g_args.seed > 0 ? (" (jittered, seed " + std::to_string(g_args.seed) + ")").c_str() : "",
      overhang, one.avg_jct_s, one.avg_queue_s, one.preemptions, one.shared_starts,
      one.borrowed_starts, e.runs, latency, jitter, e.avg_jct_s.min, e.avg_jct_s.max,
      e.avg_jct_s.mean, 100 * spread(e.avg_jct_s), e.avg_queue_s.min, e.avg_queue_s.max,
      e.avg_queue_s.mean, 100 * spread(e.avg_queue_s), e.preemptions.min, e.preemptions.max);
  for (const auto& note : w.notes) std::printf("note: %s\n", note.c_str());
  return 0;
}

#ifdef DEEPSHARE_HAVE_SLURM
// `slurm run`, `slurm check`, `slurm replay`.
void register_slurm_group(CLI::App& app,
                          const std::function<void(CLI::App*, std::function<int()>)>& add_action) {
  auto* slurm =
      app.add_subcommand("slurm", "Run DeepShare on a real Slurm cluster (docs/slurm.md)");
  slurm->require_subcommand(1);
  auto* run = slurm->add_subcommand(
      "run", "The controller: schedules the configured partition's held jobs with the policy core");
  run->add_option("--config", g_args.config,
                  "Controller YAML (sample: deploy/deepshare-slurm.yaml)")
      ->required();
  run->add_option("--metrics", g_args.metrics,
                  "Prometheus endpoint HOST:PORT (overrides the config)");
  run->add_flag("--quiet", g_args.quiet, "Log warnings and errors only");
  add_action(run, cmd_slurm_run);

  auto* check = slurm->add_subcommand(
      "check",
      "Read Slurm's accounts as DeepShare's tenant tree: each account's GrpTRES, its guarantee, "
      "and the guarantees that do not fit their parent or the partition (exit 1 when any)");
  check->add_option("--config", g_args.config,
                    "Controller YAML (its partition and quota_tres; default batch, gres/gpu)");
  add_action(check, cmd_slurm_check);

  auto* replay = slurm->add_subcommand(
      "replay",
      "Submit a trace excerpt as real time-scaled jobs, schedule them, write the outputs");
  add_excerpt_options(replay);
  replay
      ->add_option("--out", g_args.out,
                   "Output folder (absent, empty, or an earlier replay's: replaced whole)")
      ->required()
      ->check(non_empty_path());
  replay->add_option("--work-dir", g_args.work_dir,
                     "Stand-in job output and checkpoints (default OUT/work)");
  replay->add_option("--metrics", g_args.metrics, "Prometheus endpoint HOST:PORT while replaying");
  replay->add_option("--timeout", g_args.timeout_s, "Give up after this many wall seconds")
      ->capture_default_str()
      ->check(number_in(1, 1e7));
  replay->add_flag("--quiet", g_args.quiet, "Log warnings and errors only");
  replay->add_flag("--native", g_args.native,
                   "No DeepShare: Slurm schedules the jobs by itself (cluster without the gate, "
                   "deploy/slurm/native/); each asks for its QOS and time limit as the config's "
                   "`slurm` policy options say (docs/slurm.md §14)");
  replay
      ->add_option("--cpus-per-gpu", g_args.cpus_per_gpu,
                   "With --native: CPUs each job asks per GPU (0: Slurm's default)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  add_action(replay, cmd_slurm_replay);
}
#endif

// `fidelity`: a replay against its simulation.
void register_fidelity(CLI::App& app,
                       const std::function<void(CLI::App*, std::function<int()>)>& add_action) {
  auto* fid = app.add_subcommand(
      "fidelity",
      "Simulate the excerpt a `slurm replay` or `k8s replay` ran (with the config's policy) and "
      "compare per job and on average");
  fid->add_option("--replay", g_args.replay_dir,
                  "Output folder of `deepshare slurm replay` or `deepshare k8s replay` (checked "
                  "against its manifest.json)")
      ->required()
      ->check(non_empty_path());
  fid->add_option("--out", g_args.out,
                  "Folder for fidelity.json, fidelity.md, fidelity_jobs.csv and sim/ (default: "
                  "REPLAY/fidelity; replaced whole)")
      ->check(non_empty_path());
  fid->add_option("--config", g_args.config,
                  "The controller config (default: the path replay.json records; a copy must "
                  "give the same excerpt)")
      ->check(non_empty_path());
  fid->add_option(
         "--tolerance", g_args.tolerance,
         "Fail (exit 1) when mean JCT or queueing delay lie outside the jittered ensemble's range "
         "widened by this fraction of its mean (without an ensemble: differ from the simulation "
         "by more than this fraction); 0..10, 0: no check")
      ->check(number_in(0, 10));
  fid->add_option("--start-latency", g_args.start_latency,
                  "Simulated decision -> running latency in wall seconds, 0..3600 (default: the "
                  "one the replay measured; 0: none)")
      ->check(number_in(0, kMaxLatencyS));
  fid->add_option("--jitter", g_args.jitter,
                  "Ensemble: each start's latency varies by +- this many wall seconds, 0..3600 "
                  "(default: p90 - p50 of the replay's measured decision -> RUNNING)")
      ->check(number_in(0, kMaxLatencyS));
  fid->add_option("--overhang", g_args.overhang,
                  "Wall seconds added to each job's run time in the simulations: a stand-in is "
                  "seen running that much longer than its work, 0..3600 (default: the replay's "
                  "measured mean, else 0.07)")
      ->check(number_in(0, kMaxLatencyS));
  fid->add_option("--ensemble", g_args.ensemble,
                  "How many jittered simulations show the spread timing noise alone causes "
                  "(0: none; at most 10000)")
      ->capture_default_str()
      ->check(whole_in(0, kMaxEnsemble));
  add_action(fid, cmd_fidelity);
}

// `excerpt`: a replay excerpt simulated before it is replayed.
void register_excerpt(CLI::App& app,
                      const std::function<void(CLI::App*, std::function<int()>)>& add_action) {
  auto* ex = app.add_subcommand(
      "excerpt",
      "Simulate a replay excerpt before replaying it: its jobs, preemptions, sharing, and how "
      "far its means move with start-latency noise alone (no Slurm needed)");
  add_excerpt_options(ex);
  ex->add_option("--nodes", g_args.nodes, "Cluster as NODESxGPUS")->capture_default_str();
  ex->add_option(
        "--start-latency", g_args.start_latency,
        "Decision -> running in wall seconds, 0..3600 (default 0.48, measured here: docs/slurm.md)")
      ->check(number_in(0, kMaxLatencyS));
  ex->add_option("--jitter", g_args.jitter,
                 "Each start's latency varies by +- this many wall seconds, 0..3600 (default 0.46)")
      ->check(number_in(0, kMaxLatencyS));
  ex->add_option("--overhang", g_args.overhang,
                 "Wall seconds added to each job's run time, 0..3600 (default 0.07, measured on an "
                 "idle machine; ~0.55 with the other core busy: docs/slurm.md)")
      ->check(number_in(0, kMaxLatencyS));
  ex->add_option("--ensemble", g_args.ensemble, "How many jittered simulations (at most 10000)")
      ->capture_default_str()
      ->check(whole_in(0, kMaxEnsemble));
  ex->add_option("--seed", g_args.seed,
                 "Jitter the single simulation too, with this seed (0: mean latency only)")
      ->capture_default_str()
      ->check(seed_value());
  ex->add_option("--out", g_args.out,
                 "Write the single simulation's outputs (jobs.csv, ...) here (a run folder: "
                 "absent, empty or an earlier run's, replaced whole)")
      ->check(non_empty_path());
  ex->add_flag("--json", g_args.json, "One JSON object on stdout (for scripts)");
  add_action(ex, cmd_excerpt);
}

}  // namespace

void register_slurm_commands(
    CLI::App& app, const std::function<void(CLI::App*, std::function<int()>)>& add_action) {
#ifdef DEEPSHARE_HAVE_SLURM
  register_slurm_group(app, add_action);
#endif
  register_fidelity(app, add_action);
  register_excerpt(app, add_action);
}

}  // namespace ds
