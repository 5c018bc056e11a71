// The Kubernetes objects a replay creates (`deepshare k8s replay`, docs/kubernetes.md §7):
// a namespace per tenant, one batch/v1 Job per trace job, and for `--scheduler kueue` the
// Kueue objects that give each tenant its quota. Pure functions (no I/O), so the bodies are
// tested without a server and are the same on every run.
//
// The Kueue configuration, as a site that shares GPUs between teams sets it up (Kueue's
// concepts docs: cluster_queue.md, preemption.md, cohort.md):
//  - one ResourceFlavor (every GPU node alike; its node labels and tolerations optional);
//  - one ClusterQueue per tenant, nominalQuota = the tenant's guaranteed GPUs (the same
//    quota_gpus the simulation and the Slurm runs use), all in one cohort with no
//    borrowingLimit or lendingLimit (borrowing on: idle quota is lent to the cohort),
//    queueingStrategy BestEffortFIFO (Kueue's default), preemption reclaimWithinCohort: Any
//    (a tenant below its quota reclaims its GPUs from any borrower), withinClusterQueue:
//    LowerPriority, borrowWithinCohort: Never; namespaceSelector: the tenant's namespace;
//  - one LocalQueue per tenant namespace pointing at its ClusterQueue.
// Jobs carry no priority class (all priority 0, as the simulator's `kueue` gives Venus jobs).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ds::k8s {

using nlohmann::json;

enum class Scheduler : std::uint8_t {
  Default,    // kube-scheduler alone: Jobs start at once, pods placed by kube-scheduler
  Kueue,      // Kueue admits Jobs (suspend: true + queue-name label), kube-scheduler places
  DeepShare,  // pods carry schedulerName: deepshare (the DeepShare driver places them)
};
// "default" | "kueue" | "deepshare"; throws InputError otherwise.
Scheduler parse_scheduler(std::string_view name);
const char* scheduler_name(Scheduler s);

// Label and annotation keys of the replay.
inline constexpr const char* kReplayLabel = "deepshare.io/replay";       // the run's id
inline constexpr const char* kTraceJobLabel = "deepshare.io/trace-job";  // the trace job
inline constexpr const char* kRunUntil = "deepshare.io/run-until";       // KWOK ends it then
inline constexpr const char* kQueueNameLabel = "kueue.x-k8s.io/queue-name";

// A DNS-1123 label from any text: lower case, [a-z0-9-], at most `max` characters, starting
// and ending with an alphanumeric ("x" when nothing is left).
std::string dns_label(std::string_view text, std::size_t max = 63);

struct JobRequest {
  std::string name;       // the Job's name (dns_label of the trace job)
  std::string ns;         // the tenant's namespace
  std::string trace_job;  // the trace job's name (label value: dns_label of it)
  std::string run_id;
  int gpus = 1;
  Scheduler scheduler = Scheduler::Default;
  std::string queue;  // Kueue: the LocalQueue
};
// A batch/v1 Job of one pod asking for `gpus` nvidia.com/gpu (requests = limits), no image
// pulled (KWOK runs nothing), restartPolicy Never, terminationGracePeriodSeconds 0 (a
// preempted run frees its GPUs at once), a podFailurePolicy that ignores pods ended by a
// disruption (Eviction API, preemption: they do not count against backoffLimit; 100 of
// it besides), and with it podReplacementPolicy Failed (no second pod before the first ended);
// Kueue: suspend: true and the queue-name label; DeepShare: schedulerName deepshare.
json job(const JobRequest& r);

json namespace_object(const std::string& name, const std::string& run_id);

struct KueueQueue {
  std::string name;  // ClusterQueue and LocalQueue name (the tenant's)
  std::string ns;    // the tenant's namespace
  int nominal_gpus = 0;
};
struct KueueSetup {
  std::string flavor = "gpu";
  std::string cohort = "deepshare";
  json flavor_node_labels = json::object();  // ResourceFlavor spec.nodeLabels
  json flavor_tolerations = json::array();   // ResourceFlavor spec.tolerations
  std::vector<KueueQueue> queues;
};
json resource_flavor(const KueueSetup& s);
json cluster_queue(const KueueSetup& s, const KueueQueue& q);
json local_queue(const KueueQueue& q);

inline constexpr const char* kKueueGroupVersion = "kueue.x-k8s.io/v1beta2";

}  // namespace ds::k8s
