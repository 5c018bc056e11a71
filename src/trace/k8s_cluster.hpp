// The cluster and the tenants of a Kubernetes site: `kubectl get nodes -o json` and,
// optionally, Kueue's `kubectl get clusterqueues -o json` and `kubectl get localqueues -A -o
// json` (docs/formats.md, "k8s").
//
// Assumptions:
//  1. Nodes: a node per item, its GPUs status.allocatable "nvidia.com/gpu" (what the scheduler
//     places on), else status.capacity. Nodes without GPUs are skipped and counted; more than
//     64 GPUs on a node is an error (DeepShare's limit). All nodes are in the shared pool.
//     Cordoned nodes (spec.unschedulable) are kept as capacity and noted.
//  2. GPU model: the label "nvidia.com/gpu.product" (NVIDIA GPU feature discovery); none: no
//     model. GPU memory: the label "nvidia.com/gpu.memory" (MiB), else the model's name or the
//     table of slurm_nodes.hpp (A100 40 GiB, H100 80, ...), else 24 GiB, noted per model.
//  3. Kueue: a ClusterQueue's quota is the sum over spec.resourceGroups[].flavors[] of the
//     nominalQuota of resource "nvidia.com/gpu" (several flavors: several GPU models, one
//     quota); borrowing and lending limits and cohorts are not read (the `kueue` policy's
//     --set options model them). A namespace's ClusterQueue is its LocalQueues'
//     spec.clusterQueue (several different ones: the first in file order, noted).
//  4. A namespace is a tenant. A ClusterQueue's quota is shared by its namespaces in
//     proportion to their pods' GPU time (largest remainder; equal when none), noted when
//     split. A namespace with pods and no LocalQueue is a best-effort tenant with quota 0
//     (noted), as the Slurm importer does with an account it does not know.
//  5. Without Kueue's files, the namespaces with pods share the cluster's GPUs evenly as
//     quotas (largest remainder, noted): nothing says one team is entitled to more than
//     another, and quota 0 for all would leave no guarantee to compare. Quota > 0: guaranteed,
//     else best-effort. SLO, checkpoint interval and slowdown keep the cluster file's defaults.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/cluster.hpp"
#include "model/tenant.hpp"

namespace ds {

struct K8sCluster {
  Cluster cluster;
  std::vector<std::string> notes;
};

K8sCluster read_k8s_nodes(const std::string& path);

// Kueue's queues: each ClusterQueue's GPU quota, and each namespace's ClusterQueue.
struct K8sQueues {
  std::vector<std::pair<std::string, std::int64_t>> cluster_queues;  // name, GPUs; file order
  std::map<std::string, std::string> queue_of_namespace;
  std::vector<std::string> notes;
};

K8sQueues read_k8s_queues(const std::string& clusterqueues_path,
                          const std::string& localqueues_path);
// The same from the lists themselves (objects with "items", as the API and kubectl give them;
// `*_where` names them in errors): `deepshare k8s run` reads them live (src/k8s/tenants.hpp).
K8sQueues k8s_queues(const nlohmann::json& clusterqueues, const std::string& cq_where,
                     const nlohmann::json& localqueues, const std::string& lq_where);

// Assumptions 4 and 5: the tenants of `namespaces` (in order) whose pods used `demand`
// GPU-seconds each; `queues` null: no Kueue files; `total_gpus` for the even split.
struct K8sTenants {
  std::vector<Tenant> tenants;
  std::vector<std::string> notes;
};
K8sTenants k8s_tenants(const std::vector<std::string>& namespaces,
                       const std::vector<double>& demand, const K8sQueues* queues, int total_gpus);

}  // namespace ds
