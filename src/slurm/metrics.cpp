// Prometheus text exposition of the controller state (format 0.0.4), following the naming
// conventions (ops.hpp): units last, `_total` counters, histograms for latencies, and no
// sentinel values (a tenant without an assurance signal has no assurance series).
#include <sstream>

#include "driver/lending.hpp"
#include "slurm/controller.hpp"

#ifndef DEEPSHARE_VERSION
#define DEEPSHARE_VERSION "unknown"
#endif

namespace ds::slurm {

std::string Controller::metrics_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  driver::PromWriter w;
  std::vector<TenantTelemetry> tel(tenants_.size());
  if (policy_) policy_->telemetry(tel);
  // Per-tenant usage as ClusterState counts it (colocated clients hold no GPU of their own).
  auto usage = [&](std::size_t t) {
    return state_ ? state_->usage(TenantId(static_cast<std::uint32_t>(t))) : TenantUsage{};
  };
  std::vector<long> by_reason(kWaitReasons, 0);
  if (state_)
    for (JobId id : state_->pending()) ++by_reason[static_cast<std::size_t>(rt(id).wait)];
  std::vector<int> quota(tenants_.size()), held(tenants_.size());
  for (std::size_t t = 0; t < tenants_.size(); ++t) {
    quota[t] = tenants_[t].quota_gpus;
    held[t] = static_cast<int>((usage(t).held - usage(t).colocated) / kMilliPerGpu);
  }
  const driver::Lending lend = driver::account_lending(quota, held);
  auto tenant = [&](std::size_t t) {
    return driver::PromWriter::Labels{{"tenant", tenants_[t].name}};
  };
  auto per_tenant = [&](const char* name, const char* type, const char* help, auto value) {
    w.family(name, type, help);
    for (std::size_t t = 0; t < tenants_.size(); ++t)
      w.sample(name, tenant(t), static_cast<double>(value(t)));
  };

