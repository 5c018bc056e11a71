#include "trace/k8s_pods.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <variant>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/k8s_json.hpp"

namespace ds {
namespace {

using nlohmann::json;

constexpr std::string_view kGpu = "nvidia.com/gpu";
constexpr std::string_view kProduct = "nvidia.com/gpu.product";
constexpr std::int64_t kMaxGpus = limits::kMaxClusterGpus;

// The containers of spec.FIELD (an array of objects; absent: none).
std::vector<const json*> containers(const K8sItem& pod, std::string_view field) {
  const json* list = pod.find({"spec", field});
  std::vector<const json*> out;
  if (!list) return out;
  if (!list->is_array()) pod.fail("spec." + std::string(field), "an array of containers");
  for (const json& c : *list) {
    if (!c.is_object()) pod.fail("spec." + std::string(field), "an array of container objects");
    out.push_back(&c);
  }
  return out;
}

// Assumption 4: one container's GPUs, its limits else its requests.
std::int64_t container_gpus(const K8sItem& pod, const json& c, std::string_view field,
                            std::size_t index) {
  const K8sItem item{pod.file, pod.what, c};
  const std::string at = "spec." + std::string(field) + "[" + std::to_string(index) + "]";
  for (const std::string_view kind : {"limits", "requests"})
    if (const json* v = item.find({"resources", kind, kGpu}))
      return pod.quantity(*v, at + ".resources." + std::string(kind) + "." + std::string(kGpu),
                          kMaxGpus);
  return 0;
}

std::int64_t pod_gpus(const K8sItem& pod) {
  std::int64_t sum = 0, init = 0;
  std::size_t i = 0;
  for (const json* c : containers(pod, "containers")) {
    sum += container_gpus(pod, *c, "containers", i++);
    if (sum > kMaxGpus)
      pod.fail("spec.containers", "GPUs adding up to at most " + std::to_string(kMaxGpus) +
                                      ", got " + std::to_string(sum) + " or more");
  }
  i = 0;
  for (const json* c : containers(pod, "initContainers"))
    init = std::max(init, container_gpus(pod, *c, "initContainers", i++));
  return std::max(sum, init);
}

// Assumption 2: start and end from status and the containers' states (nullopt: not recorded).
std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>> run_times(const K8sItem& pod) {
  std::optional<std::int64_t> start = pod.time({"status", "startTime"}, false), first, last;
  const json* statuses = pod.find({"status", "containerStatuses"});
  if (statuses && !statuses->is_array()) pod.fail("status.containerStatuses", "an array");
  static const json kNone = json::array();
  std::size_t i = 0;
  for (const json& cs : statuses ? *statuses : kNone) {
    const std::string at = "status.containerStatuses[" + std::to_string(i++) + "]";
    const K8sItem c{pod.file, pod.what + " (" + at + ")", cs};
    for (const std::string_view state : {"terminated", "running"})
      if (const auto t = c.time({"state", state, "startedAt"}, false))
        first = std::min(first.value_or(*t), *t);
    if (const auto t = c.time({"state", "terminated", "finishedAt"}, false))
      last = std::max(last.value_or(*t), *t);
  }
  return {start ? start : first, last};
}

// The name of the Job that owns the pod; empty when none does.
std::string owning_job(const K8sItem& pod) {
  const json* owners = pod.find({"metadata", "ownerReferences"});
  if (!owners) return {};
  if (!owners->is_array()) pod.fail("metadata.ownerReferences", "an array");
  for (const json& o : *owners)
    if (o.is_object() && o.value("kind", json()) == "Job" && o.value("name", json()).is_string())
      return o["name"].get<std::string>();
  return {};
}

// Assumption 5's affinity: the models one term's In expressions on kProduct allow (empty: the
// term does not constrain the model).
std::vector<std::string> term_models(const K8sItem& pod, const json& term, const std::string& at) {
  const K8sItem t{pod.file, pod.what, term};
  const json* exprs = t.find({"matchExpressions"});
  if (!exprs) return {};
  if (!exprs->is_array()) pod.fail(at + ".matchExpressions", "an array");
  std::vector<std::string> models;
  for (std::size_t i = 0; i < exprs->size(); ++i) {
    const std::string eat = at + ".matchExpressions[" + std::to_string(i) + "]";
    const K8sItem e{pod.file, pod.what, (*exprs)[i]};
    if (!(*exprs)[i].is_object()) pod.fail(eat, "an object (key, operator, values)");
    if (e.string({"key"}, false).value_or("") != kProduct ||
        e.string({"operator"}, false).value_or("") != "In")
      continue;
    const json* values = e.find({"values"});
    if (!values || !values->is_array() || values->empty())
      pod.fail(eat + ".values", "a non-empty array of GPU models (operator In)");
    for (const json& v : *values) {
      if (!v.is_string() || v.get<std::string>().empty())
        pod.fail(eat + ".values",
                 "GPU models as non-empty strings, got " + quote_input(v.dump(), 40));
      models.push_back(v.get<std::string>());
    }
  }
  return models;
}

// The one model the required node affinity allows; "" with `several` set when it allows
// several, "" alone when it does not constrain the model.
std::string affinity_model(const K8sItem& pod, bool& several) {
  const std::string at =
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  const json* req = pod.find(
      {"spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"});
  if (!req) return {};
  const K8sItem r{pod.file, pod.what, *req};
  const json* terms = r.find({"nodeSelectorTerms"});
  if (!terms) return {};
  if (!terms->is_array()) pod.fail(at + ".nodeSelectorTerms", "an array");
  std::vector<std::string> models;
  for (std::size_t i = 0; i < terms->size(); ++i) {
    const std::string tat = at + ".nodeSelectorTerms[" + std::to_string(i) + "]";
    if (!(*terms)[i].is_object()) pod.fail(tat, "an object (matchExpressions, matchFields)");
    std::vector<std::string> m = term_models(pod, (*terms)[i], tat);
    if (m.empty()) return {};  // this alternative runs on any model
    models.insert(models.end(), m.begin(), m.end());
  }
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  several = models.size() > 1;
  return models.size() == 1 ? models.front() : std::string();
}

// Assumption 5: the required model from the nodeSelector, else the affinity.
std::string required_model(const K8sItem& pod, bool& several) {
  const std::string selected = pod.string({"spec", "nodeSelector", kProduct}, false).value_or("");
  bool any = false;
  const std::string affine = affinity_model(pod, any);
  if (!selected.empty() && !affine.empty() && selected != affine)
    pod.fail("spec.affinity.nodeAffinity", "the GPU model of spec.nodeSelector (" +
                                               quote_input(selected) + "), got " +
                                               quote_input(affine));
  several = selected.empty() && any;
  return selected.empty() ? affine : selected;
}

// One item: the pod, or the reason it is skipped.
std::variant<K8sPod, std::string> read_pod(const std::string& path, const json& obj,
                                           std::size_t index) {
  const std::string item_name = "item " + std::to_string(index);
  const K8sItem first{path, item_name, obj};
  if (!obj.is_object()) first.fail("(the item)", "a Pod object");
  K8sPod p;
  p.ns = *first.string({"metadata", "namespace"}, true);
  const std::string name = *first.string({"metadata", "name"}, true);
  p.name = p.ns + "/" + name;
  const K8sItem pod{path, "pod " + quote_input(p.name) + " (" + item_name + ")", obj};
  p.submit_s = *pod.time({"metadata", "creationTimestamp"}, true);
  p.phase = *pod.string({"status", "phase"}, true);
  if (p.phase == "Pending") return "pending";
  if (p.phase == "Running") return "still running";
  if (p.phase == "Unknown") return "in phase Unknown";
  if (p.phase != "Succeeded" && p.phase != "Failed")
    pod.fail("status.phase",
             "Pending, Running, Succeeded, Failed or Unknown, got " + quote_input(p.phase));
  p.gpus = pod_gpus(pod);
  p.gpu_type = required_model(pod, p.any_of);
  p.node = pod.string({"spec", "nodeName"}, false).value_or("");
  if (const std::string job = owning_job(pod); !job.empty()) p.job = p.ns + "/" + job;
  const auto [start, end] = run_times(pod);
  if (p.gpus == 0) return "no GPUs (CPU-only)";
  if (!start) return "finished without starting";
  if (!end) return "finished without an end time";
  if (*end < *start)
    pod.fail("status.containerStatuses", "an end (finishedAt) not before the start, got an end " +
                                             std::to_string(*start - *end) + " s before it");
  p.start_s = *start;
  p.end_s = *end;
  return p;
}

}  // namespace

K8sPodsRead read_k8s_pods(const K8sList& list) {
  const std::string& path = list.source;
  K8sPodsRead out;
  std::unordered_map<std::string, std::size_t> seen;
  for (const json& obj : k8s_items(list)) {
    const std::size_t index = out.items++;
    auto r = read_pod(path, obj, index);
    if (auto* reason = std::get_if<std::string>(&r)) {
      ++out.skipped[*reason];
      continue;
    }
    K8sPod& p = std::get<K8sPod>(r);
    if (auto [it, fresh] = seen.emplace(p.name, index); !fresh)
      throw InputError(SourceLocation{path},
                       "pod " + quote_input(p.name) + " is listed twice (items " +
                           std::to_string(it->second) + " and " + std::to_string(index) + ")");
    out.pods.push_back(std::move(p));
  }
  return out;
}

}  // namespace ds
