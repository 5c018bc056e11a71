#include "trace/k8s_cluster.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/k8s_json.hpp"
#include "trace/slurm_nodes.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace {

using nlohmann::json;

constexpr std::string_view kGpu = "nvidia.com/gpu";

std::string object_name(const std::string& path, const json& obj, std::size_t index,
                        const char* kind, bool namespaced) {
  const K8sItem first{path, "item " + std::to_string(index), obj};
  if (!obj.is_object()) first.fail("(the item)", std::string("a ") + kind + " object");
  std::string name = *first.string({"metadata", "name"}, true);
  if (namespaced) name = *first.string({"metadata", "namespace"}, true) + "/" + name;
  return name;
}

// Assumption 2: the label's MiB, the model's, or 0 (unknown).
std::int64_t gpu_memory_mib(const K8sItem& node, const std::string& model) {
  if (const json* v = node.find({"metadata", "labels", "nvidia.com/gpu.memory"})) {
    const std::int64_t mib =
        node.quantity(*v, "metadata.labels.nvidia.com/gpu.memory", limits::kMaxGpuMemoryMib);
    if (mib == 0) node.fail("metadata.labels.nvidia.com/gpu.memory", "MiB > 0, got 0");
    return mib;
  }
  return slurm_gpu_memory_mib(model);
}

std::int64_t node_gpus(const K8sItem& node) {
  for (const std::string_view where : {"allocatable", "capacity"})
    if (const json* v = node.find({"status", where, kGpu}))
      return node.quantity(*v, "status." + std::string(where) + "." + std::string(kGpu),
                           limits::kMaxClusterGpus);
  return 0;
}

void node_notes(K8sCluster& out, std::size_t gpu_less, const std::vector<std::string>& cordoned,
                const std::map<std::string, int>& assumed) {
  if (gpu_less > 0)
    out.notes.push_back("k8s: skipped " + std::to_string(gpu_less) + " nodes without GPUs");
  for (const auto& [model, count] : assumed)
    out.notes.push_back(
        "k8s: GPU memory of " +
        (model.empty() ? std::string("nodes without a GPU model") : "model " + quote_input(model)) +
        " is not known: assumed 24 GiB on " + std::to_string(count) +
        " nodes (label nvidia.com/gpu.memory absent; edit cluster.yaml)");
  if (!cordoned.empty())
    out.notes.push_back("k8s: " + std::to_string(cordoned.size()) +
                        " nodes were cordoned when dumped, kept as capacity (e.g. " +
                        quote_input(cordoned.front()) + ")");
}

// Assumption 3: one ClusterQueue's GPUs.
std::int64_t queue_gpus(const K8sItem& cq) {
  const json* groups = cq.find({"spec", "resourceGroups"});
  if (!groups) return 0;
  if (!groups->is_array()) cq.fail("spec.resourceGroups", "an array");
  std::int64_t sum = 0;
  for (std::size_t g = 0; g < groups->size(); ++g) {
    const K8sItem group{cq.file, cq.what, (*groups)[g]};
    const std::string at = "spec.resourceGroups[" + std::to_string(g) + "].flavors";
    const json* flavors = group.find({"flavors"});
    if (!flavors) continue;
    if (!flavors->is_array()) cq.fail(at, "an array");
    for (std::size_t f = 0; f < flavors->size(); ++f) {
      const K8sItem flavor{cq.file, cq.what, (*flavors)[f]};
      const std::string fat = at + "[" + std::to_string(f) + "].resources";
      const json* resources = flavor.find({"resources"});
      if (!resources) continue;
      if (!resources->is_array()) cq.fail(fat, "an array");
      for (std::size_t r = 0; r < resources->size(); ++r) {
        const K8sItem res{cq.file, cq.what, (*resources)[r]};
        if (res.string({"name"}, false).value_or("") != kGpu) continue;
        const json* q = res.find({"nominalQuota"});
        if (!q) cq.fail(fat + "[" + std::to_string(r) + "].nominalQuota", "a GPU count");
        sum += cq.quantity(*q, fat + "[" + std::to_string(r) + "].nominalQuota",
                           limits::kMaxQuotaTotal);
        if (sum > limits::kMaxQuotaTotal)
          cq.fail("spec.resourceGroups", "quotas adding up to at most " +
                                             std::to_string(limits::kMaxQuotaTotal) + " GPUs");
      }
    }
  }
  return sum;
}

}  // namespace

