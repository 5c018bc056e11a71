// `deepshare k8s run`: DeepShare as the scheduler of the pods whose spec.schedulerName is
// `deepshare`, on a real kube-apiserver (docs/kubernetes.md §8). The loop of the Slurm
// controller (src/slurm/controller.hpp) on Kubernetes' ports:
//   informers (informer.hpp: list + watch of Pods, Nodes and Jobs) -> the adapter (adapter.hpp)
//   -> the driver core (driver/core.hpp: reconciler, policy, apply(), compaction).
// A cycle: set the time, read the caches, observe nodes, fold the pods in, the GPUs held
// outside the model, decide, apply, compact. Cycles run when the pod watch shows a change
// (wakeup.hpp), idle at least as long as the last cycle took (at least min_gap_ms), and at
// the latest every poll_ms.
// Tenants are namespaces, with the quotas given (a configuration file or --tenants); the
// policy is any non-oracle policy of the registry, as in the simulator and on Slurm.
// Leadership (leader.hpp): with leader election on (the default), a scheduler binds and
// evicts only while it holds the Lease (lead() waits for it: a hot standby whose informers
// are already synced); every write goes through the fence (driver/fence.hpp) and carries its
// epoch. A scheduler that lost the Lease, or sees a newer epoch on a pod, stops for good
// (deposed(); `deepshare k8s run` exits 3, its Deployment restarts it as a standby).
// Tenants (tenants.hpp): given (fixed), or read live from Kueue's queues or the ConfigMap
// deepshare-tenants; a change applies at the next cycle (the policy is rebuilt, as a
// restarted scheduler's would be).
// Metrics (metrics_text(), k8s/metrics.cpp): the families every driver writes
// (driver/metrics.hpp, the same names and meanings as `deepshare slurm run`) and the
// adapter's own (deepshare_k8s_*).
// Nodes: the GPU nodes listed at start; a GPU node added later rebuilds the model (adapter,
// core, policy) at the next cycle, as a restart would (running pods adopted from their
// annotations), keeping the bindings the cache does not show yet.
// GPUs as DRA devices (dra.hpp): when the API serves resource.k8s.io/v1, ResourceClaims and
// ResourceSlices are watched too; a node without nvidia.com/gpu has the GPU driver's devices.
// Not yet: MPS pairs (issue #23).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "driver/clock.hpp"
#include "driver/core.hpp"
#include "driver/fence.hpp"
#include "driver/journal.hpp"
#include "driver/log.hpp"
#include "driver/prometheus.hpp"
#include "k8s/adapter.hpp"
#include "k8s/client.hpp"
#include "k8s/informer.hpp"
#include "k8s/leader.hpp"
#include "k8s/tenants.hpp"