  w.family("deepshare_build_info", "gauge", "Build and policy of this controller (value 1)");
  w.sample("deepshare_build_info", {{"version", DEEPSHARE_VERSION}, {"policy", cfg_.policy}}, 1);
  // Only the tenants a policy gives an assurance signal (DeepShare: all; baselines: none).
  w.family("deepshare_tenant_assurance", "gauge",
           "Assurance signal A_t in [0,1] (only policies that compute one)");
  for (std::size_t t = 0; t < tenants_.size(); ++t)
    if (tel[t].assurance >= 0) w.sample("deepshare_tenant_assurance", tenant(t), tel[t].assurance);
  w.family("deepshare_tenant_reserve_gpus", "gauge",
           "Idle quota the policy holds back from lending (only policies with an assurance "
           "signal)");
  for (std::size_t t = 0; t < tenants_.size(); ++t)
    if (tel[t].assurance >= 0)
      w.sample("deepshare_tenant_reserve_gpus", tenant(t), tel[t].reserve_gpus);
  per_tenant("deepshare_tenant_quota_gpus", "gauge", "Guaranteed GPUs (the account's GrpTRES)",
             [&](std::size_t t) { return tenants_[t].quota_gpus; });
  per_tenant("deepshare_tenant_held_gpus", "gauge",
             "GPUs held by running jobs (colocated clients excluded)",
             [&](std::size_t t) { return held[t]; });
  per_tenant("deepshare_tenant_borrowed_gpus", "gauge",
             "GPUs held beyond the quota (sum over tenants = lent + unowned)",
             [&](std::size_t t) { return lend.borrowed[t]; });
  per_tenant("deepshare_tenant_lent_gpus", "gauge",
             "Idle quota in use by other tenants' borrowed jobs",
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
  per_tenant(
      "deepshare_tenant_preemptions_total", "counter",
      "Preemptions of this tenant's jobs decided by the controller since it started (Slurm's "
      "own requeues, e.g. node failures, not counted)",
      [&](std::size_t t) {
        return t < counters_.tenant_preemptions.size() ? counters_.tenant_preemptions[t] : 0;
      });
  w.family("deepshare_unowned_borrowed_gpus", "gauge",
           "Borrowed GPUs no tenant's quota covers (cluster capacity beyond all quotas)");
  w.sample("deepshare_unowned_borrowed_gpus", lend.unowned);
  w.family("deepshare_pending_jobs", "gauge",
           "Pending jobs by the waiting reason the policy last stated");
  for (int r = 0; r < kWaitReasons; ++r)
    if (by_reason[static_cast<std::size_t>(r)] > 0)
      w.sample("deepshare_pending_jobs", {{"reason", to_string(static_cast<WaitReason>(r))}},
               static_cast<double>(by_reason[static_cast<std::size_t>(r)]));
  int busy = 0;
  const auto gpus = static_cast<std::size_t>(cluster_.total_gpus());
  for (std::size_t g = 0; state_ && g < gpus; ++g) busy += state_->gpu(g).jobs > 0;
  w.family("deepshare_gpus", "gauge", "GPUs of the partition's nodes");
  w.sample("deepshare_gpus", static_cast<double>(gpus));
  w.family("deepshare_busy_gpus", "gauge",
           "GPUs with at least one job (any partition), or on a node that is down");
  w.sample("deepshare_busy_gpus", busy);

  auto counter = [&](const char* name, const char* help, std::uint64_t v) {
    w.family(name, "counter", help);
    w.sample(name, static_cast<double>(v));
  };
  counter("deepshare_cycles_total", "Scheduling cycles", counters_.cycles);
  counter("deepshare_decisions_applied_total", "Decisions applied through Slurm",
          counters_.applied);
  counter("deepshare_decisions_failed_total", "Decisions Slurm refused", counters_.failed);
  counter("deepshare_decisions_invalid_total",
          "Decisions the cluster state refused as invalid (a policy bug: skipped, logged as "
          "decision_invalid)",
          counters_.invalid_decisions);
  counter("deepshare_starts_total", "Job starts decided", counters_.starts);
  counter("deepshare_preemptions_total", "Preemptions applied (sum of the tenants' counters)",
          counters_.preemptions);
  counter("deepshare_preemptions_failed_total",
          "Preemptions Slurm refused or did not carry out in time (the job ran on)",
          counters_.preemptions_failed);
  counter("deepshare_start_rollbacks_total", "Starts Slurm did not honour in time (forgotten)",
          counters_.rollbacks);
  counter("deepshare_start_deferrals_total",
          "Start decisions not applied: Slurm could not hold the placement this cycle",
          counters_.deferrals);
  counter("deepshare_job_ends_total", "Jobs that ended after running (any final state)",
          counters_.completions);
  counter("deepshare_job_cancellations_total", "Jobs that ended while pending",
          counters_.cancellations);
  counter("deepshare_untrusted_pins_total",
          "Jobs whose user-writable Comment carried pin keys (ignored)", counters_.untrusted_pins);
  counter("deepshare_bad_records_total",
          "Jobs with a malformed DeepShare record or a GRES request DeepShare did not write",
          counters_.bad_records);
  counter("deepshare_ungated_jobs_total",
          "Jobs of the partition without the submission gate's record (left to Slurm)",
          counters_.ungated);
  counter("deepshare_refused_jobs_total",
          "Jobs DeepShare cancelled with a reason (unknown account, can never fit)",
          counters_.refused);
  counter("deepshare_tenant_reloads_total", "Changes of Slurm accounts or quotas applied",
          counters_.tenant_reloads);
  w.family("deepshare_tenant_tree_problems", "gauge",
           "Guarantees of Slurm's account tree that do not fit their parent or the partition "
           "(logged as tenant_tree_problem; `deepshare slurm check` lists them)");
  w.sample("deepshare_tenant_tree_problems", static_cast<double>(tree_problems_.size()));
  counter("deepshare_config_reloads_total", "Configuration reloads applied (SIGHUP)",
          counters_.config_reloads);
  counter("deepshare_config_reload_errors_total",
          "Configuration reloads refused (the file did not parse or the policy did not build)",
          counters_.config_reload_errors);
  counter("deepshare_observe_errors_total", "Failed reads of Slurm state (cycle skipped)",
          counters_.observe_errors);
  w.family("deepshare_cycle_duration_seconds", "histogram",
           "Scheduling cycle latency (observe + decide + apply)");
  w.histogram("deepshare_cycle_duration_seconds", {}, counters_.cycle_seconds);
  if (counters_.last_observe_ms > 0) {
    w.family("deepshare_last_observe_timestamp_seconds", "gauge",
             "Unix time of the last successful read of Slurm's jobs (staleness: time() - this)");
    w.sample("deepshare_last_observe_timestamp_seconds",
             static_cast<double>(counters_.last_observe_ms) / 1000.0);
  }
  rpc_.write(w);
  w.family("deepshare_jobs_known", "gauge", "Jobs the controller tracks");
  w.sample("deepshare_jobs_known", static_cast<double>(jobs_.size()));
  return w.str();
}

}  // namespace ds::slurm