K8sCluster read_k8s_nodes(const std::string& path) {
  const json list = read_k8s_list(path, "kubectl get nodes -o json");
  K8sCluster out;
  NodeTally tally;
  std::size_t gpu_less = 0, index = 0;
  std::vector<std::string> cordoned;
  std::map<std::string, int> assumed;
  std::unordered_set<std::string> seen;
  for (const json& obj : k8s_items(list)) {
    const std::string name = object_name(path, obj, index, "Node", false);
    const K8sItem node{
        path, "node " + quote_input(name) + " (item " + std::to_string(index++) + ")", obj};
    if (!seen.insert(name).second) node.fail("metadata.name", "a node listed once");
    const std::int64_t gpus = node_gpus(node);
    if (gpus == 0) {
      ++gpu_less;
      continue;
    }
    if (gpus > kMaxGpusPerNode)
      node.fail("status.allocatable." + std::string(kGpu),
                "at most " + std::to_string(kMaxGpusPerNode) + " GPUs (DeepShare's limit per " +
                    "node), got " + std::to_string(gpus));
    tally.add(SourceLocation{path}, 1, gpus);
    const std::string model =
        node.string({"metadata", "labels", "nvidia.com/gpu.product"}, false).value_or("");
    std::int64_t mib = gpu_memory_mib(node, model);
    if (mib == 0) {
      mib = kDefaultGpuMemoryMib;
      ++assumed[model];
    }
    out.cluster.add_nodes(1, static_cast<int>(gpus), mib, model, TenantId());
    out.cluster.nodes.back().name = name;
    if (const json* u = node.find({"spec", "unschedulable"}); u && *u == true)
      cordoned.push_back(name);
  }
  if (out.cluster.nodes.empty())
    throw InputError(SourceLocation{path},
                     "no node with GPUs (a node's GPUs are its status.allocatable "
                     "nvidia.com/gpu: is NVIDIA's device plugin installed?)");
  node_notes(out, gpu_less, cordoned, assumed);
  return out;
}

K8sQueues read_k8s_queues(const std::string& cq_path, const std::string& lq_path) {
  return k8s_queues(read_k8s_list(cq_path, "kubectl get clusterqueues -o json"), cq_path,
                    read_k8s_list(lq_path, "kubectl get localqueues -A -o json"), lq_path);
}

K8sQueues k8s_queues(const json& cqs, const std::string& cq_path, const json& lqs,
                     const std::string& lq_path) {
  K8sQueues out;
  std::unordered_map<std::string, std::size_t> index_of;
  std::size_t index = 0;
  for (const json& obj : k8s_items(cqs)) {
    const std::string name = object_name(cq_path, obj, index, "ClusterQueue", false);
    const K8sItem cq{
        cq_path, "ClusterQueue " + quote_input(name) + " (item " + std::to_string(index++) + ")",
        obj};
    if (!index_of.emplace(name, out.cluster_queues.size()).second)
      cq.fail("metadata.name", "a ClusterQueue listed once");
    out.cluster_queues.emplace_back(name, queue_gpus(cq));
  }
  std::size_t ambiguous = 0;
  index = 0;
  for (const json& obj : k8s_items(lqs)) {
    const std::string name = object_name(lq_path, obj, index, "LocalQueue", true);
    const K8sItem lq{lq_path,
                     "LocalQueue " + quote_input(name) + " (item " + std::to_string(index++) + ")",
                     obj};
    const std::string cq = *lq.string({"spec", "clusterQueue"}, true);
    if (!index_of.contains(cq))
      lq.fail("spec.clusterQueue", "a ClusterQueue of " + cq_path + ", got " + quote_input(cq));
    const std::string ns = *lq.string({"metadata", "namespace"}, true);
    if (auto [it, fresh] = out.queue_of_namespace.emplace(ns, cq); !fresh && it->second != cq)
      ++ambiguous;
  }
  if (ambiguous > 0)
    out.notes.push_back("k8s: " + std::to_string(ambiguous) +
                        " LocalQueues point a namespace at a second ClusterQueue: each namespace "
                        "is charged to its first one");
  return out;
}

