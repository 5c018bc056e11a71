#include "replay/k8s_objects.hpp"

#include "core/error.hpp"

namespace ds::k8s {

Scheduler parse_scheduler(std::string_view name) {
  if (name == "default") return Scheduler::Default;
  if (name == "kueue") return Scheduler::Kueue;
  if (name == "deepshare") return Scheduler::DeepShare;
  throw InputError("--scheduler: '" + std::string(name) + "' is not default, kueue or deepshare");
}

const char* scheduler_name(Scheduler s) {
  switch (s) {
    case Scheduler::Default:
      return "default";
    case Scheduler::Kueue:
      return "kueue";
    case Scheduler::DeepShare:
      return "deepshare";
  }
  return "?";
}

std::string dns_label(std::string_view text, std::size_t max) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max) break;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "x" : out;
}

json job(const JobRequest& r) {
  const std::string gpus = std::to_string(r.gpus);
  const json labels = {{kReplayLabel, r.run_id}, {kTraceJobLabel, dns_label(r.trace_job)}};
  json container = {
      {"name", "train"},
      {"image", "registry.invalid/deepshare/train:1"},
      {"resources",
       {{"requests", {{"nvidia.com/gpu", gpus}}}, {"limits", {{"nvidia.com/gpu", gpus}}}}}};
  json pod_spec = {{"restartPolicy", "Never"},
                   {"terminationGracePeriodSeconds", 0},
                   {"containers", json::array({container})}};
  if (r.scheduler == Scheduler::DeepShare) pod_spec["schedulerName"] = "deepshare";
  json meta = {{"name", r.name}, {"namespace", r.ns}, {"labels", labels}};
  json spec = {
      {"parallelism", 1},
      {"completions", 1},
      {"backoffLimit", 100},  // in case a preempted run is counted a failure anyway
      {"podFailurePolicy",
       {{"rules",
         json::array({{{"action", "Ignore"},
                       {"onPodConditions", json::array({{{"type", "DisruptionTarget"}}})}}})}}},
      {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod_spec}}}};
  if (r.scheduler == Scheduler::Kueue) {
    meta["labels"][kQueueNameLabel] = r.queue;
    spec["suspend"] = true;
  }
  return {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", meta}, {"spec", spec}};
}

json namespace_object(const std::string& name, const std::string& run_id) {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", name}, {"labels", {{kReplayLabel, run_id}}}}}};
}

json resource_flavor(const KueueSetup& s) {
  json spec = json::object();
  if (!s.flavor_node_labels.empty()) spec["nodeLabels"] = s.flavor_node_labels;
  if (!s.flavor_tolerations.empty()) spec["tolerations"] = s.flavor_tolerations;
  return {{"apiVersion", kKueueGroupVersion},
          {"kind", "ResourceFlavor"},
          {"metadata", {{"name", s.flavor}}},
          {"spec", spec}};
}

json cluster_queue(const KueueSetup& s, const KueueQueue& q) {
  const json quota = {{"name", "nvidia.com/gpu"}, {"nominalQuota", q.nominal_gpus}};
  return {{"apiVersion", kKueueGroupVersion},
          {"kind", "ClusterQueue"},
          {"metadata", {{"name", q.name}}},
          {"spec",
           {{"cohortName", s.cohort},
            {"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", q.ns}}}}},
            {"queueingStrategy", "BestEffortFIFO"},
            {"resourceGroups",
             json::array({{{"coveredResources", json::array({"nvidia.com/gpu"})},
                           {"flavors", json::array({{{"name", s.flavor},
                                                     {"resources", json::array({quota})}}})}}})},
            {"preemption",
             {{"reclaimWithinCohort", "Any"},
              {"withinClusterQueue", "LowerPriority"},
              {"borrowWithinCohort", {{"policy", "Never"}}}}}}}};
}

json local_queue(const KueueQueue& q) {
  return {{"apiVersion", kKueueGroupVersion},
          {"kind", "LocalQueue"},
          {"metadata", {{"name", q.name}, {"namespace", q.ns}}},
          {"spec", {{"clusterQueue", q.name}}}};
}

}  // namespace ds::k8s
