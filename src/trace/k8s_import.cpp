#include "trace/k8s_import.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/k8s_cluster.hpp"
#include "trace/k8s_pods.hpp"
#include "trace/slurm_nodes.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace {

std::string counts_text(const std::map<std::string, std::size_t>& counts) {
  std::string s;
  for (const auto& [reason, n] : counts)
    s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + reason;
  return s;
}

// The pods to import (assumption 2) in submit order, file order among equal times.
std::vector<K8sPod> importable(K8sPodsRead& read, const Cluster& cluster) {
  std::unordered_set<std::string> models;
  for (const auto& n : cluster.nodes) models.insert(n.gpu_type);
  std::vector<K8sPod> out;
  for (K8sPod& p : read.pods) {
    if (!p.gpu_type.empty() && !models.contains(p.gpu_type))
      ++read.skipped["asking for a GPU model no node has"];
    else
      out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const K8sPod& a, const K8sPod& b) { return a.submit_s < b.submit_s; });
  return out;
}

// Assumption 3: the namespaces in order of their first pod, and their GPU-seconds.
K8sTenants tenants_of(const std::vector<K8sPod>& pods, const K8sLists& lists, int total_gpus) {
  std::vector<std::string> namespaces;
  std::vector<double> demand;
  std::unordered_map<std::string, std::size_t> index;
  for (const auto& p : pods) {
    auto [it, fresh] = index.try_emplace(p.ns, namespaces.size());
    if (fresh) {
      namespaces.push_back(p.ns);
      demand.push_back(0);
    }
    demand[it->second] += static_cast<double>(p.gpus) * static_cast<double>(p.end_s - p.start_s);
  }
  std::optional<K8sQueues> queues;
  if (lists.clusterqueues && lists.localqueues)
    queues = read_k8s_queues(*lists.clusterqueues, *lists.localqueues);
  return k8s_tenants(namespaces, demand, queues ? &*queues : nullptr, total_gpus);
}

void add_job(Workload& w, const K8sPod& p, TenantId tenant) {
  JobSpec j;
  j.name = p.name;
  j.tenant = tenant;
  j.gpus = static_cast<int>(p.gpus);
  j.gpu_type = p.gpu_type;
  j.submit = seconds(p.submit_s);
  JobTruth truth;
  truth.work =
      seconds(std::clamp<std::int64_t>(p.end_s - p.start_s, 0, limits::kMaxDuration / kSecond));
  truth.state = p.phase == "Succeeded" ? FinalState::Completed : FinalState::Failed;
  w.jobs.push_back(std::move(j));
  w.truth.push_back(truth);
}

void check_files(const K8sFiles& files) {
  for (const auto& [what, path] : {std::pair{"--pods", files.pods}, {"--nodes", files.nodes}})
    if (path.empty())
      throw InputError(std::string(what) +
                       ": a file is required (or --kubeconfig, to read the API server)");
  if (files.clusterqueues.empty() != files.localqueues.empty())
    throw InputError(
        "--clusterqueues and --localqueues go together: a ClusterQueue's namespaces are those "
        "of the LocalQueues that point at it");
}

}  // namespace

K8sLists read_k8s_files(const K8sFiles& files) {
  check_files(files);
  K8sLists out{read_k8s_list(files.pods, "kubectl get pods -A -o json"),
               read_k8s_list(files.nodes, "kubectl get nodes -o json"), std::nullopt, std::nullopt};
  if (!files.clusterqueues.empty()) {
    out.clusterqueues = read_k8s_list(files.clusterqueues, "kubectl get clusterqueues -o json");
    out.localqueues = read_k8s_list(files.localqueues, "kubectl get localqueues -A -o json");
  }
  return out;
}

K8sImport import_k8s(const K8sFiles& files, const K8sImportOptions& options) {
  return import_k8s(read_k8s_files(files), options);
}

K8sImport import_k8s(const K8sLists& lists, const K8sImportOptions& options) {
  const std::string& source = lists.pods.source;
  K8sCluster nodes = read_k8s_nodes(lists.nodes, GpuMemoryRule(options.gpu_memory));
  K8sPodsRead read = read_k8s_pods(lists.pods);
  K8sImport out;
  Workload& w = out.workload;
  w.name = source;
  w.format = "k8s";
  w.cluster = std::move(nodes.cluster);
  w.notes = std::move(nodes.notes);
  const std::vector<K8sPod> pods = importable(read, w.cluster);
  w.notes.push_back("k8s: " + source + ": " + std::to_string(read.items) + " pods");
  if (const auto n =
          std::count_if(pods.begin(), pods.end(), [](auto& p) { return !p.job.empty(); }))
    w.notes.push_back("k8s: " + std::to_string(n) +
                      " pods belong to Jobs: each pod is a job of its own (retries included)");
  if (!read.skipped.empty()) w.notes.push_back("k8s: skipped pods: " + counts_text(read.skipped));
  if (pods.empty())
    throw InputError(SourceLocation{source},
                     "no pod to import (" +
                         (read.skipped.empty() ? "no pods" : counts_text(read.skipped)) +
                         "); pods need to have finished (Succeeded or Failed) with an "
                         "nvidia.com/gpu limit");
  if (const auto n = std::count_if(pods.begin(), pods.end(), [](auto& p) { return p.any_of; }))
    w.notes.push_back("k8s: " + std::to_string(n) +
                      " pods' node affinity allows several GPU models: imported without a model");
  K8sTenants t = tenants_of(pods, lists, w.cluster.total_gpus());
  w.tenants = std::move(t.tenants);
  w.notes.insert(w.notes.end(), t.notes.begin(), t.notes.end());
  std::unordered_map<std::string, TenantId> tenant_of;
  for (const auto& x : w.tenants) tenant_of.emplace(x.name, x.id);
  for (const K8sPod& p : pods) {
    add_job(w, p, tenant_of.at(p.ns));
    out.recorded.push_back({p.start_s, p.end_s, p.node, p.job});
  }
  w.finalize();
  return out;
}

}  // namespace ds
