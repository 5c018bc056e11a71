// Builders for small hand-made workloads in tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// Per-GPU usage of a cluster of 8-GPU nodes, for placement tests: occupy GPUs, then
// take a snapshot that views it.
struct GpuCluster {
  Cluster cluster;
  std::vector<GpuState> gpus;
  std::vector<std::int16_t> free_milli;
  std::vector<std::int32_t> node_free;
  std::vector<NodeId> ids;
  std::vector<Placement> placements;  // one per occupy()

  // Node i has its lowest used[i] GPUs in use (one job per node).
  explicit GpuCluster(const std::vector<int>& used) {
    const int nodes = static_cast<int>(used.size());
    cluster.add_nodes(nodes, 8, kDefaultGpuMemoryMib, "", TenantId());
    gpus.resize(static_cast<std::size_t>(cluster.total_gpus()));
    free_milli.assign(gpus.size(), 1000);
    node_free.assign(used.size(), 8);
    for (int n = 0; n < nodes; ++n) {
      ids.push_back(NodeId(static_cast<std::uint32_t>(n)));
      if (used[static_cast<std::size_t>(n)] > 0)
        occupy(n, (std::uint64_t{1} << used[static_cast<std::size_t>(n)]) - 1);
    }
  }
  // One whole-GPU job on `mask` of node n; returns the index of its placement.
  std::size_t occupy(int n, std::uint64_t mask) {
    for (int k = 0; k < 8; ++k)
      if (mask >> k & 1) {
        const auto g = static_cast<std::size_t>(n * 8 + k);
        gpus[g].jobs = 1;
        gpus[g].milli_used = 1000;
        free_milli[g] = 0;
        --node_free[static_cast<std::size_t>(n)];
      }
    placements.push_back({NodeAlloc{NodeId(static_cast<std::uint32_t>(n)), mask}});
    return placements.size() - 1;
  }
  [[nodiscard]] ClusterSnapshot snapshot() const {
    ClusterSnapshot s;
    s.cluster = &cluster;
    s.gpus = gpus;
    s.gpu_free_milli = free_milli;
    s.node_free_gpus = node_free;
    return s;
  }
};

}  // namespace ds::testing
