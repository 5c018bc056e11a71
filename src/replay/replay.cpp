#include "replay/replay.hpp"
#include "slurm/ops.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <unordered_map>

#include "baselines/slurm_user.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "driver/metrics_server.hpp"
#include "model/execution.hpp"
#include "replay/observed.hpp"
#include "replay/replay_files.hpp"
#include "report/outputs.hpp"
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

// The users of a native Slurm run (`--native`, no DeepShare): each job's time limit and QOS
// as the `slurm` baseline's users choose them (baselines/slurm_user.hpp), from what the replay
// has seen finish and what it has submitted.
struct NativeUsers {
  NativeUsers(const ControllerConfig& config, std::size_t tenants)
      : options(config.options), limits(read_time_limit_rule(options)), open_gpus(tenants, 0) {}
  PolicyOptions options;
  SlurmTimeLimits limits;
  std::vector<int> open_gpus;            // per tenant: GPUs of its unfinished tenant-QOS jobs
  std::vector<bool> scavenger;           // per excerpt job
  std::vector<std::uint32_t> limit_min;  // per excerpt job: its --time
};

// Excerpt job `k` ended (`o`: what the replay saw of it): its tenant-QOS GPUs are free again,
// and a completed job teaches its user's run time.
void native_ended(NativeUsers& users, const Workload& w, std::size_t k, const ObservedJob& o) {
  const JobSpec& j = w.jobs[k];
  if (!users.scavenger[k]) users.open_gpus[j.tenant.index()] -= j.gpus;
  if (!o.completed) return;
  Time ran = 0;
  for (const auto& r : o.runs)
    if (r.end != kNever) ran += r.end - r.start;
  users.limits.observe(j, ran);
}

// The batch job that stands for excerpt job `k`.
SubmitRequest submission(const ReplayRequest& req, const Workload& w, std::size_t k,
                         NativeUsers* native) {
  namespace fs = std::filesystem;
  const JobSpec& j = w.jobs[k];
  const Tenant& t = w.tenants[j.tenant.index()];
  const double scale = req.excerpt.time_scale;
  auto wall_ms = [&](Time trace_ms) {
    return static_cast<Time>(std::llround(static_cast<double>(trace_ms) / scale));
  };
  SubmitRequest s;
  s.name = "ds-" + j.name;
  s.account = req.config.tenants[j.tenant.index()].account;
  s.partition = req.config.partition;
  const std::string state = (fs::path(req.work_dir) / "ckpt" / (j.name + ".p")).string();
  std::error_code ec;
  fs::remove(state, ec);
  s.script = stand_in(j.name, wall_ms(w.truth[k].work), wall_ms(t.checkpoint_interval),
                      wall_ms(restart_overhead(j.gpus)), state);
  s.work_dir = req.work_dir;
  s.std_out = (fs::path(req.work_dir) / (j.name + ".out")).string();
  if (native) {
    // Slurm schedules it: GPUs, CPUs in proportion, a QOS and a time limit (whole minutes of
    // wall time; the rule's rounding is a whole number of them at the replay's time scale).
    const bool tenant_qos =
        slurm_tenant_qos(native->open_gpus[j.tenant.index()], 0, j.gpus, t.quota_gpus, true);
    native->scavenger[k] = !tenant_qos;
    if (tenant_qos) native->open_gpus[j.tenant.index()] += j.gpus;
    s.qos = tenant_qos ? s.account : "scavenger";
    const double minutes = static_cast<double>(wall_ms(native->limits.limit(j))) / 60'000.0;
    s.time_limit_min = static_cast<std::uint32_t>(std::max(1.0, std::ceil(minutes - 1e-9)));
    native->limit_min[k] = s.time_limit_min;
    s.tres_per_node = "gres:gpu:" + std::to_string(j.gpus);
    s.cpus = static_cast<std::uint16_t>(std::max(0, req.cpus_per_gpu * j.gpus));
    s.comment = "trace=" + j.name;
    return s;
  }
  s.comment =
      "ds:gpus=" + std::to_string(j.gpus) + ";trace=" + j.name +
      (j.gpu_util >= 0 ? ";u=" + std::to_string(static_cast<int>(j.gpu_util)) : "") +
      (j.gpu_memory_mib > 0 ? ";mem=" + std::to_string(static_cast<long>(j.gpu_memory_mib)) : "");
  s.hold = false;  // the submission gate parks it for DeepShare
  return s;
}

