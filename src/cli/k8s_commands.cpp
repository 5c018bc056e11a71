#include "cli/k8s_commands.hpp"

#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "cli/excerpt_args.hpp"
#include "cli/output_rules.hpp"
#include "core/error.hpp"
#include "core/output_folder.hpp"
#include "driver/log.hpp"
#include "driver/metrics_server.hpp"
#include "k8s/scheduler.hpp"
#include "registry/registry.hpp"
#include "replay/k8s_replay.hpp"

namespace ds {
namespace {

struct K8sArgs {
  ExcerptArgs ex;
  std::string kubeconfig;
  std::string scheduler;
  bool kueue_objects = false;
  std::string node_selector;
  std::string out;
  double timeout_s = 1800;
  bool quiet = false;
};
K8sArgs g_k8s;

// --kubeconfig, else $KUBECONFIG.
std::string kubeconfig_path(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("KUBECONFIG");
  if (env == nullptr || *env == '\0')
    throw InputError("no kubeconfig: pass --kubeconfig or set KUBECONFIG");
  return env;
}

int cmd_k8s_replay() {
  k8s::ReplayRequest req;
  req.config = slurm::load_controller_config(g_k8s.ex.config);
  req.config_path = g_k8s.ex.config;
  req.excerpt = excerpt_spec(g_k8s.ex);
  req.kubeconfig = kubeconfig_path(g_k8s.kubeconfig);
  req.scheduler = k8s::parse_scheduler(g_k8s.scheduler);
  req.kueue_objects = g_k8s.kueue_objects;
  req.node_selector = g_k8s.node_selector;
  // Checked, locked and staged before the replay: complete or absent (output_folder.hpp).
  OutputFolder out(g_k8s.out, replay_rules({g_k8s.ex.trace, g_k8s.ex.config}));
  req.out_dir = out.dir().string();
  req.timeout_s = g_k8s.timeout_s;
  driver::Log log(stderr, g_k8s.quiet);
  const auto r = k8s::run_replay(req, log);
  out.commit();
  std::printf(
      "replayed %zu jobs (%zu completed) in %.0f s wall with scheduler %s: avg queue %.0f s  "
      "avg JCT %.0f s  preemptions %zu  occupancy %.3f (trace seconds, time scale %g)\n"
      "measured start latency %.3f wall s (submit -> bound -> running)\noutputs written to %s\n",
      r.submitted, r.completed, r.wall_seconds, k8s::scheduler_name(req.scheduler),
      r.metrics.avg_queue_s, r.metrics.avg_jct_s, r.metrics.preemptions,
      r.metrics.gpu_occupancy_full, g_k8s.ex.time_scale, r.start_latency_wall_s, g_k8s.out.c_str());
  return r.completed == r.submitted ? 0 : 1;
}

struct RunArgs {
  std::string kubeconfig, config, tenants, policy, scheduler_name = "deepshare";
  k8s::DraConfig dra;
  double time_scale = 0;  // 0: the configuration's (1 without one)
  std::int64_t cycles = 0;
  bool once = false;
  bool quiet = false;
  bool no_leader_elect = false;
  bool tenants_from_api = false;
  std::string metrics;  // HOST:PORT (or PORT: 127.0.0.1)
  k8s::LeaderConfig lease;
  double lease_duration_s = 15;
  std::int64_t eviction_grace_s = -1;  // -1: the configuration's (30 without one)
};
RunArgs g_run;
std::atomic<bool> g_stop{false};
extern "C" void on_stop(int) {
  g_stop = true;
}

// "ns=quota,ns=quota" -> tenants and their namespaces.
void parse_tenants_flag(const std::string& text, k8s::SchedulerConfig& cfg) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    int quota = -1;
    if (eq != std::string::npos) {
      const std::string q = item.substr(eq + 1);
      if (!q.empty() && q.find_first_not_of("0123456789") == std::string::npos && q.size() < 7)
        quota = std::stoi(q);
    }
    const std::string ns = eq == std::string::npos ? item : item.substr(0, eq);
    if (quota < 0 || ns.empty() || k8s::dns_label(ns) != ns)
      throw InputError("--tenants: '" + item + "' is not NAMESPACE=GPUS (e.g. team-a=8)");
    Tenant t;
    t.name = ns;
    t.quota_gpus = quota;
    cfg.tenants.push_back(t);
    cfg.namespaces.push_back(ns);
  }
}