namespace ds::k8s {

struct SchedulerConfig {
  std::string kubeconfig;
  std::string scheduler_name = "deepshare";
  DraConfig dra;  // GPUs as DRA devices (dra.hpp), read when the API serves resource.k8s.io/v1
  std::string policy = "deepshare";
  std::map<std::string, std::string> options;  // the policy's --set keys
  std::vector<Tenant> tenants;                 // ids = positions (given tenants)
  std::vector<std::string> namespaces;         // tenants[i]'s namespace
  // No tenants given: Kueue's queues when its API is served, else the ConfigMap
  // deepshare-tenants in the Lease's namespace (tenants.hpp), watched.
  bool live_tenants = false;
  GracePeriods grace;       // evictions' grace periods, per namespace (grace.hpp)
  std::string metrics;      // Prometheus endpoint HOST:PORT ("": none; the CLI serves it)
  double time_scale = 1.0;  // driver time = wall time x scale (a time-scaled replay)
  int poll_ms = 100;        // at the latest: a cycle this often without any change
  int min_gap_ms = 10;      // at the soonest: idle this long, or as long as the last cycle took
  std::int64_t timeout_ms = 32000;  // a start or preemption not carried out by then failed
  std::string journal;
  std::int64_t gpu_memory_mib = kDefaultGpuMemoryMib;
  bool leader_elect = true;  // false: no Lease (one scheduler per cluster, warned no_lease)
  LeaderConfig lease;
};

struct SchedulerCounters {
  std::uint64_t cycles = 0;
  std::uint64_t tenant_reloads = 0;  // changes of the live tenants applied
  std::uint64_t fenced = 0;          // writes not sent: not (or no longer) the leader
  driver::Histogram cycle_seconds{driver::latency_buckets()};
  std::int64_t last_observe_ms = 0;                // Unix ms of the last cycle that read the caches
  std::size_t binds_queued = 0, notes_queued = 0;  // waiting for the binder's workers now
  driver::CoreCounters core;
  AdapterCounters adapter;
};

class PodScheduler {
 public:
  PodScheduler(SchedulerConfig config, driver::Log& log);
  ~PodScheduler();
  // Starts the informers and waits for their first lists; throws InputError when the API
  // cannot be read.
  void connect();
  // With leader election: connects, then waits (a standby) until this scheduler holds the
  // Lease or `stop`; false when stopped first. Without: true at once.
  bool lead(const std::atomic<bool>& stop);
  // Connects if needed, builds the cluster from the GPU nodes and the policy; throws
  // InputError on a bad setup (no GPU node, an unknown policy, the Lease not held...).
  void init();
  // One cycle.
  void step();
  // Cycles (on the pods' changes, at the latest every poll_ms: above) until `stop` (or
  // `max_cycles` cycles, when > 0) or deposed; gives the Lease up at a clean stop, so that a
  // standby takes over at once.
  void run(const std::atomic<bool>& stop, std::int64_t max_cycles = 0);
  // Another scheduler leads (the Lease lost, or a newer epoch on a pod): nothing more is sent.
  [[nodiscard]] bool deposed() const { return fence_.deposed(); }
  [[nodiscard]] SchedulerCounters counters() const;
  // Prometheus text exposition (thread-safe: the metrics server's thread calls it).
  [[nodiscard]] std::string metrics_text() const;
  [[nodiscard]] const driver::Core& core() const { return *core_; }

 private:
  SchedulerConfig cfg_;
  driver::Log& log_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<Binder> binder_;  // bindings beside the loop (binder.hpp)
  Wakeup wakeup_;  // the pod informer's changes (before the informers: it outlives them)
  std::unique_ptr<Informer> pods_, nodes_, jobs_;
  NodeReader node_reader_;  // the Node objects' views (pods.hpp)
  JobIndex job_index_;      // the Jobs of this cycle (gangs of Indexed Jobs: jobs.hpp)
  // DRA (dra.hpp), when the API serves resource.k8s.io/v1: ResourceClaims and ResourceSlices,
  // the claims of this cycle, the nodes' GPU devices (re-read when a slice changed).
  std::unique_ptr<Informer> claims_, slices_;
  ClaimIndex claim_index_;
  NodeDeviceMap devices_;
  std::uint64_t slice_changes_ = ~std::uint64_t{0}, claim_changes_ = ~std::uint64_t{0};
  // The Node objects' views, a node without nvidia.com/gpu given its DRA GPU devices.
  std::vector<NodeView> read_nodes();
  driver::Journal journal_;
  driver::Fence fence_;
  std::unique_ptr<LeaderElector> leader_;
  driver::DriverClock clock_;
  TenantSource tenant_source_ = TenantSource::Given;
  std::unique_ptr<Informer>
      tenant_objects_[2];  // Kueue: ClusterQueues, LocalQueues; else the ConfigMap
  std::uint64_t tenant_changes_ = ~std::uint64_t{0};
  std::unique_ptr<TenantBook> tenants_;
  std::unique_ptr<K8sAdapter> adapter_;
  std::unique_ptr<driver::Core> core_;
  Time now_ = 0;
  std::uint64_t cycles_ = 0;
  std::uint64_t tenant_reloads_ = 0;
  std::uint64_t nodes_added_ = 0;
  driver::Histogram cycle_seconds_{driver::latency_buckets()};
  std::int64_t last_observe_ms_ = 0;
  mutable std::mutex mu_;  // guards what metrics_text() reads against the cycle

  // Starts the informers of the live tenant source (connect()).
  void watch_tenants();
  // Re-reads the live source when its objects changed; true when the tenants changed.
  bool read_tenants();
  // The tenants into the core, the adapter and a new policy.
  void tenants_changed();
  // A new adapter, core and policy on the GPU nodes listed now (init, nodes added).
  void build_model();
};

}  // namespace ds::k8s
