// Pods and Nodes as the DeepShare scheduler reads them (`deepshare k8s run`,
// docs/kubernetes.md §8): pure functions of the API's JSON, no I/O, so that the translation is
// tested without a server (src/k8s/pods_test.cpp) and is the same in every cycle.
//
//  - a pod's GPUs: the sum over its containers of limits["nvidia.com/gpu"] (requests when no
//    limit: the API requires them equal for extended resources); init containers are not
//    counted (whole-GPU placement only: a pod holds its GPUs for its whole life); a pod that
//    asks for GPUs through DRA claims (dra.hpp) has their count added by the adapter;
//  - its state: bound (spec.nodeName set), terminating (metadata.deletionTimestamp), ended
//    (status.phase Succeeded or Failed), scheduling gates (spec.schedulingGates);
//  - DeepShare's decision of its current placement, written by the scheduler before it binds
//    (annotations deepshare.io/gpus "NODE:0,1" and deepshare.io/decision
//    "borrowed=0,shared=0,decided=MS,epoch=N", N the leader's epoch: leader.hpp); a bound pod
//    carrying them is adopted with them by a restarted scheduler;
//  - its gang, when it is one pod of a job placed all-or-nothing (groups.hpp): label
//    deepshare.io/gang NAME (within its namespace) and annotation deepshare.io/gang-size N, or
//    else Kueue's plain pod group (label kueue.x-k8s.io/pod-group-name, annotation
//    kueue.x-k8s.io/pod-group-total-count), so that a Kueue site's pod groups are gangs as
//    they are written; or else, for a pod of an Indexed Job that runs all its pods together
//    or of a Job of one pod, its Job (jobs.hpp: the adapter fills job_gang in from the Job);
//    a pod of any other Job is one of its work items (jobs.hpp), an Indexed Job's by its
//    annotation batch.kubernetes.io/job-completion-index;
//  - where it may run: its nodeSelector and required node affinity (node_rules.hpp);
//  - a node: allocatable nvidia.com/gpu, usable = Ready and not cordoned (spec.unschedulable),
//    its labels.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "k8s/dra.hpp"
#include "k8s/node_room.hpp"
#include "k8s/node_rules.hpp"

