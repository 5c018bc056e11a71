// What a node's kubelet admits besides GPUs (docs/kubernetes.md §8, "Room on a node"): pure
// functions of the API's JSON, no I/O. DeepShare binds pods itself, so nothing else checks
// that a node still has room for a pod's CPU and memory requests; the kubelet does, at
// admission: a pod whose requests do not fit the node's allocatable beside the pods already
// there fails at once (status Failed, reason OutOfcpu / OutOfmemory / OutOfpods:
// pkg/kubelet/lifecycle/predicate.go, generalFilter -> AdmissionCheck in
// pkg/scheduler/eventhandlers.go: noderesources.Fits and nodeports.Fits, k8s.io/kubernetes
// v1.37.2). Its Job then makes a replacement, which would be
// bound to the same node again. So the scheduler counts, per node, the requests of the pods
// bound there and of starts it has decided but not bound yet, against the node's allocatable,
// and the host ports they bind (the kubelet refuses a pod whose hostPort is taken there).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ds::k8s {

using nlohmann::json;

// A Kubernetes quantity ("500m", "2", "1.5", "64Gi", "1e9", "128M") in thousandths of its
// unit, rounded up; -1 when `value` is no quantity (or too large).
std::int64_t quantity_milli(const json& value);

// CPU (millicores), memory (bytes) and a pod count: what pods request of a node, or what a
// node allocates (0 there: unknown, no limit).
struct Requests {
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t pods = 0;
  Requests& operator+=(const Requests& o) {
    cpu_milli += o.cpu_milli;
    memory_bytes += o.memory_bytes;
    pods += o.pods;
    return *this;
  }
  [[nodiscard]] Requests times(std::int64_t k) const {
    return {cpu_milli * k, memory_bytes * k, pods * k};
  }
};

// A pod's effective requests (as the kubelet counts them): the sum over its containers of
// resources.requests (limits where a request is absent: the API defaults one from the
// other), or an init container's when larger (they run one at a time, before the others),
// plus spec.overhead; pods = 1.
Requests pod_requests(const json& pod_spec);
// A node's status.allocatable cpu, memory and pods.
Requests node_allocatable(const json& node_status);

// Why `need` does not fit a node that allocates `alloc` beside `held` ("" when it does).
std::string room_refusal(const Requests& alloc, const Requests& held, const Requests& need);

// The host ports a pod's containers bind on its node ("TCP/0.0.0.0/8080": protocol, host IP,
// port; TCP and 0.0.0.0 when not written), as the kubelet's admission and the scheduler's
// NodePorts plugin read spec.containers[].ports[].hostPort.
std::vector<std::string> host_ports(const json& pod_spec);
// The first of `want` that one of `used` (ports already bound on a node) conflicts with: the
// same protocol and port, on the same host IP or either on 0.0.0.0; "" when none does.
std::string port_conflict(const std::vector<std::string>& used,
                          const std::vector<std::string>& want);

}  // namespace ds::k8s
