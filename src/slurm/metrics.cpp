// Prometheus text exposition of the controller state (format 0.0.4): the families every
// driver writes (driver/metrics.hpp: one meaning per name across engines, docs/outputs.md)
// and the Slurm controller's own (records, the gate, reloads, the account tree, RPCs).
#include <sstream>

#include "driver/metrics.hpp"
#include "slurm/controller.hpp"

#ifndef DEEPSHARE_VERSION
#define DEEPSHARE_VERSION "unknown"
#endif

namespace ds::slurm {
namespace {

// The counters only the Slurm controller has (driver/metrics.hpp writes the common ones).
void slurm_counter_metrics(driver::PromWriter& w, const ControllerCounters& c) {
  auto counter = [&](const char* name, const char* help, std::uint64_t v) {
    w.family(name, "counter", help);
    w.sample(name, static_cast<double>(v));
  };
  counter("deepshare_untrusted_pins_total",
          "Jobs whose user-writable Comment carried pin keys (ignored)", c.untrusted_pins);
  counter("deepshare_bad_records_total",
          "Jobs with a malformed DeepShare record or a GRES request DeepShare did not write",
          c.bad_records);
  counter("deepshare_ungated_jobs_total",
          "Jobs of the partition without the submission gate's record (left to Slurm)", c.ungated);
  counter("deepshare_config_reloads_total", "Configuration reloads applied (SIGHUP)",
          c.config_reloads);
  counter("deepshare_config_reload_errors_total",
          "Configuration reloads refused (the file did not parse or the policy did not build)",
          c.config_reload_errors);
}

}  // namespace

std::string Controller::metrics_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  driver::PromWriter w;
  const ControllerCounters c = counters();
  const ClusterState* state = core_ ? &core_->state() : nullptr;
  w.family("deepshare_build_info", "gauge", "Build and policy of this controller (value 1)");
  w.sample("deepshare_build_info", {{"version", DEEPSHARE_VERSION}, {"policy", cfg_.policy}}, 1);
  driver::write_tenant_metrics(w, tenants_.list(), state, core_ ? core_->policy() : nullptr,
                               c.tenant_preemptions);
  w.family("deepshare_tenant_tree_problems", "gauge",
           "Guarantees of Slurm's account tree that do not fit their parent or the partition "
           "(logged as tenant_tree_problem; `deepshare slurm check` lists them)");
  w.sample("deepshare_tenant_tree_problems", static_cast<double>(tenants_.problems().size()));
  static const Cluster none;
  driver::write_queue_metrics(w, state, adapter_ ? adapter_->cluster() : none);
  driver::LoopMetrics m;
  m.cycles = c.cycles;
  m.applied = c.applied;
  m.failed = c.failed;
  m.invalid_decisions = c.invalid_decisions;
  m.starts = c.starts;
  m.preemptions = c.preemptions;
  m.preemptions_failed = c.preemptions_failed;
  m.rollbacks = c.rollbacks;
  m.deferrals = c.deferrals;
  m.completions = c.completions;
  m.cancellations = c.cancellations;
  m.refused = c.refused;
  m.tenant_reloads = c.tenant_reloads;
  m.observe_errors = c.observe_errors;
  m.fenced = c.fenced;
  m.cycle_seconds = &c.cycle_seconds;
  m.last_observe_ms = c.last_observe_ms;
  driver::write_loop_metrics(w, m);
  slurm_counter_metrics(w, c);
  rpc_.write(w);
  w.family("deepshare_jobs_known", "gauge", "Jobs the controller tracks");
  w.sample("deepshare_jobs_known", static_cast<double>(jobs_known()));
  return w.str();
}

}  // namespace ds::slurm
