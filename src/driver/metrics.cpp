// The metric families every online driver writes (metrics.hpp).
#include "driver/metrics.hpp"

#include "driver/lending.hpp"

namespace ds::driver {
namespace {

int whole_gpus(std::int64_t milli_gpus) {
  return static_cast<int>((milli_gpus + kMilliPerGpu / 2) / kMilliPerGpu);
}

}  // namespace

// The per-tenant families: the policy's signal, quotas, usage, lending.
void write_tenant_metrics(PromWriter& w, const std::vector<Tenant>& tenants,
                          const ClusterState* state, const Policy* policy,
                          const std::vector<std::uint64_t>& preemptions) {
  std::vector<TenantTelemetry> tel(tenants.size());
  if (policy) policy->telemetry(tel);
  // Per-tenant usage as ClusterState counts it (colocated clients hold no GPU of their own).
  auto usage = [&](std::size_t t) {
    return state ? state->usage(TenantId(static_cast<std::uint32_t>(t))) : TenantUsage{};
  };
  std::vector<int> quota(tenants.size()), held(tenants.size());
  for (std::size_t t = 0; t < tenants.size(); ++t) {
    quota[t] = tenants[t].quota_gpus;
    held[t] = static_cast<int>((usage(t).held - usage(t).colocated) / kMilliPerGpu);
  }
  const Lending lend = account_lending(quota, held);
  auto tenant = [&](std::size_t t) { return PromWriter::Labels{{"tenant", tenants[t].name}}; };
  auto per_tenant = [&](const char* name, const char* type, const char* help, auto value) {
    w.family(name, type, help);
    for (std::size_t t = 0; t < tenants.size(); ++t)
      w.sample(name, tenant(t), static_cast<double>(value(t)));
  };
  // Only the tenants a policy gives an assurance signal (DeepShare: all; baselines: none).
  w.family("deepshare_tenant_assurance", "gauge",
           "Assurance signal A_t in [0,1] (only policies that compute one)");
  for (std::size_t t = 0; t < tenants.size(); ++t)
    if (tel[t].assurance >= 0) w.sample("deepshare_tenant_assurance", tenant(t), tel[t].assurance);
  w.family("deepshare_tenant_reserve_gpus", "gauge",
           "Idle quota the policy holds back from lending (only policies with an assurance "
           "signal)");
  for (std::size_t t = 0; t < tenants.size(); ++t)
    if (tel[t].assurance >= 0)
      w.sample("deepshare_tenant_reserve_gpus", tenant(t), tel[t].reserve_gpus);
  per_tenant("deepshare_tenant_quota_gpus", "gauge",
             "Guaranteed GPUs (Slurm: the account's GrpTRES; Kubernetes: the namespace's quota)",
             [&](std::size_t t) { return tenants[t].quota_gpus; });
  per_tenant("deepshare_tenant_held_gpus", "gauge",
             "GPUs held by running jobs (colocated clients excluded)",
             [&](std::size_t t) { return held[t]; });
  per_tenant("deepshare_tenant_borrowed_gpus", "gauge",
             "GPUs of running jobs the policy started on borrowed (preemptible) capacity, as the "
             "simulator's borrowed_gpus",
             [&](std::size_t t) { return whole_gpus(usage(t).borrowed); });
  per_tenant("deepshare_tenant_over_quota_gpus", "gauge",
             "GPUs held beyond the quota (sum over tenants = lent + unowned)",
             [&](std::size_t t) { return lend.over_quota[t]; });
  per_tenant("deepshare_tenant_lent_gpus", "gauge",
             "Idle quota in use by other tenants' GPUs beyond their quota",
             [&](std::size_t t) { return lend.lent[t]; });
  per_tenant("deepshare_tenant_running_jobs", "gauge", "Running jobs",
             [&](std::size_t t) { return usage(t).running_jobs; });
  per_tenant("deepshare_tenant_shared_jobs", "gauge",
             "Running jobs colocated on a partner's GPUs (MPS)",
             [&](std::size_t t) { return usage(t).colocated_jobs; });
  per_tenant("deepshare_tenant_pending_jobs", "gauge",
             "Jobs the engine would let run now, waiting for the policy",
             [&](std::size_t t) { return usage(t).pending_jobs; });
  per_tenant("deepshare_tenant_pending_gpus", "gauge", "GPUs requested by the pending jobs",
             [&](std::size_t t) { return usage(t).pending_gpus; });
  per_tenant("deepshare_tenant_preemptions_total", "counter",
             "Preemptions of this tenant's jobs decided by the driver since it started (the "
             "engine's own requeues or evictions, e.g. node failures, not counted)",
             [&](std::size_t t) { return t < preemptions.size() ? preemptions[t] : 0; });
  w.family("deepshare_unowned_over_quota_gpus", "gauge",
           "GPUs held beyond a quota that no tenant's idle quota covers (capacity beyond all "
           "quotas)");
  w.sample("deepshare_unowned_over_quota_gpus", lend.unowned);
}

// Jobs waiting by reason, and the GPUs.
void write_queue_metrics(PromWriter& w, const ClusterState* state, const Cluster& cluster) {
  std::vector<long> by_reason(kWaitReasons, 0);
  if (state) {
    // Candidates by the reason the policy last stated; jobs Slurm would not run now
    // (Future in the model) by the reason the controller knows: held, dependency, ...
    for (JobId id : state->pending())
      ++by_reason[static_cast<std::size_t>(state->runtime(id).wait)];
    for (const JobRuntime& r : state->runtimes())
      if (r.status == JobStatus::Future && r.wait != WaitReason::None)
        ++by_reason[static_cast<std::size_t>(r.wait)];
  }
  w.family("deepshare_pending_jobs", "gauge",
           "Jobs waiting, by reason: the policy's last stated reason for candidates; held, "
           "dependency, quota (Slurm: an array's %N) or no-fit for jobs the engine would not run "
           "now (Kubernetes: held = scheduling gates)");
  for (int r = 0; r < kWaitReasons; ++r)
    if (by_reason[static_cast<std::size_t>(r)] > 0)
      w.sample("deepshare_pending_jobs", {{"reason", to_string(static_cast<WaitReason>(r))}},
               static_cast<double>(by_reason[static_cast<std::size_t>(r)]));
  int busy = 0;
  const auto gpus = static_cast<std::size_t>(cluster.total_gpus());
  for (std::size_t g = 0; state && g < gpus; ++g) busy += state->gpu(g).jobs > 0;
  w.family("deepshare_gpus", "gauge", "GPUs of the driver's nodes (Slurm: the partition's)");
  w.sample("deepshare_gpus", static_cast<double>(gpus));
  w.family("deepshare_busy_gpus", "gauge",
           "GPUs with at least one job (also of other partitions or schedulers), or on a node "
           "that is down");
  w.sample("deepshare_busy_gpus", busy);
}

void write_loop_metrics(PromWriter& w, const LoopMetrics& c) {
  auto counter = [&](const char* name, const char* help, std::uint64_t v) {
    w.family(name, "counter", help);
    w.sample(name, static_cast<double>(v));
  };
  counter("deepshare_cycles_total", "Scheduling cycles", c.cycles);
  counter("deepshare_decisions_applied_total",
          "Decisions applied through the engine (Slurm, Kubernetes)", c.applied);
  counter("deepshare_decisions_failed_total", "Decisions the engine refused", c.failed);
  counter("deepshare_decisions_invalid_total",
          "Decisions the cluster state refused as invalid (a policy bug: skipped, logged as "
          "decision_invalid)",
          c.invalid_decisions);
  counter("deepshare_starts_total", "Job starts decided", c.starts);
  counter("deepshare_preemptions_total", "Preemptions applied (sum of the tenants' counters)",
          c.preemptions);
  counter("deepshare_preemptions_failed_total",
          "Preemptions the engine refused or did not carry out in time (the job ran on)",
          c.preemptions_failed);
  counter("deepshare_start_rollbacks_total", "Starts the engine did not honour in time (forgotten)",
          c.rollbacks);
  counter("deepshare_start_deferrals_total",
          "Start decisions not applied: the engine could not hold the placement this cycle",
          c.deferrals);
  counter("deepshare_job_ends_total", "Jobs that ended after running (any final state)",
          c.completions);
  counter("deepshare_job_cancellations_total", "Jobs that ended while pending", c.cancellations);
  counter("deepshare_refused_jobs_total",
          "Jobs DeepShare refused with a reason (no tenant, can never fit; Slurm: cancelled)",
          c.refused);
  counter("deepshare_tenant_reloads_total", "Changes of the tenants or quotas applied live",
          c.tenant_reloads);
  counter("deepshare_observe_errors_total", "Failed reads of the engine's state (cycle skipped)",
          c.observe_errors);
  counter("deepshare_fenced_actions_total",
          "Actions not sent: this driver is not (or no longer) the leader", c.fenced);
  if (c.cycle_seconds) {
    w.family("deepshare_cycle_duration_seconds", "histogram",
             "Scheduling cycle latency (observe + decide + apply)");
    w.histogram("deepshare_cycle_duration_seconds", {}, *c.cycle_seconds);
  }
  if (c.last_observe_ms > 0) {
    w.family("deepshare_last_observe_timestamp_seconds", "gauge",
             "Unix time of the last successful read of the engine's jobs (staleness: time() - "
             "this)");
    w.sample("deepshare_last_observe_timestamp_seconds",
             static_cast<double>(c.last_observe_ms) / 1000.0);
  }
}

}  // namespace ds::driver