namespace ds::k8s {

using nlohmann::json;

inline constexpr const char* kGpuResource = "nvidia.com/gpu";
inline constexpr const char* kGpusAnnotation = "deepshare.io/gpus";
inline constexpr const char* kDecisionAnnotation = "deepshare.io/decision";
// The GPU memory (MiB per GPU) a pod declares it uses: what MPS pairing checks (as the
// memory field of a Slurm job's DeepShare record); the user's to write.
inline constexpr const char* kGpuMemoryAnnotation = "deepshare.io/gpu-memory";
// Its GPU utilization (percent, 1-100) alone: what the interference model predicts a pair's
// slowdown from (the util field of a Slurm job's record); the user's to write.
inline constexpr const char* kGpuUtilAnnotation = "deepshare.io/gpu-util";
inline constexpr const char* kGangLabel = "deepshare.io/gang";
inline constexpr const char* kGangSizeAnnotation = "deepshare.io/gang-size";
inline constexpr int kMaxGangSize = 1024;
inline constexpr const char* kKueueGroupLabel = "kueue.x-k8s.io/pod-group-name";
inline constexpr const char* kKueueGroupCountAnnotation = "kueue.x-k8s.io/pod-group-total-count";
inline constexpr const char* kCompletionIndexAnnotation =
    "batch.kubernetes.io/job-completion-index";
inline constexpr std::int64_t kDefaultGraceSeconds = 30;  // the API's terminationGracePeriodSeconds

struct PodView {
  std::string uid, ns, name;
  std::string scheduler;  // spec.schedulerName ("default-scheduler" when absent)
  std::string node;       // spec.nodeName ("" = not bound)
  std::string phase;      // status.phase
  int gpus = 0;           // nvidia.com/gpu asked for (whole GPUs)
  Requests requests;      // CPU, memory (and 1 pod) as the kubelet counts them (node_room.hpp)
  std::vector<std::string> host_ports;  // the host ports it binds (node_room.hpp)
  bool terminating = false;
  bool gated = false;           // spec.schedulingGates not empty
  bool controlled = false;      // has a controller owner (a Job): recreated if evicted
  std::int64_t created_s = -1;  // creationTimestamp, Unix seconds
  std::int64_t started_s = -1;  // status.startTime, Unix seconds
  // spec.terminationGracePeriodSeconds (the API's default, 30, when absent)
  std::int64_t grace_s = kDefaultGraceSeconds;
  std::string decision_node;       // from deepshare.io/gpus ("" = none)
  std::vector<int> decision_gpus;  // GPU indices on decision_node
  bool decision_borrowed = false;  // from deepshare.io/decision
  bool decision_shared = false;
  std::int64_t gpu_memory_mib = 0;   // deepshare.io/gpu-memory (0: not given or malformed)
  int gpu_util = 0;                  // deepshare.io/gpu-util (0: not given or malformed)
  std::int64_t decision_ms = -1;     // driver time of the decision (-1: unknown)
  std::uint64_t decision_epoch = 0;  // the epoch of the leader that decided (0: no lease)
  std::string gang;                  // label deepshare.io/gang ("" = a job of its own)
  int gang_size = 0;  // annotation deepshare.io/gang-size: 1..kMaxGangSize, 0 absent, -1 malformed
  bool kueue_group = false;   // the gang is Kueue's pod group (its label and annotation)
  std::string job_uid;        // its controller, when that is a batch/v1 Job
  int completion_index = -1;  // an Indexed Job's pod: its index (-1: none or malformed)
  bool job_gang = false;      // the gang is its Job (set by the adapter: gang = the Job's name)
  // With job_gang, the Job's work item the pod runs ("#I": index I, "~S": slot S; "": the
  // whole Job), appended to the gang's name and key (set by the adapter).
  std::string job_item;
  NodeRules rules;  // nodeSelector, required node affinity
  // Its DRA claims (dra.hpp: spec.resourceClaims, resolved through status.resourceClaimStatuses).
  // The adapter adds their GPUs to `gpus`, or says why it cannot allocate them
  // (claim_refusal), or that a claim is not created yet (claims_pending).
  std::vector<PodClaim> claims;
  std::string claim_refusal;
  bool claims_pending = false;
  // The annotation that gives the gang's size.
  [[nodiscard]] const char* gang_size_key() const {
    if (job_gang) return "spec.parallelism";
    return kueue_group ? kKueueGroupCountAnnotation : kGangSizeAnnotation;
  }
  [[nodiscard]] bool bound() const { return !node.empty(); }
  [[nodiscard]] bool ended() const { return phase == "Succeeded" || phase == "Failed"; }
  // Holds its node's GPUs as kube-scheduler and the kubelet count them: bound, not ended
  // (a terminating pod holds them until it is gone).
  [[nodiscard]] bool holds_gpus() const { return bound() && !ended() && gpus > 0; }
  [[nodiscard]] std::string ref() const { return ns + "/" + name; }
};

// Reading the API's JSON: the member `key` of `o` (null when `o` is no object or lacks it), and
// a string member ("" when absent or not a string).
const json& member(const json& o, const char* key);
std::string member_str(const json& o, const char* key);
// A namespaced object's metadata.uid, .namespace and .name; false when one is missing.
bool object_identity(const json& object, std::string& uid, std::string& ns, std::string& name);

// Reads one Pod object; nullopt when it lacks a uid, namespace or name.
std::optional<PodView> pod_view(const json& pod);

struct NodeView {
  std::string name;
  int gpus = 0;            // allocatable nvidia.com/gpu, or else its GPUs as DRA devices
  bool dra = false;        // its GPUs are DRA devices (dra.hpp; set by the scheduler)
  bool shareable = false;  // DRA devices that allow several allocations (MPS pairs)
  Requests allocatable;    // cpu, memory, pods (node_room.hpp; 0: unknown)
  bool ready = false;      // condition Ready=True
  bool cordoned = false;
  // metadata.labels (shared: the views are copied every cycle, the labels only when read)
  std::shared_ptr<const Labels> labels;
  [[nodiscard]] bool usable() const { return ready && !cordoned; }
};
std::optional<NodeView> node_view(const json& node);
// The views of the Node objects that have a name.
std::vector<NodeView> node_views(const std::vector<json>& nodes);
// A node without nvidia.com/gpu that publishes GPU devices (dra.hpp) has those as its GPUs.
void add_dra_gpus(std::vector<NodeView>& nodes, const NodeDeviceMap& devices);

// The views of the informer's Node objects (shared, immutable: a changed node is a new object),
// each object read once: a cycle costs a pointer lookup per node, not a copy of its JSON.
class NodeReader {
 public:
  const std::vector<NodeView>& read(const std::vector<std::shared_ptr<const json>>& nodes);

 private:
  struct Read {
    std::shared_ptr<const json> object;  // kept, so that its address names no other object
    std::optional<NodeView> view;
    std::uint64_t cycle = 0;
  };
  std::unordered_map<const json*, Read> cache_;
  std::vector<NodeView> views_;
  std::uint64_t cycle_ = 0;
};

// Parses an integer quantity ("4"; "4k"-style suffixes are not GPUs: -1); -1 when not one.
int gpu_quantity(const json& value);

// The annotations of a decision: deepshare.io/gpus and deepshare.io/decision.
std::string gpus_annotation(const std::string& node, const std::vector<int>& gpus);
// A shared start's (an MPS pair's) also carries the limits the policy chose for it:
// mps=THREAD_PERCENT,memlimit=MIB (what the Slurm face passes to the job's MPS client).
std::string decision_annotation(bool borrowed, bool shared, std::int64_t decided_ms,
                                std::uint64_t epoch, int mps_percent = 0,
                                std::int64_t mem_limit_mib = 0);

}  // namespace ds::k8s
