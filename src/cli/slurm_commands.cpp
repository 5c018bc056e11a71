// `deepshare slurm run` (the controller daemon), `deepshare slurm replay` (time-scaled
// trace replay on a real cluster) and `deepshare fidelity` (simulator vs. replay).
// `slurm run|replay` exist only in builds with libslurm (DEEPSHARE_HAVE_SLURM); `fidelity`
// needs no Slurm at all.
#include "cli/slurm_commands.hpp"

#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/error.hpp"
#include "slurm/config.hpp"
#include "slurm/excerpt.hpp"
#include "slurm/fidelity.hpp"
#include "slurm/log.hpp"
#ifdef DEEPSHARE_HAVE_SLURM
#include "slurm/controller.hpp"
#include "slurm/http.hpp"
#include "slurm/replay.hpp"
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
  std::string replay_dir;
  double tolerance = 0;
  double start_latency = -1;
};
SlurmArgs g_args;

#ifdef DEEPSHARE_HAVE_SLURM
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) {
  g_stop = true;
}

int cmd_slurm_run() {
  slurm::ControllerConfig cfg = slurm::load_controller_config(g_args.config);
  if (!g_args.metrics.empty()) cfg.metrics = g_args.metrics;
  slurm::Log log(stderr, g_args.quiet);
  slurm::ControllerClock clock;  // scale 1: controller time = Unix ms; a journal overrides it
  clock.scale = cfg.time_scale;
  clock.wall0_ms = slurm::wall_now_ms();
  clock.origin = cfg.time_scale == 1.0 ? clock.wall0_ms : 0;
  slurm::Controller ctl(cfg, log, clock);
  ctl.init();
  std::unique_ptr<slurm::MetricsServer> server;
  if (!cfg.metrics.empty()) {
    server =
        std::make_unique<slurm::MetricsServer>(cfg.metrics, [&] { return ctl.metrics_text(); });
    log.info("metrics_listening", {{"port", std::to_string(server->port())}});
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  ctl.run(g_stop);
  return 0;
}

int cmd_slurm_replay() {
  slurm::ReplayRequest req;
  req.config = slurm::load_controller_config(g_args.config);
  req.config_path = g_args.config;
  if (!g_args.metrics.empty()) req.config.metrics = g_args.metrics;
  req.excerpt.trace = g_args.trace;
  req.excerpt.format = g_args.format;
  req.excerpt.time_scale = g_args.time_scale;
  slurm::parse_excerpt(g_args.excerpt, req.excerpt);
  req.out_dir = g_args.out;
  req.work_dir = g_args.work_dir.empty() ? (std::filesystem::absolute(g_args.out) / "work").string()
                                         : g_args.work_dir;
  req.timeout_s = g_args.timeout_s;
  slurm::Log log(stderr, g_args.quiet);
  const auto r = slurm::run_replay(req, log);
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
  const std::string out = g_args.out.empty() ? g_args.replay_dir : g_args.out;
  std::filesystem::create_directories(out);
  const auto rep = slurm::run_fidelity(g_args.replay_dir, out, g_args.start_latency);
  std::printf("%s\nwritten to %s/fidelity.json, fidelity_jobs.csv, fidelity.md, sim/\n",
              rep.markdown.c_str(), out.c_str());
  if (g_args.tolerance > 0 &&
      (std::abs(rep.jct_rel) > g_args.tolerance || std::abs(rep.queue_rel) > g_args.tolerance)) {
    std::fprintf(stderr, "fidelity: mean JCT or queueing delay differs by more than %.1f%%\n",
                 100 * g_args.tolerance);
    return 1;
  }
  return 0;
}

}  // namespace

void register_slurm_commands(
    CLI::App& app, const std::function<void(CLI::App*, std::function<int()>)>& add_action) {
#ifdef DEEPSHARE_HAVE_SLURM
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

  auto* replay = slurm->add_subcommand(
      "replay",
      "Submit a trace excerpt as real time-scaled jobs, schedule them, write the outputs");
  replay->add_option("--config", g_args.config, "Controller YAML; tenants name their trace tenant")
      ->required();
  replay->add_option("--trace", g_args.trace, "Trace file")->required();
  replay->add_option("--format", g_args.format, "Trace format")->capture_default_str();
  replay->add_option("--excerpt", g_args.excerpt, "from=N,jobs=N,load=F,min=WALL_S,max=WALL_S")
      ->capture_default_str();
  replay->add_option("--time-scale", g_args.time_scale, "Trace seconds per wall second")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  replay->add_option("--out", g_args.out, "Output folder")->required();
  replay->add_option("--work-dir", g_args.work_dir,
                     "Stand-in job output and checkpoints (default OUT/work)");
  replay->add_option("--metrics", g_args.metrics, "Prometheus endpoint HOST:PORT while replaying");
  replay->add_option("--timeout", g_args.timeout_s, "Give up after this many wall seconds")
      ->capture_default_str();
  replay->add_flag("--quiet", g_args.quiet, "Log warnings and errors only");
  add_action(replay, cmd_slurm_replay);
#endif
  auto* fid = app.add_subcommand(
      "fidelity", "Simulate the excerpt a `slurm replay` ran and compare per job and on average");
  fid->add_option("--replay", g_args.replay_dir, "Output folder of `deepshare slurm replay`")
      ->required();
  fid->add_option("--out", g_args.out, "Where to write fidelity.* (default: the replay folder)");
  fid->add_option(
      "--tolerance", g_args.tolerance,
      "Fail (exit 1) when mean JCT or queueing delay differ by more than this fraction");
  fid->add_option("--start-latency", g_args.start_latency,
                  "Simulated decision -> running latency in wall seconds (default: the one the "
                  "replay measured; 0: none)");
  add_action(fid, cmd_fidelity);
}

}  // namespace ds
