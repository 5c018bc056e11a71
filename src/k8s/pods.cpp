// Pods and Nodes as the DeepShare scheduler reads them (pods.hpp).
#include "k8s/pods.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "k8s/objects.hpp"

namespace ds::k8s {

const json& member(const json& o, const char* key) {
  static const json null;
  if (!o.is_object()) return null;
  auto it = o.find(key);
  return it == o.end() ? null : *it;
}

std::string member_str(const json& o, const char* key) {
  const json& v = member(o, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

bool object_identity(const json& object, std::string& uid, std::string& ns, std::string& name) {
  const json& meta = member(object, "metadata");
  uid = member_str(meta, "uid");
  ns = member_str(meta, "namespace");
  name = member_str(meta, "name");
  return !uid.empty() && !ns.empty() && !name.empty();
}

namespace {

int container_gpus(const json& c) {
  const json& res = member(c, "resources");
  int n = gpu_quantity(member(member(res, "limits"), kGpuResource));
  if (n < 0) n = gpu_quantity(member(member(res, "requests"), kGpuResource));
  return n < 0 ? 0 : n;
}

// "NODE:0,1" -> node and indices; false when malformed.
bool parse_gpus(const std::string& text, std::string& node, std::vector<int>& gpus) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  node = text.substr(0, colon);
  gpus.clear();
  std::stringstream ss(text.substr(colon + 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long g = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || g < 0 || g >= 64) return false;
    gpus.push_back(static_cast<int>(g));
  }
  return !gpus.empty();
}

void parse_decision(const std::string& text, PodView& p) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    if (k == "borrowed") p.decision_borrowed = v == "1";
    if (k == "shared") p.decision_shared = v == "1";
    if (k == "decided") p.decision_ms = std::strtoll(v.c_str(), nullptr, 10);
    if (k == "epoch") p.decision_epoch = std::strtoull(v.c_str(), nullptr, 10);
  }
}

}  // namespace

int gpu_quantity(const json& value) {
  std::string s;
  if (value.is_number_integer()) return value.get<int>() < 0 ? -1 : value.get<int>();
  if (!value.is_string()) return -1;
  s = value.get<std::string>();
  if (s.empty() || s.size() > 6) return -1;
  for (char c : s)
    if (c < '0' || c > '9') return -1;
  return std::atoi(s.c_str());
}

std::optional<PodView> pod_view(const json& pod) {
  const json& meta = member(pod, "metadata");
  const json& spec = member(pod, "spec");
  PodView p;
  if (!object_identity(pod, p.uid, p.ns, p.name)) return std::nullopt;
  p.scheduler = member_str(spec, "schedulerName");
  if (p.scheduler.empty()) p.scheduler = "default-scheduler";
  p.node = member_str(spec, "nodeName");
  p.phase = member_str(member(pod, "status"), "phase");
  p.terminating = member(meta, "deletionTimestamp").is_string();
  const json& gates = member(spec, "schedulingGates");
  p.gated = gates.is_array() && !gates.empty();
  p.rules = node_rules(spec);
  const json& owners = member(meta, "ownerReferences");
  if (owners.is_array())
    for (const auto& o : owners) {
      if (member(o, "controller") != json(true)) continue;
      p.controlled = true;
      if (member_str(o, "kind") == "Job" && member_str(o, "apiVersion") == "batch/v1")
        p.job_uid = member_str(o, "uid");
    }
  const json& containers = member(spec, "containers");
  if (containers.is_array())
    for (const auto& c : containers) p.gpus += container_gpus(c);
  p.requests = pod_requests(spec);
  p.claims = pod_claims(pod);
  p.host_ports = host_ports(spec);
  if (const json& g = member(spec, "terminationGracePeriodSeconds"); g.is_number_integer())
    p.grace_s = std::max<std::int64_t>(0, g.get<std::int64_t>());
  p.created_s = rfc3339_seconds(member_str(meta, "creationTimestamp"));
  p.started_s = rfc3339_seconds(member_str(member(pod, "status"), "startTime"));
  const json& ann = member(meta, "annotations");
  p.gang = member_str(member(meta, "labels"), kGangLabel);
  if (p.gang.empty()) {  // Kueue's plain pod group
    p.gang = member_str(member(meta, "labels"), kKueueGroupLabel);
    p.kueue_group = !p.gang.empty();
  }
  if (const json& size = member(ann, p.gang_size_key()); !p.gang.empty() && !size.is_null()) {
    const int n = gpu_quantity(size);  // a plain whole number, as a quantity of GPUs is
    p.gang_size = n >= 1 && n <= kMaxGangSize ? n : -1;
  }
  if (!p.job_uid.empty()) {
    const json& index = member(ann, kCompletionIndexAnnotation);
    const int i = index.is_string() ? gpu_quantity(index) : -1;  // a plain whole number
    p.completion_index = i;
  }
  // Whole numbers, as a Slurm record's mem= and u= (anything else: not given).
  const auto whole = [&](const char* key, std::int64_t most) -> std::int64_t {
    const json& m = member(ann, key);
    if (!m.is_string()) return 0;
    const std::string& t = m.get_ref<const std::string&>();
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
      return 0;
    const std::int64_t v = std::stoll(t);
    return v <= most ? v : 0;
  };
  p.gpu_memory_mib = whole(kGpuMemoryAnnotation, 100'000'000);
  p.gpu_util = static_cast<int>(whole(kGpuUtilAnnotation, 100));
  if (!parse_gpus(member_str(ann, kGpusAnnotation), p.decision_node, p.decision_gpus)) {
    p.decision_node.clear();
    p.decision_gpus.clear();
  } else {
    parse_decision(member_str(ann, kDecisionAnnotation), p);
  }
  return p;
}

