// `deepshare import k8s`: a Kubernetes site's own records as the API returns them (pods,
// nodes, optionally Kueue's ClusterQueues and LocalQueues), saved with kubectl or read from
// the API server (cli/k8s_site.hpp: the same Lists, the same import) -> a DeepShare
// workload (cluster, tenants, jobs), which write_native_trace / write_cluster_file
// (native_writer.hpp) save as a native trace and a cluster file. The parts: k8s_pods.hpp
// (jobs), k8s_cluster.hpp (nodes and tenants), k8s_json.hpp (the files, times, quantities);
// docs/formats.md, "k8s", for users.
//
// Assumptions:
//  1. Each finished pod with GPUs becomes a native job (k8s_pods.hpp): NAMESPACE/NAME, its
//     namespace as tenant, its GPUs, a required GPU model if its nodeSelector or its node
//     affinity names one, its
//     creation as submit time, end - start as work, Succeeded/Failed as final state. Pods a
//     Job owns are kept per pod (the Job is not a unit: its pods ran and held GPUs one by
//     one). What the API recorded (start, end, node) is kept beside it (K8sRecord), for the
//     "as recorded" line of `whatif` and the trace's reference columns, with the Job that
//     owns the pod (NAMESPACE/NAME). No user is known.
//  2. A pod requiring a GPU model no node has is skipped and counted with the other skipped
//     pods (k8s_pods.hpp, assumption 3).
//  3. Tenants and quotas: k8s_cluster.hpp, assumptions 4 and 5 (Kueue's ClusterQueues when
//     given, else an even split of the cluster's GPUs among the namespaces with pods).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/workload.hpp"
#include "trace/k8s_json.hpp"

namespace ds {

struct K8sFiles {
  std::string pods;           // kubectl get pods -A -o json
  std::string nodes;          // kubectl get nodes -o json
  std::string clusterqueues;  // kubectl get clusterqueues -o json (optional, with localqueues)
  std::string localqueues;    // kubectl get localqueues -A -o json (optional)
};

// The Lists themselves, wherever they came from (each names its source in messages).
struct K8sLists {
  K8sList pods;
  K8sList nodes;
  std::optional<K8sList> clusterqueues;  // Kueue's, both or neither
  std::optional<K8sList> localqueues;
};

struct K8sImportOptions {
  std::vector<std::string> gpu_memory;  // MODEL=GIB, "*=GIB" (slurm_nodes.hpp, GpuMemoryRule)
};

// What the API recorded for a pod (Unix seconds), parallel to Workload::jobs.
struct K8sRecord {
  std::int64_t start_s = 0;
  std::int64_t end_s = 0;
  std::string node;  // spec.nodeName; empty when not recorded
  std::string job;   // NAMESPACE/NAME of the Job that owns the pod; empty: none
};

struct K8sImport {
  Workload workload;
  std::vector<K8sRecord> recorded;
};

// Reads the files (pods and nodes required; the queues together or not at all).
K8sLists read_k8s_files(const K8sFiles& files);
K8sImport import_k8s(const K8sLists& lists, const K8sImportOptions& options = {});
// read_k8s_files, then the import.
K8sImport import_k8s(const K8sFiles& files, const K8sImportOptions& options = {});

}  // namespace ds