// The partition's GPU nodes, as the excerpt is built on them.
std::vector<NodeShape> partition_shapes(SlurmApi& api, const std::string& partition) {
  auto nodes = api.nodes();
  if (!nodes) throw InputError("cannot read Slurm nodes: " + api.last_error());
  std::vector<NodeShape> shapes;
  for (const auto& n : *nodes)
    if (n.gpus > 0 &&
        std::find(n.partitions.begin(), n.partitions.end(), partition) != n.partitions.end())
      shapes.push_back({n.name, n.gpus});
  return shapes;
}

// The controller's configuration for the replay: its clock's scale, and a journal of its own
// in the output folder (the config's `journal:` may be a production one: never opened).
ControllerConfig replay_config(const ReplayRequest& req, double scale, driver::Log& log) {
  ControllerConfig cc = req.config;
  cc.time_scale = scale;
  if (!cc.journal.empty())
    log.info("note", {{"text", "the config's journal (" + cc.journal +
                                   ") is not used: a replay journals into its output folder"}});
  cc.journal = (std::filesystem::path(req.out_dir) / "journal.log").string();
  return cc;
}

// The controller of a DeepShare replay, in this process: its own Slurm connection, its loop in
// a thread, the metrics endpoint if configured. Stopped when it goes (also on an error).
struct LiveController {
  SlurmApi api;  // the controller's own: it runs in its own thread
  driver::SystemClock wall;
  std::unique_ptr<Controller> ctl;
  std::unique_ptr<driver::MetricsServer> server;
  std::atomic<bool> stop{false};
  std::thread loop;

  void start(const ControllerConfig& cc, driver::Log& log, const driver::DriverClock& clock) {
    start_replay_journal(cc.journal, clock.wall0_ms, clock.origin, clock.scale);  // fresh clock
    ctl = std::make_unique<Controller>(cc, log, clock, Ports{&api, &api, &wall});
    api.set_stats(&ctl->rpc_stats());
    ctl->init();
    if (!cc.metrics.empty())
      server = std::make_unique<driver::MetricsServer>(cc.metrics,
                                                       [this] { return ctl->metrics_text(); });
    loop = std::thread([this] { ctl->run(stop); });
  }
  void finish() {
    stop = true;
    if (loop.joinable()) loop.join();
  }
  ~LiveController() { finish(); }
};

// What the replay records of its jobs while they run.
struct Recorder {
  const Workload& w;
  NativeUsers* native;  // a native Slurm run (no DeepShare), else null
  std::vector<ObservedJob> obs;
  std::vector<Track> track;
  std::unordered_map<std::uint32_t, std::size_t> index;  // Slurm id -> trace job
  std::size_t submitted = 0, ended = 0;

  Recorder(const Workload& wl, NativeUsers* n)
      : w(wl), native(n), obs(wl.jobs.size()), track(wl.jobs.size()) {}

  void submitted_as(std::size_t i, std::uint32_t slurm_id, Time at) {
    obs[i].submit = at;
    track[i].slurm_id = slurm_id;
    index[slurm_id] = i;
  }

  // One poll of Slurm at controller time `t`: runs that began or ended, jobs that finished.
  void observe(const std::vector<JobInfo>& jobs, Time t) {
    for (const auto& j : jobs) {
      auto it = index.find(j.id);
      if (it == index.end()) continue;
      const std::size_t k = it->second;
      Track& tr = track[k];
      if (tr.ended) continue;
      ObservedJob& o = obs[k];
      const bool running = j.state == JobState::Running;
      if (running && !tr.in_run) {
        o.runs.push_back(run_of(j, k, t));
        tr.in_run = true;
        tr.slurm_start_s = j.start_s;
      } else if (!running && tr.in_run) {
        o.runs.back().end = t;
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
        if (native) native_ended(*native, w, k, o);
      }
    }
  }