std::optional<NodeView> node_view(const json& node) {
  NodeView n;
  n.name = member_str(member(node, "metadata"), "name");
  if (n.name.empty()) return std::nullopt;
  const json& status = member(node, "status");
  n.gpus = std::max(0, gpu_quantity(member(member(status, "allocatable"), kGpuResource)));
  n.allocatable = node_allocatable(status);
  const json& conds = member(status, "conditions");
  if (conds.is_array())
    for (const auto& c : conds)
      if (member_str(c, "type") == "Ready") n.ready = member_str(c, "status") == "True";
  const json& labels = member(member(node, "metadata"), "labels");
  if (labels.is_object()) {
    auto l = std::make_shared<Labels>();
    for (const auto& [k, v] : labels.items())
      if (v.is_string()) l->emplace(k, v.get<std::string>());
    n.labels = std::move(l);
  }
  const json& u = member(member(node, "spec"), "unschedulable");
  n.cordoned = u.is_boolean() && u.get<bool>();
  return n;
}

std::vector<NodeView> node_views(const std::vector<json>& nodes) {
  std::vector<NodeView> out;
  for (const auto& n : nodes)
    if (auto v = node_view(n)) out.push_back(std::move(*v));
  return out;
}

void add_dra_gpus(std::vector<NodeView>& nodes, const NodeDeviceMap& devices) {
  if (devices.empty()) return;
  for (NodeView& n : nodes)
    if (auto d = devices.find(n.name); n.gpus == 0 && d != devices.end()) {
      n.gpus = static_cast<int>(d->second.devices.size());
      n.dra = true;
      n.shareable = d->second.shareable;
    }
}

const std::vector<NodeView>& NodeReader::read(
    const std::vector<std::shared_ptr<const json>>& nodes) {
  ++cycle_;
  views_.clear();
  for (const auto& o : nodes) {
    Read& r = cache_[o.get()];
    if (!r.object) {
      r.object = o;
      r.view = node_view(*o);
    }
    r.cycle = cycle_;
    if (r.view) views_.push_back(*r.view);
  }
  if (cache_.size() != nodes.size())
    std::erase_if(cache_, [&](const auto& e) { return e.second.cycle != cycle_; });
  return views_;
}

std::string gpus_annotation(const std::string& node, const std::vector<int>& gpus) {
  std::string out = node + ":";
  for (std::size_t i = 0; i < gpus.size(); ++i) out += (i ? "," : "") + std::to_string(gpus[i]);
  return out;
}

std::string decision_annotation(bool borrowed, bool shared, std::int64_t decided_ms,
                                std::uint64_t epoch, int mps_percent, std::int64_t mem_limit_mib) {
  std::string out = std::string("borrowed=") + (borrowed ? "1" : "0") +
                    ",shared=" + (shared ? "1" : "0") + ",decided=" + std::to_string(decided_ms) +
                    ",epoch=" + std::to_string(epoch);
  if (shared && mps_percent > 0)
    out += ",mps=" + std::to_string(mps_percent) + ",memlimit=" + std::to_string(mem_limit_mib);
  return out;
}

}  // namespace ds::k8s
