#include "k8s/dra.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "k8s/objects.hpp"
#include "k8s/pods.hpp"

namespace ds::k8s {

namespace {

constexpr int kMaxClaimGpus = 1024;

std::int64_t int_or(const json& v, std::int64_t fallback) {
  return v.is_number_integer() ? v.get<std::int64_t>() : fallback;
}

bool non_empty(const json& v) {
  return !v.is_null() && !v.empty();
}

// Why DeepShare cannot allocate request `r` ("" when it can), and its count.
std::string read_request(const json& r, const DraConfig& config, int& count) {
  const std::string name = member_str(r, "name");
  const std::string what = "request " + (name.empty() ? std::string("(unnamed)") : name);
  if (non_empty(member(r, "firstAvailable")))
    return what + " lists alternatives (firstAvailable): DeepShare allocates GPUs by count only";
  const json& e = member(r, "exactly");
  if (!e.is_object()) return what + " names no device class (spec.devices.requests[].exactly)";
  const std::string cls = member_str(e, "deviceClassName");
  if (cls != config.device_class)
    return what + " asks for devices of DeviceClass " + (cls.empty() ? "(none)" : cls) +
           ": DeepShare allocates only GPUs of DeviceClass " + config.device_class;
  const std::string mode = member_str(e, "allocationMode");
  if (!mode.empty() && mode != "ExactCount")
    return what + " asks for allocationMode " + mode +
           ": DeepShare allocates a count of GPUs (ExactCount)";
  if (non_empty(member(e, "selectors")))
    return what + " has selectors: DeepShare allocates GPUs by count only, without selectors";
  if (member(e, "adminAccess") == json(true))
    return what + " asks for admin access: not through DeepShare";
  if (non_empty(member(e, "capacity")))
    return what + " asks for device capacity: DeepShare allocates whole GPUs";
  const std::int64_t n = int_or(member(e, "count"), 1);
  if (n < 1 || n > kMaxClaimGpus) return what + " asks for " + std::to_string(n) + " GPUs";
  count = static_cast<int>(n);
  return "";
}

}  // namespace

int NodeDevices::index_of(const std::string& device) const {
  auto it = std::find(devices.begin(), devices.end(), device);
  return it == devices.end() ? -1 : static_cast<int>(it - devices.begin());
}

NodeDeviceMap read_slices(const std::vector<json>& slices, const std::string& driver) {
  // The newest generation of each pool.
  std::map<std::string, std::int64_t> newest;
  for (const json& s : slices) {
    const json& spec = member(s, "spec");
    if (member_str(spec, "driver") != driver) continue;
    const json& pool = member(spec, "pool");
    auto& g = newest.try_emplace(member_str(pool, "name"), 0).first->second;
    g = std::max(g, int_or(member(pool, "generation"), 0));
  }
  struct Dev {
    std::int64_t index;
    std::string name;
  };
  std::unordered_map<std::string, std::vector<Dev>> found;
  std::unordered_map<std::string, std::string> pools;
  std::unordered_map<std::string, bool> single;  // a device of the node allows one allocation
  for (const json& s : slices) {
    const json& spec = member(s, "spec");
    if (member_str(spec, "driver") != driver) continue;
    const std::string node = member_str(spec, "nodeName");
    const json& pool = member(spec, "pool");
    const std::string pool_name = member_str(pool, "name");
    if (node.empty() || pool_name.empty() ||
        int_or(member(pool, "generation"), 0) != newest[pool_name])
      continue;
    pools[node] = pool_name;
    const json& devices = member(spec, "devices");
    if (!devices.is_array()) continue;
    for (const json& d : devices) {
      const std::string name = member_str(d, "name");
      if (name.empty()) continue;
      if (member(d, "allowMultipleAllocations") != json(true)) single[node] = true;
      const json& index = member(member(member(d, "attributes"), "index"), "int");
      found[node].push_back({int_or(index, std::numeric_limits<std::int64_t>::max()), name});
    }
  }
  NodeDeviceMap out;
  for (auto& [node, devs] : found) {
    std::sort(devs.begin(), devs.end(), [](const Dev& a, const Dev& b) {
      return std::tie(a.index, a.name) < std::tie(b.index, b.name);
    });
    NodeDevices& n = out[node];
    n.pool = pools[node];
    n.shareable = !single[node];
    for (const Dev& d : devs) n.devices.push_back(d.name);
  }
  return out;
}

ClaimAsk read_claim(const json& claim, const DraConfig& config) {
  ClaimAsk a;
  a.uid = member_str(member(claim, "metadata"), "uid");
  const json& devices = member(member(claim, "spec"), "devices");
  const json& requests = member(devices, "requests");
  if (!requests.is_array() || requests.empty()) {
    a.refusal = "the claim asks for no device";
  } else {
    for (const json& r : requests) {
      int n = 0;
      if (std::string why = read_request(r, config, n); !why.empty()) {
        a.refusal = why;
        break;
      }
      a.requests.push_back({member_str(r, "name"), n});
      a.gpus += n;
    }
  }
  if (a.refusal.empty() && non_empty(member(devices, "constraints")))
    a.refusal = "the claim has constraints: DeepShare allocates GPUs by count only";
  if (const json& cfg = member(devices, "config"); cfg.is_array())
    for (const json& c : cfg) {
      json e = c;
      e["source"] = "FromClaim";
      a.config.push_back(std::move(e));
    }
  const json& status = member(claim, "status");
  const json& allocation = member(status, "allocation");
  a.allocated = allocation.is_object();
  if (const json& results = member(member(allocation, "devices"), "results"); results.is_array())
    for (const json& r : results)
      if (member_str(r, "driver") == config.driver) a.devices.push_back(member_str(r, "device"));
  if (const json& rf = member(status, "reservedFor"); rf.is_array())
    for (const json& r : rf) a.reserved_for.push_back(member_str(r, "uid"));
  if (!a.refusal.empty()) a.gpus = 0;
  return a;
}

std::vector<PodClaim> pod_claims(const json& pod) {
  std::vector<PodClaim> out;
  const json& claims = member(member(pod, "spec"), "resourceClaims");
  if (!claims.is_array()) return out;
  const json& statuses = member(member(pod, "status"), "resourceClaimStatuses");
  for (const json& c : claims) {
    PodClaim p;
    p.name = member_str(c, "name");
    p.claim = member_str(c, "resourceClaimName");
    p.templated = p.claim.empty();
    if (p.templated && statuses.is_array())
      for (const json& s : statuses)
        if (member_str(s, "name") == p.name) p.claim = member_str(s, "resourceClaimName");
    out.push_back(std::move(p));
  }
  return out;
}

json claim_allocation(const ClaimAsk& ask, const std::string& driver, const NodeDevices& devices,
                      const std::string& node, const std::vector<int>& gpus) {
  json results = json::array();
  std::size_t next = 0;
  for (const auto& r : ask.requests)
    for (int k = 0; k < r.count && next < gpus.size(); ++k, ++next) {
      const auto i = static_cast<std::size_t>(gpus[next]);
      json result = {{"request", r.name},
                     {"driver", driver},
                     {"pool", devices.pool},
                     {"device", i < devices.devices.size() ? devices.devices[i] : ""}};
      if (devices.shareable && !ask.uid.empty()) result["shareID"] = ask.uid;
      results.push_back(std::move(result));
    }
  json a = {
      {"devices", {{"results", std::move(results)}}},
      {"nodeSelector",
       {{"nodeSelectorTerms",
         json::array({{{"matchFields", json::array({{{"key", "metadata.name"},
                                                     {"operator", "In"},
                                                     {"values", json::array({node})}}})}}})}}}};
  if (!ask.config.empty()) a["devices"]["config"] = ask.config;
  return a;
}

void ClaimIndex::update(const std::vector<std::shared_ptr<const json>>& claims,
                        const DraConfig& config) {
  std::unordered_map<std::string, Cached> next;
  next.reserve(claims.size());
  for (const auto& o : claims) {
    const json& meta = member(*o, "metadata");
    const std::string key = member_str(meta, "namespace") + "/" + member_str(meta, "name");
    auto old = claims_.find(key);
    if (old != claims_.end() && old->second.object == o) {
      next.emplace(key, std::move(old->second));
      continue;
    }
    next.emplace(key, Cached{o, read_claim(*o, config)});
  }
  claims_ = std::move(next);
}

const ClaimAsk* ClaimIndex::find(const std::string& ns, const std::string& name) const {
  auto it = claims_.find(ns + "/" + name);
  return it == claims_.end() ? nullptr : &it->second.ask;
}

namespace {

ApiError conflict(const std::string& path, const std::string& message) {
  ApiError e;
  e.kind = ErrorKind::Api;
  e.http_status = 409;
  e.reason = "Conflict";
  e.message = message;
  e.method = "PUT";
  e.path = path;
  return e;
}

// `allocation` with the config of the DeviceClasses the claim's requests name first (source
// FromClass, for those requests), as kube-scheduler's allocator writes it; a string (why) when
// a class cannot be read.
json with_class_config(Client& c, const json& claim, const json& allocation) {
  std::map<std::string, json> requests;  // class -> its requests' names
  const json& reqs = member(member(member(claim, "spec"), "devices"), "requests");
  if (reqs.is_array())
    for (const json& r : reqs) {
      json& names =
          requests.try_emplace(member_str(member(r, "exactly"), "deviceClassName"), json::array())
              .first->second;
      names.push_back(member_str(r, "name"));
    }
  json config = json::array();
  for (const auto& [cls, names] : requests) {
    if (cls.empty()) continue;
    auto got = c.get(resource_path(kDraGroup, kDraVersion, "deviceclasses", "", cls));
    if (!got) return "DeviceClass " + cls + ": " + got.error().str();
    const json& cfg = member(member(got.value(), "spec"), "config");
    if (cfg.is_array())
      for (const json& e : cfg)
        config.push_back(
            {{"source", "FromClass"}, {"requests", names}, {"opaque", member(e, "opaque")}});
  }
  if (config.empty()) return allocation;
  json out = allocation;
  if (const json& own = member(member(allocation, "devices"), "config"); own.is_array())
    for (const json& e : own) config.push_back(e);
  out["devices"]["config"] = std::move(config);
  return out;
}

}  // namespace

Result<json> allocate_claim(Client& c, const std::string& ns, const std::string& name,
                            const json& allocation_in, const std::string& pod,
                            const std::string& pod_uid) {
  const std::string path = resource_path(kDraGroup, kDraVersion, "resourceclaims", ns, name);
  auto got = c.get(path);
  if (!got) return got.error();
  json claim = std::move(got).value();
  json allocation = with_class_config(c, claim, allocation_in);
  if (!allocation.is_object()) return conflict(path, allocation.get<std::string>());
  if (!member(member(claim, "metadata"), "deletionTimestamp").is_null())
    return conflict(path, "resourceclaim " + ns + "/" + name + " is being deleted");
  json& status = claim["status"];
  if (!status.is_object()) status = json::object();
  const json& reserved = member(status, "reservedFor");
  bool ours = false;
  if (reserved.is_array())
    for (const json& r : reserved) {
      if (member_str(r, "uid") != pod_uid)
        return conflict(path, "resourceclaim " + ns + "/" + name + " is in use by " +
                                  member_str(r, "resource") + " " + member_str(r, "name"));
      ours = true;
    }
  if (status.contains("allocation") && !status["allocation"].is_null()) {
    if (ours && status["allocation"] == allocation) return claim;  // done in an earlier attempt
    // (Reserved for another pod: refused above.) Ours from an attempt whose binding did not take,
    // or nobody's: cleared first (an allocation is immutable once set).
    status.erase("allocation");
    status.erase("reservedFor");
    auto cleared = c.put(path + "/status", claim);
    if (!cleared) return cleared.error();
    claim = std::move(cleared).value();
  }
  json& finalizers = claim["metadata"]["finalizers"];
  if (!finalizers.is_array()) finalizers = json::array();
  if (std::find(finalizers.begin(), finalizers.end(), json(kClaimFinalizer)) == finalizers.end()) {
    finalizers.push_back(kClaimFinalizer);
    auto updated = c.put(path, claim);
    if (!updated) return updated.error();
    claim = std::move(updated).value();
  }
  claim["status"]["allocation"] = allocation;
  claim["status"]["reservedFor"] =
      json::array({{{"resource", "pods"}, {"name", pod}, {"uid", pod_uid}}});
  return c.put(path + "/status", claim);
}

Result<json> allocate_claims(Client& c, const std::string& ns, const std::string& pod,
                             const std::string& pod_uid, const std::vector<ClaimWrite>& claims) {
  json last;
  for (const ClaimWrite& w : claims) {
    auto r = allocate_claim(c, ns, w.name, w.allocation, pod, pod_uid);
    if (!r) return r.error();
    last = std::move(r).value();
  }
  return last;
}

}  // namespace ds::k8s