  // A run of trace job `k` seen starting at `t`, with the pin of this run (if any) as its
  // decision (a native run has none: borrowed means its scavenger QOS).
  ObservedRun run_of(const JobInfo& j, std::size_t k, Time t) const {
    ObservedRun run;
    run.start = t;
    std::optional<Pin> pin;
    try {
      if (auto rec = parse_record(j.admin_comment); rec && !native) pin = rec->pin;
    } catch (const InputError&) {
    }
    const bool valid = pin && pin->restart == j.restarts;
    run.borrowed = native ? native->scavenger[k] : valid && pin->borrowed;
    run.shared = valid && pin->shared;
    if (valid && pin->decided_ms > 0) run.decided = pin->decided_ms;
    if (valid)
      for (const auto& [name, mask] : pin->gpus)
        for (const auto& node : w.cluster.nodes)
          if (node.name == name) run.placement.push_back({node.id, mask});
    return run;
  }
};

// observed.csv (RFC 4180: a job or tenant name with a comma stays one field); qos and
// time_limit_min are what a job asked Slurm for under --native (empty under DeepShare).
std::string observed_csv(const ReplayRequest& req, const Recorder& rec, const RunRecord& result) {
  const Workload& w = rec.w;
  std::string csv =
      "job,slurm_id,tenant,gpus,submit_ms,first_start_ms,end_ms,queue_ms,runs,preemptions,"
      "completed,shared_runs,borrowed_runs,slurm_start_s,slurm_end_s,qos,time_limit_min\n";
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const auto& o = rec.obs[i];
    const auto& jo = result.jobs[i];
    int shared = 0, borrowed = 0;
    for (const auto& r : o.runs) shared += r.shared, borrowed += r.borrowed;
    std::string qos, limit;
    if (rec.native) {
      qos = rec.native->scavenger[i] ? "scavenger"
                                     : req.config.tenants[w.jobs[i].tenant.index()].account;
      limit = std::to_string(rec.native->limit_min[i]);
    }
    append_csv_row(
        csv, {w.jobs[i].name, std::to_string(rec.track[i].slurm_id),
              w.tenants[w.jobs[i].tenant.index()].name, std::to_string(w.jobs[i].gpus),
              std::to_string(o.submit),
              std::to_string(jo.first_start == kNever ? Time{-1} : jo.first_start),
              std::to_string(jo.end == kNever ? Time{-1} : jo.end), std::to_string(jo.queue),
              std::to_string(o.runs.size()), std::to_string(jo.preemptions),
              o.completed ? "1" : "0", std::to_string(shared), std::to_string(borrowed),
              std::to_string(rec.track[i].slurm_start_s), std::to_string(rec.track[i].slurm_end_s),
              qos, limit});
  }
  return csv;
}

// Actuation latency of the observed runs (replay_files.hpp; docs/slurm.md §6).
nlohmann::json latency_of(const Recorder& rec, double scale) {
  return observed_latencies(rec.w, rec.obs, scale, rec.native != nullptr);
}

// replay.json: what `deepshare fidelity` needs to simulate the same excerpt (trace, excerpt,
// time scale, config, nodes), the measured latencies, the counts.
nlohmann::json replay_json(const ReplayRequest& req, const ExcerptSpec& spec,
                           const std::vector<NodeShape>& shapes, const Recorder& rec,
                           std::size_t completed, double wall_s, nlohmann::json latency) {
  namespace fs = std::filesystem;
  nlohmann::json rj;
  rj["latency_wall_s"] = std::move(latency);
  rj["start_latency_wall_s"] = rj["latency_wall_s"]["detect"]["mean"].get<double>() +
                               rj["latency_wall_s"]["actuate"]["mean"].get<double>();
  rj["native"] = req.native;
  rj["trace"] = fs::absolute(spec.trace).string();
  rj["format"] = spec.format;
  rj["excerpt"] = format_excerpt(spec);
  rj["time_scale"] = spec.time_scale;
  rj["config"] = fs::absolute(req.config_path).string();
  rj["nodes"] = nlohmann::json::array();
  for (const auto& s : shapes) rj["nodes"].push_back({{"name", s.name}, {"gpus", s.gpus}});
  rj["jobs"] = rec.obs.size();
  rj["submitted"] = rec.submitted;
  rj["completed"] = completed;
  rj["wall_seconds"] = wall_s;
  return rj;
}

}  // namespace

