#include "slurm/ops.hpp"

#include "core/error.hpp"
#include "driver/journal.hpp"
#include "slurm/config.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace ds::slurm {
namespace {

bool same_knobs(const Tenant& a, const Tenant& b) {
  return a.slo_queue == b.slo_queue && a.max_slowdown == b.max_slowdown &&
         a.checkpoint_interval == b.checkpoint_interval;
}

bool same_tenants(const ControllerConfig& a, const ControllerConfig& b) {
  if (a.tenants.size() != b.tenants.size() || !same_knobs(a.tenant_defaults, b.tenant_defaults))
    return false;
  for (std::size_t i = 0; i < a.tenants.size(); ++i) {
    const auto &x = a.tenants[i], &y = b.tenants[i];
    if (x.account != y.account || x.tenant.name != y.tenant.name ||
        !same_knobs(x.tenant, y.tenant) || x.tenant.quota_gpus != y.tenant.quota_gpus ||
        x.tenant.cls != y.tenant.cls || x.tenant.weight != y.tenant.weight)
      return false;
  }
  return true;
}

}  // namespace

ReloadPlan plan_reload(const ControllerConfig& a, const ControllerConfig& b) {
  ReloadPlan p;
  auto restart = [&](bool differs, const char* key) {
    if (differs) p.restart.emplace_back(key);
  };
  restart(a.partition != b.partition, "partition");
  restart(a.time_scale != b.time_scale, "time_scale");
  restart(a.metrics != b.metrics, "metrics");
  restart(a.journal != b.journal, "journal");
  restart(a.gpu_memory_mib != b.gpu_memory_mib, "gpu_memory_mib");
  restart(a.gpu_models != b.gpu_models, "gpu_models");
  restart(a.tenant_source != b.tenant_source, "tenant_source");
  restart(a.quota_tres != b.quota_tres, "quota_tres");
  auto live = [&](bool differs, const char* key) {
    if (differs) p.live.emplace_back(key);
  };
  live(a.poll_ms != b.poll_ms, "poll_ms");
  live(a.start_margin_s != b.start_margin_s, "start_margin_s");
  live(a.tenants_refresh_s != b.tenants_refresh_s, "tenants_refresh_s");
  const bool policy = a.policy != b.policy || a.options != b.options;
  live(a.policy != b.policy, "policy");
  live(a.options != b.options, "options");
  bool tenants = !same_tenants(a, b);
  // With tenant_source: config, the tenant list itself (accounts, their order: the tenant
  // ids) can only change with a restart; quotas and knobs of the same accounts apply live.
  if (tenants && a.tenant_source == TenantSource::Config && b.tenant_source == a.tenant_source) {
    bool same_accounts = a.tenants.size() == b.tenants.size();
    for (std::size_t i = 0; same_accounts && i < a.tenants.size(); ++i)
      same_accounts = a.tenants[i].account == b.tenants[i].account;
    if (!same_accounts) {
      p.restart.emplace_back("tenants");
      tenants = false;
    }
  }
  if (tenants && a.tenant_source != b.tenant_source) tenants = false;
  live(tenants, "tenants");
  p.rebuild_policy = policy || tenants;
  return p;
}

void start_replay_journal(const std::string& path, std::int64_t wall0_ms, std::int64_t origin,
                          double scale) {
  driver::start_marked_journal(path, driver::DriverClock{wall0_ms, origin, scale},
                               kReplayJournalMarker);
}

}  // namespace ds::slurm
