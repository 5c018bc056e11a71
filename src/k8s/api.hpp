// The calls DeepShare's Kubernetes driver makes, each one request with a typed outcome.
// Thin on purpose: the body comes from objects.hpp, the error from the API (errors.hpp).
#pragma once

#include <optional>
#include <string>

#include "k8s/client.hpp"
#include "k8s/objects.hpp"

namespace ds::k8s {

// pods/binding: 201 once; a pod already bound is a 409 Conflict naming its node. The
// annotations are set on the pod with the binding (one update).
Result<json> bind_pod(Client& c, const std::string& ns, const std::string& pod,
                      const std::string& node,
                      const std::map<std::string, std::string>& annotations = {});
// pods/eviction: 201 (the pod now carries a deletionTimestamp); 429 when a
// PodDisruptionBudget forbids it; 404 when the pod is gone already.
Result<json> evict_pod(Client& c, const std::string& ns, const std::string& pod,
                       std::optional<std::int64_t> grace_seconds);
Result<json> create_lease(Client& c, const std::string& ns, const std::string& name,
                          const LeaseSpec& spec);
// PUT with the resourceVersion last read: 409 Conflict when another holder wrote it since.
Result<json> update_lease(Client& c, const std::string& ns, const std::string& name,
                          const LeaseSpec& spec, const std::string& resource_version);
Result<json> create_event(Client& c, const EventSpec& spec);
// pods/status: PodScheduled=False, reason Unschedulable, with `message` (what kube-scheduler
// writes for a pod it cannot place; `kubectl describe pod` shows it).
Result<json> mark_unschedulable(Client& c, const std::string& ns, const std::string& pod,
                                const std::string& message);
// GET /apis/GROUP (discovery): the version the API server prefers for the group ("v1beta2");
// nullopt when it serves no such group (404: its CRDs are not installed).
Result<std::optional<std::string>> preferred_version(Client& c, const std::string& group);

}  // namespace ds::k8s
