#include "cli/k8s_commands.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>

#include "cli/excerpt_args.hpp"
#include "cli/output_rules.hpp"
#include "core/error.hpp"
#include "core/output_folder.hpp"
#include "driver/log.hpp"
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

int cmd_k8s_replay() {
  k8s::ReplayRequest req;
  req.config = slurm::load_controller_config(g_k8s.ex.config);
  req.config_path = g_k8s.ex.config;
  req.excerpt = excerpt_spec(g_k8s.ex);
  req.kubeconfig = g_k8s.kubeconfig;
  if (req.kubeconfig.empty()) {
    const char* env = std::getenv("KUBECONFIG");
    if (env == nullptr || *env == '\0')
      throw InputError("no kubeconfig: pass --kubeconfig or set KUBECONFIG");
    req.kubeconfig = env;
  }
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
}

}  // namespace ds