// The steps: build the excerpt on the partition's nodes, start the controller in this
// process (not for a native run), submit each job at its scaled time and record its runs
// while polling Slurm, then write the outputs (as the simulator's), observed.csv and
// replay.json.
ReplayOutcome run_replay(const ReplayRequest& req, driver::Log& log) {
  namespace fs = std::filesystem;
  if (req.config.tenant_source != TenantSource::Config)
    throw InputError(req.config.source +
                     ": a replay defines its tenants (tenant_source: config, with quota_gpus and "
                     "trace per tenant)");
  const auto t_begin = std::chrono::steady_clock::now();
  SlurmApi api;
  const std::vector<NodeShape> shapes = partition_shapes(api, req.config.partition);
  ExcerptSpec spec = req.excerpt;
  const Workload w = make_excerpt(spec, req.config, shapes);
  for (const auto& note : w.notes) log.info("note", {{"text", note}});
  const double scale = spec.time_scale;
  fs::create_directories(req.out_dir);
  fs::create_directories(fs::path(req.work_dir) / "ckpt");

  const ControllerConfig cc = replay_config(req, scale, log);
  driver::DriverClock clock;
  clock.wall0_ms =
      driver::wall_now_ms() + 1500;  // lead time: controller up before the first submit
  clock.origin = 0;
  clock.scale = scale;
  LiveController live;
  std::optional<NativeUsers> native;
  if (req.native) {
    native.emplace(req.config, w.tenants.size());
    native->scavenger.assign(w.jobs.size(), false);
    native->limit_min.assign(w.jobs.size(), 0);
  } else {
    live.start(cc, log, clock);
  }

  Recorder rec(w, native ? &*native : nullptr);
  const std::size_t n = w.jobs.size();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long>(req.timeout_s * 1000));
  while (rec.ended < n && std::chrono::steady_clock::now() < deadline) {
    const Time now = clock.at(driver::wall_now_ms());
    for (; rec.submitted < n && w.jobs[rec.submitted].submit <= now; ++rec.submitted) {
      auto id = api.submit(submission(req, w, rec.submitted, rec.native));
      if (!id)
        throw InputError("submitting trace job " + w.jobs[rec.submitted].name + ": " +
                         api.last_error());
      rec.submitted_as(rec.submitted, *id, clock.at(driver::wall_now_ms()));
    }
    if (auto jobs = api.jobs()) rec.observe(*jobs, clock.at(driver::wall_now_ms()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  live.finish();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_begin).count();
  if (rec.ended < n) log.warn("replay_timeout", {{"ended", rec.ended}, {"jobs", n}});

  RunRecord result = result_from_observation(w, rec.obs);
  ReplayOutcome out;
  out.metrics = compute_metrics(w, result);
  out.wall_seconds = wall_s;
  out.submitted = rec.submitted;
  for (const auto& o : rec.obs) out.completed += o.completed;
  RunInfo info;
  info.policy = req.config.policy;
  info.trace = w.name;
  info.format = w.format;
  info.load_factor = spec.load;
  info.options = req.config.options;
  info.wall_seconds = wall_s;
  info.version = "slurm-replay";
  const nlohmann::json rj =
      replay_json(req, spec, shapes, rec, out.completed, wall_s, latency_of(rec, scale));
  out.start_latency_wall_s = rj["start_latency_wall_s"].get<double>();
  // One checked set of files, manifest.json last (kind "replay": what `fidelity` verifies,
  // replay/replay_folder.hpp); the caller commits the folder (core/output_folder.hpp).
  info.kind = "replay";
  info.command = "slurm replay";
  info.extra_files = {{"observed.csv", observed_csv(req, rec, result)},
                      {"replay.json", rj.dump(2) + "\n"}};
  info.extra_identity = {{"submitted", rec.submitted}, {"completed", out.completed}};
  write_outputs(req.out_dir, w, result, out.metrics, info);
  return out;
}

}  // namespace ds::slurm
