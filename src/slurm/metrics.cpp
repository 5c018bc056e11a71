// Prometheus text exposition of the controller state (format 0.0.4).
#include <sstream>

#include "slurm/controller.hpp"

namespace ds::slurm {
namespace {

std::string label(const std::string& v) {
  return "{tenant=\"" + json_escape(v) + "\"}";
}

}  // namespace

std::string Controller::metrics_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream o;
  std::vector<TenantTelemetry> tel(tenants_.size());
  if (policy_) policy_->telemetry(tel);
  struct Per {
    int held = 0, borrowed = 0, shared_jobs = 0, running = 0, pending = 0, pending_gpus = 0;
    unsigned preemptions = 0;
  };
  std::vector<Per> per(tenants_.size());
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    Per& p = per[jobs_[i].tenant.index()];
    const JobRuntime& r = rt_[i];
    p.preemptions += r.preemptions;
    if (r.status == JobStatus::Running) {
      ++p.running;
      if (r.shared)
        ++p.shared_jobs;
      else
        p.held += jobs_[i].gpus;
      if (r.borrowed && !r.shared) p.borrowed += jobs_[i].gpus;
    } else if (r.status == JobStatus::Pending) {
      ++p.pending;
      p.pending_gpus += jobs_[i].gpus;
    }
  }
  auto gauge = [&](const char* name, const char* help, auto value) {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n";
    for (std::size_t t = 0; t < tenants_.size(); ++t)
      o << name << label(tenants_[t].name) << ' ' << value(t) << '\n';
  };
  gauge("deepshare_tenant_assurance", "Assurance signal A_t in [0,1] (-1: none)",
        [&](std::size_t t) { return tel[t].assurance; });
  gauge("deepshare_tenant_quota_gpus", "Guaranteed GPUs",
        [&](std::size_t t) { return tenants_[t].quota_gpus; });
  gauge("deepshare_tenant_held_gpus", "GPUs held by running jobs (shared clients excluded)",
        [&](std::size_t t) { return per[t].held; });
  gauge("deepshare_tenant_borrowed_gpus", "GPUs held on capacity lent by other tenants",
        [&](std::size_t t) { return per[t].borrowed; });
  gauge("deepshare_tenant_lent_gpus", "Idle quota currently lent to others",
        [&](std::size_t t) { return tel[t].lent_gpus; });
  gauge("deepshare_tenant_reserve_gpus", "Idle quota held back from lending",
        [&](std::size_t t) { return tel[t].reserve_gpus; });
  gauge("deepshare_tenant_running_jobs", "Running jobs",
        [&](std::size_t t) { return per[t].running; });
  gauge("deepshare_tenant_shared_jobs", "Running jobs colocated on a partner's GPU (MPS)",
        [&](std::size_t t) { return per[t].shared_jobs; });
  gauge("deepshare_tenant_pending_jobs", "Jobs waiting for DeepShare",
        [&](std::size_t t) { return per[t].pending; });
  o << "# HELP deepshare_tenant_preemptions_total Preemptions of this tenant's jobs\n"
       "# TYPE deepshare_tenant_preemptions_total counter\n";
  for (std::size_t t = 0; t < tenants_.size(); ++t)
    o << "deepshare_tenant_preemptions_total" << label(tenants_[t].name) << ' '
      << per[t].preemptions << '\n';
  auto counter = [&](const char* name, const char* help, double v) {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " counter\n"
      << name << ' ' << v << '\n';
  };
  counter("deepshare_cycles_total", "Scheduling cycles", static_cast<double>(counters_.cycles));
  counter("deepshare_decisions_applied_total", "Decisions applied through Slurm",
          static_cast<double>(counters_.applied));
  counter("deepshare_decisions_failed_total", "Decisions Slurm refused",
          static_cast<double>(counters_.failed));
  counter("deepshare_starts_total", "Job starts decided", static_cast<double>(counters_.starts));
  counter("deepshare_preemptions_total", "Preemptions applied",
          static_cast<double>(counters_.preemptions));
  counter("deepshare_preemptions_failed_total",
          "Preemptions Slurm refused or did not carry out in time (the job ran on)",
          static_cast<double>(counters_.preemptions_failed));
  counter("deepshare_start_rollbacks_total", "Starts Slurm did not honour in time (forgotten)",
          static_cast<double>(counters_.rollbacks));
  counter("deepshare_start_deferrals_total",
          "Start decisions not applied: Slurm could not hold the placement this cycle",
          static_cast<double>(counters_.deferrals));
  counter("deepshare_untrusted_pins_total",
          "Jobs whose user-writable Comment carried pin keys (ignored)",
          static_cast<double>(counters_.untrusted_pins));
  counter("deepshare_bad_records_total",
          "Jobs with a malformed DeepShare record or a GRES request DeepShare did not write",
          static_cast<double>(counters_.bad_records));
  counter("deepshare_ungated_jobs_total",
          "Jobs of the partition without the submission gate's record (left to Slurm)",
          static_cast<double>(counters_.ungated));
  counter("deepshare_refused_jobs_total",
          "Jobs DeepShare cancelled with a reason (unknown account, can never fit)",
          static_cast<double>(counters_.refused));
  counter("deepshare_tenant_reloads_total", "Changes of Slurm accounts or quotas applied",
          static_cast<double>(counters_.tenant_reloads));
  counter("deepshare_observe_errors_total", "Failed reads of Slurm state",
          static_cast<double>(counters_.observe_errors));
  o << "# HELP deepshare_cycle_seconds Scheduling cycle latency (observe+decide+apply)\n"
       "# TYPE deepshare_cycle_seconds summary\n"
       "deepshare_cycle_seconds_sum "
    << counters_.cycle_seconds_sum
    << "\n"
       "deepshare_cycle_seconds_count "
    << counters_.cycles
    << "\n"
       "# HELP deepshare_cycle_seconds_max Slowest cycle so far\n# TYPE "
       "deepshare_cycle_seconds_max gauge\n"
       "deepshare_cycle_seconds_max "
    << counters_.cycle_seconds_max
    << "\n"
       "# HELP deepshare_cycle_seconds_last Latest cycle\n# TYPE deepshare_cycle_seconds_last "
       "gauge\n"
       "deepshare_cycle_seconds_last "
    << counters_.cycle_seconds_last
    << "\n"
       "# HELP deepshare_jobs_known Jobs the controller tracks\n# TYPE deepshare_jobs_known gauge\n"
       "deepshare_jobs_known "
    << jobs_.size() << "\n";
  return o.str();
}

}  // namespace ds::slurm
