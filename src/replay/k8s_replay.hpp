// Time-scaled trace replay on a real Kubernetes cluster (`deepshare k8s replay`,
// docs/kubernetes.md §7): the Slurm testbed's excerpt, its jobs created as batch/v1 Jobs at
// their scaled arrival times, scheduled by kube-scheduler alone, by Kueue (admission) and
// kube-scheduler (placement), or by DeepShare; what happened recorded from the API.
//
// Algorithm:
//  1. Build the excerpt workload (excerpt.hpp) on the cluster's GPU nodes (those whose
//     allocatable nvidia.com/gpu > 0, optionally selected by a label selector).
//  2. One namespace per tenant (namespaces are tenants); for --scheduler kueue (or with
//     kueue_objects) the ResourceFlavor, one ClusterQueue per tenant with the tenant's
//     quota in one cohort, and its LocalQueue (k8s_objects.hpp), then wait until Kueue
//     reports every ClusterQueue Active (so Kueue runs and accepted the configuration).
//  3. Watch the run's pods (label deepshare.io/replay=RUN), then create each job's Job at
//     its scaled submit time (trace time = (wall - wall0) x scale).
//  4. Each pod state the watch delivers goes to the PodTracker (k8s_tracker.hpp); when a
//     run starts, the replay writes its end to the pod (deepshare.io/run-until), which KWOK
//     honours: the job's remaining work after its last checkpoint.
//  5. When every job completed (or the timeout passed) write the outputs (replay_files.hpp)
//     with the engine's columns (the Job, the API's own timestamps) and in replay.json the
//     scheduler, the run id, the Kueue objects applied and how the watch's times compare
//     with the API's.
// Assumptions: the cluster is the replay's alone (a fresh one per replay: other pods on the
// GPU nodes would skew it); KWOK plays the nodes with the project's Stages
// (scripts/k8s/start-cluster.sh, best with POD_DELETE=fast: a preempted pod frees its GPUs at
// once); Kueue, when asked for, runs (scripts/k8s/start-kueue.sh); `deepshare` needs the
// DeepShare driver running (not started here).
#pragma once

#include <string>

#include "driver/log.hpp"
#include "replay/excerpt.hpp"
#include "replay/k8s_objects.hpp"
#include "report/metrics.hpp"
#include "slurm/config.hpp"

namespace ds::k8s {

struct ReplayRequest {
  slurm::ExcerptSpec excerpt;
  slurm::ControllerConfig config;  // tenants (quota_gpus, trace:) and the simulator's policy
  std::string config_path;
  std::string kubeconfig;
  Scheduler scheduler = Scheduler::Default;
  bool kueue_objects = false;  // create the Kueue objects even when Kueue does not schedule
  std::string node_selector;   // label selector of the GPU nodes ("" = every GPU node)
  std::string out_dir;
  double timeout_s = 1800;
};

struct ReplayOutcome {
  Metrics metrics;
  double wall_seconds = 0;
  std::size_t submitted = 0, completed = 0, restarts = 0;
  double start_latency_wall_s = 0;
};

ReplayOutcome run_replay(const ReplayRequest& request, driver::Log& log);

}  // namespace ds::k8s
