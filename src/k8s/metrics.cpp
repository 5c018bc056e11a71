// `deepshare k8s run`'s Prometheus exposition (scheduler.hpp): the families every driver
// writes (driver/metrics.hpp: the same names and meanings as `deepshare slurm run`,
// docs/outputs.md) and the Kubernetes adapter's own (deepshare_k8s_*).
#include "driver/metrics.hpp"
#include "k8s/scheduler.hpp"

#ifndef DEEPSHARE_VERSION
#define DEEPSHARE_VERSION "unknown"
#endif

namespace ds::k8s {

std::string PodScheduler::metrics_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  driver::PromWriter w;
  const SchedulerCounters c = counters();
  const ClusterState* state = core_ ? &core_->state() : nullptr;
  w.family("deepshare_build_info", "gauge", "Build and policy of this controller (value 1)");
  w.sample("deepshare_build_info", {{"version", DEEPSHARE_VERSION}, {"policy", cfg_.policy}}, 1);
  driver::write_tenant_metrics(w, cfg_.tenants, state, core_ ? core_->policy() : nullptr,
                               c.core.tenant_preemptions);
  static const Cluster none;
  driver::write_queue_metrics(w, state, adapter_ ? adapter_->cluster() : none);
  driver::LoopMetrics m;
  m.cycles = c.cycles;
  m.applied = c.core.applied;
  m.failed = c.core.failed;
  m.invalid_decisions = c.core.invalid_decisions;
  m.starts = c.core.starts;
  m.preemptions = c.core.preemptions;
  m.preemptions_failed = c.core.preemptions_failed;
  m.rollbacks = c.core.rollbacks;
  m.deferrals = c.core.deferrals;
  m.completions = c.core.completions;
  m.cancellations = c.core.cancellations;
  m.refused = c.adapter.refused + c.core.rejections;  // told why, either way
  m.tenant_reloads = c.tenant_reloads;
  m.fenced = c.fenced;
  m.cycle_seconds = &c.cycle_seconds;
  m.last_observe_ms = c.last_observe_ms;
  driver::write_loop_metrics(w, m);
  auto counter = [&](const char* name, const char* help, std::uint64_t v) {
    w.family(name, "counter", help);
    w.sample(name, static_cast<double>(v));
  };
  counter("deepshare_k8s_binds_total", "Bindings (pods/binding) the API accepted", c.adapter.binds);
  counter("deepshare_k8s_evictions_total", "Evictions (policy/v1) the API accepted",
          c.adapter.evictions);
  counter("deepshare_k8s_api_failures_total",
          "API calls refused or unanswered (binding, eviction, annotation, Event, condition)",
          c.adapter.api_failures);
  counter("deepshare_k8s_wait_conditions_total",
          "PodScheduled=False conditions written for waiting pods (once per change of reason)",
          c.adapter.wait_conditions);
  counter("deepshare_k8s_hand_over_waits_total",
          "Bindings deferred because the API still showed the node's nvidia.com/gpu held",
          c.adapter.waits_for_gpus);
  w.family("deepshare_k8s_bind_duration_seconds", "histogram",
           "Bindings sent beside the loop: from the hand-over to the API's answer");
  w.histogram("deepshare_k8s_bind_duration_seconds", {}, c.adapter.bind_seconds);
  w.family("deepshare_k8s_writes_queued", "gauge",
           "Writes waiting for the binder's workers (lane: bindings, or notes: Events and "
           "waiting pods' conditions)");
  w.sample("deepshare_k8s_writes_queued", {{"lane", "bindings"}},
           static_cast<double>(c.binds_queued));
  w.sample("deepshare_k8s_writes_queued", {{"lane", "notes"}}, static_cast<double>(c.notes_queued));
  w.family("deepshare_leader", "gauge",
           "1 while this scheduler holds the Lease and acts (or runs without one), else 0");
  w.sample("deepshare_leader",
           fence_.deposed() || (fence_.lease() && !fence_.lease()->held()) ? 0 : 1);
  w.family("deepshare_jobs_known", "gauge", "Jobs the controller tracks");
  w.sample("deepshare_jobs_known", core_ ? static_cast<double>(core_->book().size()) : 0.0);
  return w.str();
}

}  // namespace ds::k8s
