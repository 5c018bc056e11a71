// Builders for small hand-made workloads in tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/cluster_state.hpp"
#include "model/snapshot.hpp"
#include "model/tenant_tree.hpp"
#include "model/workload.hpp"

namespace ds::testing {

// A workload with `tenants` tenants, each owning `nodes_per_tenant` nodes of
// `gpus_per_node` GPUs, quota = its GPUs.
inline Workload make_workload(int tenants, int nodes_per_tenant, int gpus_per_node = 8) {
  Workload w;
  w.name = "test";
  w.format = "test";
  for (int t = 0; t < tenants; ++t) {
    Tenant tenant;
    tenant.id = TenantId(static_cast<std::uint32_t>(t));
    tenant.name = "t" + std::to_string(t);
    tenant.quota_gpus = nodes_per_tenant * gpus_per_node;
    w.tenants.push_back(tenant);
    w.cluster.add_nodes(nodes_per_tenant, gpus_per_node, kDefaultGpuMemoryMib, "", tenant.id);
  }
  return w;
}

// A tenant of make_tree_workload: its parent's index (-1: top level) and configured quota
// (-1: none, it shares its parent's).
struct TreeTenant {
  const char* name;
  int parent = -1;
  int quota = -1;
};

// `nodes` shared 8-GPU nodes and the tenants as a tree, resolved (model/tenant_tree.hpp); with
// `tree` false the same tenants flat, each with the own guarantee the tree gives it.
inline Workload make_tree_workload(int nodes, std::initializer_list<TreeTenant> list,
                                   bool tree = true) {
  Workload w;
  w.name = "test";
  w.format = "test";
  for (const TreeTenant& t : list) {
    Tenant x;
    x.id = TenantId(static_cast<std::uint32_t>(w.tenants.size()));
    x.name = t.name;
    if (t.parent >= 0) x.parent = TenantId(static_cast<std::uint32_t>(t.parent));
    x.tree_quota_gpus = t.quota;
    x.quota_gpus = t.quota < 0 ? 0 : t.quota;
    w.tenants.push_back(x);
  }
  (void)resolve_tenant_tree(w.tenants, nodes * 8);
  if (!tree)
    for (auto& x : w.tenants) {
      x.parent = TenantId();
      x.tree_quota_gpus = -1;
    }
  w.cluster.add_nodes(nodes, 8, kDefaultGpuMemoryMib, "", TenantId());
  return w;
}

// Appends a job (times in seconds); call w.finalize() after the last one.
inline void add_job(Workload& w, int tenant, int gpus, std::int64_t submit_s,
                    std::int64_t duration_s, double gpu_util = -1, double gmem_mib = 0) {
  JobSpec j;
  j.name = std::to_string(w.jobs.size());
  j.tenant = TenantId(static_cast<std::uint32_t>(tenant));
  j.user = w.intern_user("u");
  j.gpus = gpus;
  j.submit = seconds(submit_s);
  j.gpu_util = gpu_util;
  j.gpu_memory_mib = gmem_mib;
  w.jobs.push_back(j);
  w.truth.push_back(JobTruth{seconds(duration_s), FinalState::Completed});
}

// A cluster of 8-GPU nodes (or of given sizes) whose GPUs are occupied through a
// ClusterState (the one occupancy model), for placement tests: occupy GPUs, then take a
// snapshot that views it. Not copyable: the state points into it.
struct GpuCluster {
  Cluster cluster;
  std::vector<Tenant> tenants;
  std::unique_ptr<ClusterState> state;
  std::vector<NodeId> ids;
  std::vector<Placement> placements;  // one per occupy()

  // Node i has its lowest used[i] GPUs in use (one job per node).
  explicit GpuCluster(const std::vector<int>& used) {
    const int nodes = static_cast<int>(used.size());
    cluster.add_nodes(nodes, 8, kDefaultGpuMemoryMib, "", TenantId());
    init_state();
    for (int n = 0; n < nodes; ++n) {
      if (used[static_cast<std::size_t>(n)] > 0)
        occupy(n, (std::uint64_t{1} << used[static_cast<std::size_t>(n)]) - 1);
    }
  }
  // Idle nodes of these sizes (GPUs each), in order.
  struct Sizes {
    std::vector<int> gpus;
  };
  explicit GpuCluster(const Sizes& sizes) {
    for (int g : sizes.gpus) cluster.add_nodes(1, g, kDefaultGpuMemoryMib, "", TenantId());
    init_state();
  }
  GpuCluster(const GpuCluster&) = delete;
  GpuCluster& operator=(const GpuCluster&) = delete;

  // One whole-GPU job on `mask` of node n; returns the index of its placement.
  std::size_t occupy(int n, std::uint64_t mask) {
    return run(n, mask, __builtin_popcountll(mask), kMilliPerGpu);
  }
  // One job holding `milli` of GPU k of node n.
  std::size_t occupy_share(int n, int k, int milli) {
    return run(n, std::uint64_t{1} << k, 1, milli);
  }
  // The job of occupy() number `i` ends: its GPUs are free again.
  void release(std::size_t i) { state->finish(JobId(static_cast<std::uint32_t>(i)), 0); }
  [[nodiscard]] ClusterSnapshot snapshot() const { return state->snapshot(0); }

 private:
  // One tenant, the state over the cluster, and every node's id in order.
  void init_state() {
    Tenant t;
    t.id = TenantId(0);
    t.name = "t0";
    tenants.push_back(t);
    state = std::make_unique<ClusterState>(cluster, tenants);
    for (const Node& n : cluster.nodes) ids.push_back(n.id);
  }
  std::size_t run(int n, std::uint64_t mask, int gpus, int milli) {
    JobSpec j;
    j.name = "occupant" + std::to_string(placements.size());
    j.tenant = TenantId(0);
    j.gpus = gpus;
    j.gpu_milli = milli;
    const JobId id = state->add_job(j);
    placements.push_back({NodeAlloc{NodeId(static_cast<std::uint32_t>(n)), mask}});
    state->adopt(id, 0, placements.back(), false, false, 0);
    return id.index();
  }
};

}  // namespace ds::testing