k8s::SchedulerConfig run_config() {
  k8s::SchedulerConfig cfg;
  cfg.kubeconfig = kubeconfig_path(g_run.kubeconfig);
  cfg.scheduler_name = g_run.scheduler_name;
  cfg.dra = g_run.dra;
  if (!g_run.config.empty()) {
    const slurm::ControllerConfig c = slurm::load_controller_config(g_run.config);
    if (c.tenant_source != slurm::TenantSource::Config)
      throw InputError(c.source +
                       ": Kubernetes tenants are namespaces given here (tenant_source: "
                       "config, with name and quota_gpus per tenant)");
    cfg.policy = c.policy;
    cfg.options = c.options;
    cfg.time_scale = c.time_scale;
    cfg.poll_ms = c.poll_ms;
    cfg.journal = c.journal;
    cfg.gpu_memory_mib = c.gpu_memory_mib;
    cfg.metrics = c.metrics;
    cfg.timeout_ms = static_cast<std::int64_t>(c.start_margin_s * 1000);
    cfg.grace.default_s = c.eviction_grace_s;
    // a tenant's own grace period holds whichever source gives its quota
    for (const auto& t : c.tenants)
      if (t.eviction_grace_s >= 0)
        cfg.grace.by_namespace[k8s::dns_label(t.tenant.name)] = t.eviction_grace_s;
    if (g_run.tenants.empty() && !g_run.tenants_from_api)
      for (const auto& t : c.tenants) {
        cfg.tenants.push_back(t.tenant);
        cfg.namespaces.push_back(k8s::dns_label(t.tenant.name));  // as the replay names them
      }
  }
  if (g_run.eviction_grace_s >= 0) cfg.grace.default_s = g_run.eviction_grace_s;
  if (!g_run.metrics.empty()) cfg.metrics = g_run.metrics;
  if (!g_run.tenants.empty() && g_run.tenants_from_api)
    throw InputError("--tenants and --tenants-from-api: one source of tenants");
  if (!g_run.tenants.empty()) parse_tenants_flag(g_run.tenants, cfg);
  // No tenants given: read live from Kueue's queues or the ConfigMap deepshare-tenants.
  cfg.live_tenants = cfg.tenants.empty();
  if (!g_run.policy.empty()) cfg.policy = g_run.policy;
  if (g_run.time_scale > 0) cfg.time_scale = g_run.time_scale;
  cfg.leader_elect = !g_run.no_leader_elect;
  cfg.lease = g_run.lease;
  // client-go's proportions (15 s / 10 s / 2 s): the holder stops acting at 2/3 of the
  // duration without a renewal, and tries again every 2/15 of it.
  const auto ms = static_cast<std::int64_t>(g_run.lease_duration_s * 1000);
  cfg.lease.duration_ms = ms;
  cfg.lease.renew_deadline_ms = ms * 2 / 3;
  cfg.lease.retry_ms = ms * 2 / 15;
  if (cfg.leader_elect) k8s::check_leader_config(cfg.lease);
  for (const auto& p : policy_registry())
    if (p.name == cfg.policy && p.oracle)
      throw InputError("policy '" + cfg.policy +
                       "' is an oracle (it reads true run times): it cannot run on a cluster");
  return cfg;
}

int cmd_k8s_run() {
  const k8s::SchedulerConfig cfg = run_config();
  driver::Log log(stderr, g_run.quiet);
  std::signal(SIGINT, on_stop);
  std::signal(SIGTERM, on_stop);
  if (!cfg.leader_elect)
    log.warn("no_lease", {{"detail",
                           "--no-leader-elect: nothing keeps a second `deepshare k8s run` from "
                           "binding on this cluster (run exactly one)"}});
  k8s::PodScheduler s(cfg, log);
  std::unique_ptr<driver::MetricsServer> server;  // a standby answers too (deepshare_leader 0)
  if (!cfg.metrics.empty()) {
    server = std::make_unique<driver::MetricsServer>(cfg.metrics, [&] { return s.metrics_text(); });
    log.info("metrics_listening", {{"address", server->host()}, {"port", server->port()}});
  }
  if (!s.lead(g_stop)) return 0;  // stopped while a standby
  s.init();
  s.run(g_stop, g_run.once ? 1 : g_run.cycles);
  // Deposed: another scheduler leads; exit 3 (as `deepshare slurm run`).
  return s.deposed() ? 3 : 0;
}

}  // namespace

