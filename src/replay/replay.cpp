#include "replay/replay.hpp"
#include "slurm/ops.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "core/error.hpp"
#include "driver/metrics_server.hpp"
#include "model/execution.hpp"
#include "replay/observed.hpp"
#include "replay/replay_files.hpp"
#include "slurm/api.hpp"
#include "slurm/controller.hpp"
#include "slurm/record.hpp"

namespace ds::slurm {
namespace {

std::string stand_in(const std::string& name, Time work_ms, Time ckpt_ms, Time over_ms,
                     const std::string& state) {
  auto secs = [](Time ms) {
    char b[32];
    std::snprintf(b, sizeof b, "%lld.%03lld", static_cast<long long>(ms / 1000),
                  static_cast<long long>(ms % 1000));
    return std::string(b);
  };
  return "#!/bin/bash\n# DeepShare replay stand-in for trace job " + name +
         ": trains for its scaled run time, checkpointing\n"
         "work=" +
         std::to_string(work_ms) + " ckpt=" + std::to_string(ckpt_ms) + " state=" + state +
         "\n"
         "p=0; [ -s \"$state\" ] && p=$(cat \"$state\")\n"
         "echo \"start node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES "
         "mps=$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE "
         "restart=${SLURM_RESTART_COUNT:-0} progress=$p\"\n"
         "[ \"${SLURM_RESTART_COUNT:-0}\" -gt 0 ] && sleep " +
         secs(over_ms) +
         "\n"
         "while [ \"$p\" -lt \"$work\" ]; do\n"
         "  seg=$((work - p)); [ \"$ckpt\" -gt 0 ] && [ \"$seg\" -gt \"$ckpt\" ] && seg=$ckpt\n"
         "  sleep $(printf '%d.%03d' $((seg / 1000)) $((seg % 1000)))\n"
         "  p=$((p + seg)); echo \"$p\" > \"$state\"\n"
         "done\necho done\n";
}

struct Track {
  std::uint32_t slurm_id = 0;
  bool in_run = false;
  bool ended = false;
  std::int64_t slurm_start_s = 0, slurm_end_s = 0;
  std::uint32_t restarts = 0;
};

}  // namespace

ReplayOutcome run_replay(const ReplayRequest& req, driver::Log& log) {
  namespace fs = std::filesystem;
  if (req.config.tenant_source != TenantSource::Config)
    throw InputError(req.config.source +
                     ": a replay defines its tenants (tenant_source: config, with quota_gpus and "
                     "trace per tenant)");
  const auto t_begin = std::chrono::steady_clock::now();
  SlurmApi api;
  auto nodes = api.nodes();
  if (!nodes) throw InputError("cannot read Slurm nodes: " + api.last_error());
  std::vector<NodeShape> shapes;
  for (const auto& n : *nodes)
    if (n.gpus > 0 && std::find(n.partitions.begin(), n.partitions.end(), req.config.partition) !=
                          n.partitions.end())
      shapes.push_back({n.name, n.gpus});
  ExcerptSpec spec = req.excerpt;
  const Workload w = make_excerpt(spec, req.config, shapes);
  for (const auto& note : w.notes) log.info("note", {{"text", note}});
  const double scale = spec.time_scale;
  fs::create_directories(req.out_dir);
  fs::create_directories(fs::path(req.work_dir) / "ckpt");

  ControllerConfig cc = req.config;
  cc.time_scale = scale;
  // The replay's journal is its own, in the output folder: the config's `journal:` (it may be
  // a copy of a production config) is never opened, let alone deleted.
  if (!cc.journal.empty())
    log.info("note", {{"text", "the config's journal (" + cc.journal +
                                   ") is not used: a replay journals into its output folder"}});
  cc.journal = (fs::path(req.out_dir) / "journal.log").string();
  std::error_code ec;
  driver::DriverClock clock;
  clock.wall0_ms =
      driver::wall_now_ms() + 1500;  // lead time: controller up before the first submit
  clock.origin = 0;
  clock.scale = scale;
  start_replay_journal(cc.journal, clock.wall0_ms, clock.origin, clock.scale);  // a fresh clock
  SlurmApi ctl_api;  // the controller's own: it runs in its own thread
  driver::SystemClock wall;
  Controller ctl(cc, log, clock, Ports{&ctl_api, &ctl_api, &wall});
  ctl_api.set_stats(&ctl.rpc_stats());
  ctl.init();
  std::unique_ptr<driver::MetricsServer> server;
  if (!cc.metrics.empty())
    server =
        std::make_unique<driver::MetricsServer>(cc.metrics, [&] { return ctl.metrics_text(); });
  std::atomic<bool> stop{false};
  std::thread loop([&] { ctl.run(stop); });

  const std::size_t n = w.jobs.size();
  std::vector<ObservedJob> obs(n);
  std::vector<Track> track(n);
  std::unordered_map<std::uint32_t, std::size_t> index;
  std::size_t next = 0, ended = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long>(req.timeout_s * 1000));
  while (ended < n && std::chrono::steady_clock::now() < deadline) {
    const std::int64_t wall = driver::wall_now_ms();
    const Time now = clock.at(wall);
    // 1. submissions due
    while (next < n && w.jobs[next].submit <= now) {
      const JobSpec& j = w.jobs[next];
      const Tenant& t = w.tenants[j.tenant.index()];
      const std::string account = req.config.tenants[j.tenant.index()].account;
      auto wall_ms = [&](Time trace_ms) {
        return static_cast<Time>(std::llround(static_cast<double>(trace_ms) / scale));
      };
      SubmitRequest s;
      s.name = "ds-" + j.name;
      s.account = account;
      s.partition = req.config.partition;
      const std::string state = (fs::path(req.work_dir) / "ckpt" / (j.name + ".p")).string();
      fs::remove(state, ec);
      s.script = stand_in(j.name, wall_ms(w.truth[next].work), wall_ms(t.checkpoint_interval),
                          wall_ms(restart_overhead(j.gpus)), state);
      s.work_dir = req.work_dir;
      s.std_out = (fs::path(req.work_dir) / (j.name + ".out")).string();
      s.comment =
          "ds:gpus=" + std::to_string(j.gpus) + ";trace=" + j.name +
          (j.gpu_util >= 0 ? ";u=" + std::to_string(static_cast<int>(j.gpu_util)) : "") +
          (j.gpu_memory_mib > 0 ? ";mem=" + std::to_string(static_cast<long>(j.gpu_memory_mib))
                                : "");
      s.hold = false;  // the submission gate parks it for DeepShare
      auto id = api.submit(s);
      if (!id) throw InputError("submitting trace job " + j.name + ": " + api.last_error());
      obs[next].submit = clock.at(driver::wall_now_ms());
      track[next].slurm_id = *id;
      index[*id] = next;
      ++next;
    }
    // 2. observe
    if (auto jobs = api.jobs()) {
      const Time t_obs = clock.at(driver::wall_now_ms());
      for (const auto& j : *jobs) {
        auto it = index.find(j.id);
        if (it == index.end()) continue;
        const std::size_t k = it->second;
        Track& tr = track[k];
        if (tr.ended) continue;
        ObservedJob& o = obs[k];
        const bool running = j.state == JobState::Running;
        if (running && !tr.in_run) {
          ObservedRun run;
          run.start = t_obs;
          std::optional<Pin> pin;
          try {
            if (auto rec = parse_record(j.admin_comment)) pin = rec->pin;
          } catch (const InputError&) {
          }
          const bool valid = pin && pin->restart == j.restarts;
          run.borrowed = valid && pin->borrowed;
          run.shared = valid && pin->shared;
          if (valid && pin->decided_ms > 0) run.decided = pin->decided_ms;
          if (valid) {
            for (const auto& [name, mask] : pin->gpus)
              for (const auto& node : w.cluster.nodes)
                if (node.name == name) run.placement.push_back({node.id, mask});
          }
          o.runs.push_back(run);
          tr.in_run = true;
          tr.slurm_start_s = j.start_s;
        } else if (!running && tr.in_run) {
          o.runs.back().end = t_obs;
          o.runs.back().preempted = true;  // until the job is seen completed
          tr.in_run = false;
        }
        if (j.terminal()) {
          tr.ended = true;
          tr.slurm_end_s = j.end_s;
          tr.restarts = j.restarts;
          o.completed = j.state == JobState::Completed;
          if (!o.runs.empty()) o.runs.back().preempted = false;
          ++ended;
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stop = true;
  loop.join();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_begin).count();
  if (ended < n) log.warn("replay_timeout", {{"ended", ended}, {"jobs", n}});

  ReplayFiles files = replay_files(w, obs, spec, req.config, req.config_path, shapes);
  files.wall_seconds = wall_s;
  files.submitted = next;
  files.version = "slurm-replay";
  files.id_header = "slurm_id";
  files.tail_header = "slurm_start_s,slurm_end_s";
  for (std::size_t i = 0; i < n; ++i) {
    files.ids.push_back(std::to_string(track[i].slurm_id));
    files.tails.push_back(std::to_string(track[i].slurm_start_s) + ',' +
                          std::to_string(track[i].slurm_end_s));
  }
  const ReplayResult written = write_replay_files(req.out_dir, files);
  ReplayOutcome out;
  out.metrics = written.metrics;
  out.wall_seconds = wall_s;
  out.submitted = next;
  out.completed = written.completed;
  out.start_latency_wall_s = written.start_latency_wall_s;
  return out;
}

}  // namespace ds::slurm
