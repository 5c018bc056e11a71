// How long a pod DeepShare evicts may take to stop (docs/kubernetes.md §8, "Preempt"): the
// Eviction API's deleteOptions.gracePeriodSeconds. A pod asks for its own
// (spec.terminationGracePeriodSeconds); its tenant's grace period bounds it, so that a user
// cannot keep reclaimed GPUs by asking for hours (the API server takes the eviction's value
// over the pod's). A tenant with a longer grace period (time to checkpoint) gets it only
// when its pods ask for that much.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "k8s/pods.hpp"

namespace ds::k8s {

struct GracePeriods {
  std::int64_t default_s = kDefaultGraceSeconds;  // tenants without their own
  std::map<std::string, std::int64_t> by_namespace;

  // The grace period of an eviction of `p`: min(the pod's own, its tenant's).
  [[nodiscard]] std::int64_t for_pod(const PodView& p) const {
    const auto it = by_namespace.find(p.ns);
    const std::int64_t cap = it == by_namespace.end() ? default_s : it->second;
    return p.grace_s < cap ? p.grace_s : cap;
  }
};

}  // namespace ds::k8s
