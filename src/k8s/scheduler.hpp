// `deepshare k8s run`: DeepShare as the scheduler of the pods whose spec.schedulerName is
// `deepshare`, on a real kube-apiserver (docs/kubernetes.md §8). The loop of the Slurm
// controller (src/slurm/controller.hpp) on Kubernetes' ports:
//   informers (informer.hpp: list + watch of Pods and Nodes) -> the adapter (adapter.hpp)
//   -> the driver core (driver/core.hpp: reconciler, policy, apply(), compaction).
// One cycle every poll_ms: set the time, read the caches, observe nodes, fold the pods in,
// the GPUs held outside the model, decide, apply, compact.
// Tenants are namespaces, with the quotas given (a configuration file or --tenants); the
// policy is any non-oracle policy of the registry, as in the simulator and on Slurm.
// Not yet: leader election (a Lease), gangs, DRA / MPS, quotas from Kueue's objects,
// metrics, an admission policy (issue #23).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "driver/clock.hpp"
#include "driver/core.hpp"
#include "driver/journal.hpp"
#include "driver/log.hpp"
#include "k8s/adapter.hpp"
#include "k8s/client.hpp"
#include "k8s/informer.hpp"

namespace ds::k8s {

struct SchedulerConfig {
  std::string kubeconfig;
  std::string scheduler_name = "deepshare";
  std::string policy = "deepshare";
  std::map<std::string, std::string> options;  // the policy's --set keys
  std::vector<Tenant> tenants;                 // ids = positions
  std::vector<std::string> namespaces;         // tenants[i]'s namespace
  double time_scale = 1.0;  // driver time = wall time x scale (a time-scaled replay)
  int poll_ms = 100;
  std::int64_t timeout_ms = 32000;  // a start or preemption not carried out by then failed
  std::string journal;
  std::int64_t gpu_memory_mib = kDefaultGpuMemoryMib;
};

struct SchedulerCounters {
  std::uint64_t cycles = 0;
  driver::CoreCounters core;
  AdapterCounters adapter;
};

class PodScheduler {
 public:
  PodScheduler(SchedulerConfig config, driver::Log& log);
  ~PodScheduler();
  // Starts the informers, waits for their first lists, builds the cluster from the GPU nodes
  // and the policy; throws InputError on a bad setup (no GPU node, an unknown policy...).
  void init();
  // One cycle.
  void step();
  // Cycles every poll_ms until `stop` (or `max_cycles` cycles, when > 0).
  void run(const std::atomic<bool>& stop, std::int64_t max_cycles = 0);
  [[nodiscard]] SchedulerCounters counters() const;
  [[nodiscard]] const driver::Core& core() const { return *core_; }

 private:
  SchedulerConfig cfg_;
  driver::Log& log_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<Informer> pods_, nodes_;
  driver::Journal journal_;
  driver::DriverClock clock_;
  std::unique_ptr<K8sAdapter> adapter_;
  std::unique_ptr<driver::Core> core_;
  Time now_ = 0;
  std::uint64_t cycles_ = 0;
};

}  // namespace ds::k8s