namespace {

// Assumption 4: each ClusterQueue's quota split among its namespaces by GPU time.
std::vector<int> kueue_quotas(const std::vector<std::string>& namespaces,
                              const std::vector<double>& demand, const K8sQueues& q,
                              std::vector<std::string>& notes) {
  std::vector<int> quota(namespaces.size(), 0);
  std::size_t unqueued = 0, split = 0, unused = 0;
  std::int64_t unused_gpus = 0;
  for (const auto& [cq, gpus] : q.cluster_queues) {
    std::vector<std::size_t> members;
    std::vector<double> d;
    for (std::size_t i = 0; i < namespaces.size(); ++i)
      if (const auto it = q.queue_of_namespace.find(namespaces[i]);
          it != q.queue_of_namespace.end() && it->second == cq) {
        members.push_back(i);
        d.push_back(demand[i]);
      }
    if (members.size() > 1) ++split;
    if (members.empty()) {
      ++unused;
      unused_gpus += gpus;
    }
    const std::vector<int> parts =
        members.empty() ? std::vector<int>{} : split_quota(static_cast<int>(gpus), d);
    for (std::size_t k = 0; k < members.size(); ++k) quota[members[k]] = parts[k];
  }
  for (const auto& ns : namespaces) unqueued += q.queue_of_namespace.contains(ns) ? 0 : 1;
  if (split > 0)
    notes.push_back("k8s: " + std::to_string(split) +
                    " ClusterQueues serve several namespaces: each quota split among them by "
                    "their pods' GPU time");
  if (unused > 0)
    notes.push_back("k8s: " + std::to_string(unused) +
                    " ClusterQueues serve no namespace with pods: their quotas (" +
                    std::to_string(unused_gpus) + " GPUs) are not given to any tenant");
  if (unqueued > 0)
    notes.push_back("k8s: " + std::to_string(unqueued) +
                    " namespaces with pods have no LocalQueue: best-effort tenants with quota 0");
  return quota;
}

}  // namespace

K8sTenants k8s_tenants(const std::vector<std::string>& namespaces,
                       const std::vector<double>& demand, const K8sQueues* queues, int total_gpus) {
  K8sTenants out;
  std::vector<int> quota;
  if (queues) {
    out.notes = queues->notes;
    quota = kueue_quotas(namespaces, demand, *queues, out.notes);
  } else {
    quota = split_quota(total_gpus, std::vector<double>(namespaces.size(), 0.0));
    out.notes.push_back("k8s: no Kueue queues given: the " + std::to_string(namespaces.size()) +
                        " namespaces share the " + std::to_string(total_gpus) +
                        " GPUs evenly as quotas (pass --clusterqueues and --localqueues, or "
                        "edit cluster.yaml)");
  }
  for (std::size_t i = 0; i < namespaces.size(); ++i) {
    Tenant t;
    t.id = TenantId(static_cast<std::uint32_t>(i));
    t.name = namespaces[i];
    t.quota_gpus = quota[i];
    t.cls = quota[i] > 0 ? TenantClass::Guaranteed : TenantClass::BestEffort;
    out.tenants.push_back(std::move(t));
  }
  return out;
}

}  // namespace ds
