// Prometheus text exposition of the controller state (format 0.0.4), following the naming
// conventions (driver/prometheus.hpp): units last, `_total` counters, histograms for
// latencies, and no sentinel values (a tenant without an assurance signal has no assurance
// series). One meaning per name across drivers (docs/outputs.md): `borrowed` GPUs are those
// of running jobs the policy started on borrowed (preemptible) capacity, as the simulator's
// timeseries.csv `borrowed_gpus`; GPUs a tenant holds beyond its quota are `over_quota`.
#include <sstream>

#include "driver/lending.hpp"
#include "slurm/controller.hpp"

#ifndef DEEPSHARE_VERSION
#define DEEPSHARE_VERSION "unknown"
#endif

namespace ds::slurm {
namespace {

int whole_gpus(std::int64_t milli_gpus) {
  return static_cast<int>((milli_gpus + kMilliPerGpu / 2) / kMilliPerGpu);
}

// The per-tenant families: the policy's signal, quotas, usage, lending.
void tenant_metrics(driver::PromWriter& w, const std::vector<Tenant>& tenants,
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
  const driver::Lending lend = driver::account_lending(quota, held);
  auto tenant = [&](std::size_t t) {
    return driver::PromWriter::Labels{{"tenant", tenants[t].name}};
  };
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
  per_tenant("deepshare_tenant_quota_gpus", "gauge", "Guaranteed GPUs (the account's GrpTRES)",
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
             "Jobs Slurm would let run now, waiting for the policy",
             [&](std::size_t t) { return usage(t).pending_jobs; });
  per_tenant("deepshare_tenant_pending_gpus", "gauge", "GPUs requested by the pending jobs",
             [&](std::size_t t) { return usage(t).pending_gpus; });
  per_tenant("deepshare_tenant_preemptions_total", "counter",
             "Preemptions of this tenant's jobs decided by the controller since it started "
             "(Slurm's own requeues, e.g. node failures, not counted)",
             [&](std::size_t t) { return t < preemptions.size() ? preemptions[t] : 0; });
  w.family("deepshare_unowned_over_quota_gpus", "gauge",
           "GPUs held beyond a quota that no tenant's idle quota covers (capacity beyond all "
           "quotas)");
  w.sample("deepshare_unowned_over_quota_gpus", lend.unowned);
}

// Jobs waiting in Slurm by reason, and the GPUs.
void queue_metrics(driver::PromWriter& w, const ClusterState* state, const Cluster& cluster) {
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
           "Jobs waiting in Slurm, by reason: the policy's last stated reason for candidates; "
           "held, dependency, quota (an array's %N) or no-fit for jobs Slurm would not run now");
  for (int r = 0; r < kWaitReasons; ++r)
    if (by_reason[static_cast<std::size_t>(r)] > 0)
      w.sample("deepshare_pending_jobs", {{"reason", to_string(static_cast<WaitReason>(r))}},
               static_cast<double>(by_reason[static_cast<std::size_t>(r)]));
  int busy = 0;
  const auto gpus = static_cast<std::size_t>(cluster.total_gpus());
  for (std::size_t g = 0; state && g < gpus; ++g) busy += state->gpu(g).jobs > 0;
  w.family("deepshare_gpus", "gauge", "GPUs of the partition's nodes");
  w.sample("deepshare_gpus", static_cast<double>(gpus));
  w.family("deepshare_busy_gpus", "gauge",
           "GPUs with at least one job (any partition), or on a node that is down");
  w.sample("deepshare_busy_gpus", busy);
}

// The counters of the controller and its parts.
void counter_metrics(driver::PromWriter& w, const ControllerCounters& c) {
  auto counter = [&](const char* name, const char* help, std::uint64_t v) {
    w.family(name, "counter", help);
    w.sample(name, static_cast<double>(v));
  };
  counter("deepshare_cycles_total", "Scheduling cycles", c.cycles);
  counter("deepshare_decisions_applied_total", "Decisions applied through Slurm", c.applied);
  counter("deepshare_decisions_failed_total", "Decisions Slurm refused", c.failed);
  counter("deepshare_decisions_invalid_total",
          "Decisions the cluster state refused as invalid (a policy bug: skipped, logged as "
          "decision_invalid)",
          c.invalid_decisions);
  counter("deepshare_starts_total", "Job starts decided", c.starts);
  counter("deepshare_preemptions_total", "Preemptions applied (sum of the tenants' counters)",
          c.preemptions);
  counter("deepshare_preemptions_failed_total",
          "Preemptions Slurm refused or did not carry out in time (the job ran on)",
          c.preemptions_failed);
  counter("deepshare_start_rollbacks_total", "Starts Slurm did not honour in time (forgotten)",
          c.rollbacks);
  counter("deepshare_start_deferrals_total",
          "Start decisions not applied: Slurm could not hold the placement this cycle",
          c.deferrals);
  counter("deepshare_job_ends_total", "Jobs that ended after running (any final state)",
          c.completions);
  counter("deepshare_job_cancellations_total", "Jobs that ended while pending", c.cancellations);
  counter("deepshare_untrusted_pins_total",
          "Jobs whose user-writable Comment carried pin keys (ignored)", c.untrusted_pins);
  counter("deepshare_bad_records_total",
          "Jobs with a malformed DeepShare record or a GRES request DeepShare did not write",
          c.bad_records);
  counter("deepshare_ungated_jobs_total",
          "Jobs of the partition without the submission gate's record (left to Slurm)", c.ungated);
  counter("deepshare_refused_jobs_total",
          "Jobs DeepShare cancelled with a reason (unknown account, can never fit)", c.refused);
  counter("deepshare_tenant_reloads_total", "Changes of Slurm accounts or quotas applied",
          c.tenant_reloads);
  counter("deepshare_config_reloads_total", "Configuration reloads applied (SIGHUP)",
          c.config_reloads);
  counter("deepshare_config_reload_errors_total",
          "Configuration reloads refused (the file did not parse or the policy did not build)",
          c.config_reload_errors);
  counter("deepshare_observe_errors_total", "Failed reads of Slurm state (cycle skipped)",
          c.observe_errors);
  w.family("deepshare_cycle_duration_seconds", "histogram",
           "Scheduling cycle latency (observe + decide + apply)");
  w.histogram("deepshare_cycle_duration_seconds", {}, c.cycle_seconds);
  if (c.last_observe_ms > 0) {
    w.family("deepshare_last_observe_timestamp_seconds", "gauge",
             "Unix time of the last successful read of Slurm's jobs (staleness: time() - this)");
    w.sample("deepshare_last_observe_timestamp_seconds",
             static_cast<double>(c.last_observe_ms) / 1000.0);
  }
}

}  // namespace

std::string Controller::metrics_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  driver::PromWriter w;
  const ControllerCounters c = counters();
  const ClusterState* state = core_ ? &core_->state() : nullptr;
  w.family("deepshare_build_info", "gauge", "Build and policy of this controller (value 1)");
  w.sample("deepshare_build_info", {{"version", DEEPSHARE_VERSION}, {"policy", cfg_.policy}}, 1);
  tenant_metrics(w, tenants_.list(), state, core_ ? core_->policy() : nullptr,
                 c.tenant_preemptions);
  w.family("deepshare_tenant_tree_problems", "gauge",
           "Guarantees of Slurm's account tree that do not fit their parent or the partition "
           "(logged as tenant_tree_problem; `deepshare slurm check` lists them)");
  w.sample("deepshare_tenant_tree_problems", static_cast<double>(tenants_.problems().size()));
  static const Cluster none;
  queue_metrics(w, state, adapter_ ? adapter_->cluster() : none);
  counter_metrics(w, c);
  rpc_.write(w);
  w.family("deepshare_jobs_known", "gauge", "Jobs the controller tracks");
  w.sample("deepshare_jobs_known", static_cast<double>(jobs_known()));
  return w.str();
}

}  // namespace ds::slurm
