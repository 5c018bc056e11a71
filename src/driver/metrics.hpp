// The metric families every online driver writes (Slurm: slurm/metrics.cpp; Kubernetes:
// k8s/scheduler.cpp), so that a name means one thing whatever the engine (docs/outputs.md):
// the tenants' quotas, usage and lending, the waiting jobs by reason, the GPUs, and the
// loop's counters. Naming as prometheus.hpp: units last, `_total` counters, histograms for
// latencies, no sentinel values (a tenant without an assurance signal has no assurance
// series). `borrowed` GPUs are those of running jobs the policy started on borrowed
// (preemptible) capacity, as the simulator's timeseries.csv `borrowed_gpus`; GPUs a tenant
// holds beyond its quota are `over_quota`.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/prometheus.hpp"
#include "model/cluster_state.hpp"
#include "policy/policy.hpp"

namespace ds::driver {

// The per-tenant families: the policy's signal, quotas, usage, lending; `preemptions` per
// tenant (the driver's own).
void write_tenant_metrics(PromWriter& w, const std::vector<Tenant>& tenants,
                          const ClusterState* state, const Policy* policy,
                          const std::vector<std::uint64_t>& preemptions);
// Jobs waiting by reason, and the GPUs.
void write_queue_metrics(PromWriter& w, const ClusterState* state, const Cluster& cluster);

// The loop's counters every driver has (its engine adds its own families).
struct LoopMetrics {
  std::uint64_t cycles = 0;
  std::uint64_t applied = 0, failed = 0, invalid_decisions = 0;
  std::uint64_t starts = 0, preemptions = 0, preemptions_failed = 0;
  std::uint64_t rollbacks = 0, deferrals = 0, completions = 0, cancellations = 0;
  std::uint64_t refused = 0;         // jobs refused or rejected with a reason
  std::uint64_t tenant_reloads = 0;  // changes of the tenants or quotas applied live
  std::uint64_t observe_errors = 0;
  std::uint64_t fenced = 0;  // actions not sent: not (or no longer) the leader
  const Histogram* cycle_seconds = nullptr;
  std::int64_t last_observe_ms = 0;  // Unix ms of the last successful read (0: none)
};
void write_loop_metrics(PromWriter& w, const LoopMetrics& m);

}  // namespace ds::driver
