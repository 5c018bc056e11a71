// GPUs as Dynamic Resource Allocation devices (resource.k8s.io/v1; docs/kubernetes.md §8,
// "GPUs as DRA devices"). A GPU driver publishes each node's GPUs as devices in ResourceSlices;
// a pod asks for them through ResourceClaims (its own, made from a ResourceClaimTemplate by
// the resource-claim controller, or one named in its spec); the scheduler of the pod chooses
// the devices and writes them into the claim's status.allocation, reserves the claim for the
// pod (status.reservedFor) and then binds the pod: what kube-scheduler's DynamicResources
// plugin does (pkg/scheduler/framework/plugins/dynamicresources, bindClaim, in
// k8s.io/kubernetes v1.37.2). For DeepShare GPU i of a node is the node's i-th device of the
// GPU driver (by its `index` attribute, then its name), so the claim names the very GPUs the
// policy chose and `kubectl get resourceclaim -o yaml` shows them.
//
// What DeepShare allocates: requests of its GPU DeviceClass by count (allocationMode
// ExactCount). Anything else it cannot honour (another class, allocationMode All,
// selectors, constraints, alternatives (firstAvailable), admin access, capacity) makes the
// claim refused with the reason, never allocated wrongly; so does a claim that is already
// allocated to or reserved for another pod (shared claims are not supported).
// Pure functions of the API's JSON plus the one write (allocate_claim); no other I/O.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "k8s/client.hpp"

namespace ds::k8s {

using nlohmann::json;

inline constexpr const char* kDraGroup = "resource.k8s.io";
inline constexpr const char* kDraVersion = "v1";
// The finalizer a scheduler adds before it allocates a claim (resourceapi.Finalizer); the
// resource-claim controller removes it with the allocation once no pod uses the claim.
inline constexpr const char* kClaimFinalizer = "resource.kubernetes.io/delete-protection";

struct DraConfig {
  std::string driver = "gpu.nvidia.com";        // whose devices are GPUs
  std::string device_class = "gpu.nvidia.com";  // the DeviceClass a GPU request names
};

// One node's GPUs as its driver publishes them: DeepShare's GPU i is devices[i].
struct NodeDevices {
  std::string pool;
  std::vector<std::string> devices;
  // Every device allows several allocations (allowMultipleAllocations: DRAConsumableCapacity,
  // beta and on since 1.36): two claims may hold one GPU, each with its own shareID (MPS pairs).
  bool shareable = false;
  // The GPU index of `device` (-1: not one of this node's).
  [[nodiscard]] int index_of(const std::string& device) const;
};

using NodeDeviceMap = std::unordered_map<std::string, NodeDevices>;

// node -> its GPUs, from the driver's ResourceSlices (node-local ones: spec.nodeName), the
// newest generation of each pool only (a driver replacing its slices publishes a higher one).
NodeDeviceMap read_slices(const std::vector<json>& slices, const std::string& driver);

// What one claim asks for, as DeepShare can allocate it.
struct ClaimAsk {
  struct Request {
    std::string name;
    int count = 0;
  };
  std::vector<Request> requests;
  int gpus = 0;
  std::string uid;                   // the claim's (an allocation's shareID on a shareable device)
  json config = json::array();       // spec.devices.config, as allocation config (source FromClaim)
  std::string refusal;               // why DeepShare cannot allocate it ("": it can)
  bool allocated = false;            // status.allocation is set
  std::vector<std::string> devices;  // its allocation's devices of the GPU driver
  std::vector<std::string> reserved_for;  // status.reservedFor's UIDs
};
ClaimAsk read_claim(const json& claim, const DraConfig& config);

// A pod's claim (spec.resourceClaims), resolved to its ResourceClaim's name: given in the spec
// (resourceClaimName) or, for a template's, the one status.resourceClaimStatuses names ("" until
// the resource-claim controller has made it).
struct PodClaim {
  std::string name;   // the pod's name for it
  std::string claim;  // the ResourceClaim's name in the pod's namespace
  bool templated = false;
};
std::vector<PodClaim> pod_claims(const json& pod);

// The allocation of `ask` on `node`: its requests take `gpus` (GPU indices on the node) in
// order, each index naming the node's device of that position (with the claim's UID as the
// shareID on a shareable node); the node is the selector.
json claim_allocation(const ClaimAsk& ask, const std::string& driver, const NodeDevices& devices,
                      const std::string& node, const std::vector<int>& gpus);

// The claims of the last update (ResourceClaims, all namespaces), by "NS/NAME", each read once.
class ClaimIndex {
 public:
  void update(const std::vector<std::shared_ptr<const json>>& claims, const DraConfig& config);
  [[nodiscard]] const ClaimAsk* find(const std::string& ns, const std::string& name) const;

 private:
  struct Cached {
    std::shared_ptr<const json> object;
    ClaimAsk ask;
  };
  std::unordered_map<std::string, Cached> claims_;
};

// Allocates claim NS/NAME to pod (NAME, UID) as kube-scheduler's bindClaim does: reads the
// claim, adds the finalizer, writes status.allocation and reservedFor in one status update (with
// the resourceVersion read: a write in between is a 409). The configuration of the
// DeviceClasses its requests name comes first in the allocation's config (source FromClass,
// as kube-scheduler's allocator copies it: e.g. a GPU driver's MPS sharing settings), read
// here. An allocation of this pod's from an
// earlier attempt on other devices (a binding that did not take) is cleared first; a claim
// being deleted, or allocated to or reserved for another pod, is an error (409 Conflict).
Result<json> allocate_claim(Client& c, const std::string& ns, const std::string& name,
                            const json& allocation, const std::string& pod,
                            const std::string& pod_uid);

// A claim of a pod to allocate before it is bound.
struct ClaimWrite {
  std::string name;  // the ResourceClaim's, in the pod's namespace
  json allocation;   // claim_allocation()
};
// allocate_claim() for each in order; the first error stops (the pod is then not bound).
Result<json> allocate_claims(Client& c, const std::string& ns, const std::string& pod,
                             const std::string& pod_uid, const std::vector<ClaimWrite>& claims);

}  // namespace ds::k8s
