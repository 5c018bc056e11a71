// Builders for small hand-made workloads in tests.
#pragma once

#include <string>

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
    w.cluster.add_nodes(nodes_per_tenant, gpus_per_node, 24 * 1024, "", tenant.id);
  }
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

}  // namespace ds::testing
