// Paths, queries and the request bodies DeepShare sends: Binding, Eviction, Lease, Event.
//
// Only what the API documents; no field is invented. Times are passed in (the caller's
// clock), so bodies are deterministic for a given input.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ds::k8s {

using nlohmann::json;

// Percent-encodes one query value (RFC 3986 unreserved characters stay).
std::string url_encode(std::string_view value);

// "?a=1&b=x%3Dy": pairs with an empty value are left out.
std::string query(const std::vector<std::pair<std::string, std::string>>& params);

// "/api/v1[/namespaces/NS]/RESOURCE[/NAME][/SUBRESOURCE]" for the core group, or
// "/apis/GROUP/VERSION/..." otherwise (group "" = core, version then "v1").
std::string resource_path(std::string_view group, std::string_view version,
                          std::string_view resource, std::string_view ns = "",
                          std::string_view name = "", std::string_view subresource = "");
inline std::string pods_path(std::string_view ns, std::string_view name = "",
                             std::string_view sub = "") {
  return resource_path("", "v1", "pods", ns, name, sub);
}
inline std::string nodes_path(std::string_view name = "") {
  return resource_path("", "v1", "nodes", "", name);
}
inline std::string leases_path(std::string_view ns, std::string_view name = "") {
  return resource_path("coordination.k8s.io", "v1", "leases", ns, name);
}

// RFC 3339 with microseconds in UTC ("2026-12-01T19:40:00.123456Z"): metav1.MicroTime.
std::string micro_time(std::chrono::system_clock::time_point t);

// "2026-12-01T21:00:05Z" (or with a fraction) as Unix seconds; -1 when not RFC 3339
// (metav1.Time, whole seconds: creationTimestamp, startTime).
std::int64_t rfc3339_seconds(const std::string& text);

// POST pods/NAME/binding: places the pod on the node (once; a second one is a 409). The
// API server merges the Binding's annotations into the pod in the same update, so a
// scheduler's record of its decision lands with the binding or not at all.
json binding(std::string_view pod, std::string_view node,
             const std::map<std::string, std::string>& annotations = {});

// POST pods/NAME/eviction: the API-side preemption (PodDisruptionBudgets apply; 429 when
// one forbids it). grace: the pod's termination grace period, or its own when absent.
json eviction(std::string_view ns, std::string_view pod, std::optional<std::int64_t> grace_seconds);

struct LeaseSpec {
  std::string holder;  // holderIdentity
  std::int64_t duration_seconds = 15;
  std::chrono::system_clock::time_point acquire_time;
  std::chrono::system_clock::time_point renew_time;
  std::int64_t transitions = 0;  // leaseTransitions
};
// A coordination.k8s.io/v1 Lease; with resource_version set, a PUT of it fails with 409
// Conflict when someone else wrote the Lease since (the fencing of leader election).
json lease(std::string_view ns, std::string_view name, const LeaseSpec& spec,
           std::string_view resource_version = "");

struct EventSpec {
  json regarding;      // {apiVersion, kind, namespace, name, uid} of the object concerned
  std::string type;    // "Normal" | "Warning"
  std::string reason;  // "FailedScheduling", "Scheduled", "Preempted"
  std::string action;  // "Scheduling", "Binding", "Preempting"
  std::string note;    // what a user reads in `kubectl describe`
  std::string controller = "deepshare";  // reportingController
  std::string instance;                  // reportingInstance (e.g. the leader's identity)
  std::chrono::system_clock::time_point time;
};
// An events.k8s.io/v1 Event (kube-scheduler writes the same kind), named NAME.<hex time>.
json event(const EventSpec& spec);
std::string events_path(std::string_view ns);

}  // namespace ds::k8s