void register_k8s_commands(CLI::App& app,
                           const std::function<void(CLI::App*, std::function<int()>)>& add_action) {
  auto* k8s =
      app.add_subcommand("k8s", "DeepShare on a real Kubernetes cluster (docs/kubernetes.md)");
  k8s->require_subcommand(1);
  auto* replay = k8s->add_subcommand(
      "replay",
      "Create a trace excerpt's jobs as time-scaled Kubernetes Jobs, let the chosen scheduler "
      "run them on the cluster's (KWOK) GPU nodes, write what the API recorded");
  add_excerpt_options(replay, g_k8s.ex);
  replay
      ->add_option("--scheduler", g_k8s.scheduler,
                   "default: kube-scheduler alone; kueue: Kueue admits (one ClusterQueue per "
                   "tenant in one cohort), kube-scheduler places; deepshare: pods for the "
                   "DeepShare driver")
      ->required();
  replay->add_option("--kubeconfig", g_k8s.kubeconfig, "Kubeconfig (default: $KUBECONFIG)");
  replay->add_flag("--kueue-objects", g_k8s.kueue_objects,
                   "Create the Kueue queues also when Kueue does not schedule (a quota source)");
  replay->add_option("--node-selector", g_k8s.node_selector,
                     "Label selector of the GPU nodes to replay on (default: every node with "
                     "allocatable nvidia.com/gpu)");
  replay->add_option("--out", g_k8s.out, "Output folder")->required();
  replay->add_option("--timeout", g_k8s.timeout_s, "Give up after this many wall seconds")
      ->capture_default_str();
  replay->add_flag("--quiet", g_k8s.quiet, "Log warnings and errors only");
  add_action(replay, cmd_k8s_replay);

  auto* run = k8s->add_subcommand(
      "run",
      "DeepShare as the scheduler of the pods with spec.schedulerName: deepshare: binds them to "
      "nodes (whole nvidia.com/gpu), evicts to reclaim, with the policy core (docs/kubernetes.md "
      "§8)");
  run->add_option("--kubeconfig", g_run.kubeconfig, "Kubeconfig (default: $KUBECONFIG)");
  run->add_option("--config", g_run.config,
                  "DeepShare configuration (YAML, tenant_source: config): policy, options, "
                  "time_scale, poll_ms, journal, tenants (name = namespace, quota_gpus)")
      ->check(CLI::ExistingFile);
  run->add_option("--tenants", g_run.tenants,
                  "Tenant namespaces and their guaranteed GPUs, NS=GPUS,... (instead of the "
                  "configuration's tenants)");
  run->add_flag("--tenants-from-api", g_run.tenants_from_api,
                "Tenants read live from the API, not the configuration: Kueue's ClusterQueues "
                "(nominalQuota per LocalQueue's namespace) when Kueue is served, else the "
                "ConfigMap deepshare-tenants in the Lease's namespace (the default without "
                "--tenants or configured tenants)");
  run->add_option("--policy", g_run.policy,
                  "Policy (default: the configuration's, else deepshare); oracles are refused");
  run->add_option("--eviction-grace", g_run.eviction_grace_s,
                  "Seconds an evicted pod may take to stop, at most (its own "
                  "terminationGracePeriodSeconds when shorter; a tenant's eviction_grace_s in "
                  "the configuration overrides it; default: the configuration's, else 30)")
      ->check(CLI::Range(0, 86400));
  run->add_option("--time-scale", g_run.time_scale,
                  "Driver time = wall time x this (a time-scaled replay; default: the "
                  "configuration's, else 1)");
  run->add_option("--scheduler-name", g_run.scheduler_name, "The spec.schedulerName it serves")
      ->capture_default_str();
  run->add_option("--dra-driver", g_run.dra.driver,
                  "DRA: the driver whose ResourceSlice devices are GPUs (a node without "
                  "nvidia.com/gpu has as many GPUs as it publishes devices of this driver)")
      ->capture_default_str();
  run->add_option("--dra-class", g_run.dra.device_class,
                  "DRA: the DeviceClass of GPUs; a claim's request of this class for a count of "
                  "devices is allocated by DeepShare, any other request refused")
      ->capture_default_str();
  run->add_option("--cycles", g_run.cycles, "Stop after this many cycles (0: at SIGTERM/SIGINT)")
      ->capture_default_str();
  run->add_flag("--once", g_run.once, "One cycle, then exit (same as --cycles 1)");
  run->add_flag("--quiet", g_run.quiet, "Log warnings and errors only");
  run->add_option("--metrics", g_run.metrics,
                  "Prometheus endpoint HOST:PORT or PORT (127.0.0.1; port 0: any free one, "
                  "logged as metrics_listening); default: the configuration's metrics");
  run->add_flag("--no-leader-elect", g_run.no_leader_elect,
                "No Lease: bind and evict at once (only when exactly one scheduler runs)");
  run->add_option("--lease-namespace", g_run.lease.ns,
                  "Namespace of the leader election's Lease (it must exist)")
      ->capture_default_str();
  run->add_option("--lease-name", g_run.lease.name, "Name of the leader election's Lease")
      ->capture_default_str();
  run->add_option("--lease-duration", g_run.lease_duration_s,
                  "leaseDurationSeconds (whole seconds): a standby takes over this long after "
                  "the leader's last renewal; the leader stops acting at 2/3 of it")
      ->capture_default_str();
  run->add_option("--identity", g_run.lease.identity,
                  "holderIdentity in the Lease (default: HOSTNAME_PID)");
  run->footer(
      "Example:\n  deepshare k8s run --kubeconfig admin.kubeconfig --tenants team-a=8,team-b=8\n"
      "Gangs: the pods of a namespace labelled deepshare.io/gang=NAME, annotated\n"
      "deepshare.io/gang-size=N, are one job placed all-or-nothing (docs/kubernetes.md §8).\n"
      "GPUs as DRA devices: pods whose ResourceClaims ask for a count of --dra-class devices\n"
      "get the GPUs DeepShare chose written into the claims (docs/kubernetes.md §8).\n"
      "Not yet (issue #23): MPS sharing. Install (RBAC, the admission policy that "
      "makes GPU pods use it): docs/kubernetes.md §10.");
  add_action(run, cmd_k8s_run);
}

}  // namespace ds
