// DeepShare's tenants on Slurm: the accounts, with their quotas (docs/slurm.md §2). From
// the configuration (tenant_source: config: replays, clusters without slurmdbd) or from
// Slurm's associations: every account except Slurm's own `root`, its quota the GrpTRES of
// quota_tres (none set: 0, best-effort), its weight the Fairshare; DeepShare's knobs (SLO,
// tolerated slowdown, checkpoint interval) from the configuration. Accounts nest as Slurm nests
// them (a tenant tree: accounts.hpp, model/tenant_tree.hpp). Accounts are appended, so
// tenant ids stay stable; a removed account keeps its id with quota 0.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver/log.hpp"
#include "model/tenant.hpp"
#include "slurm/config.hpp"
#include "slurm/ports.hpp"

namespace ds::slurm {

class Tenants {
 public:
  Tenants(const ControllerConfig& cfg, driver::Log& log) : cfg_(cfg), log_(log) {}
  // Reads them (at init: throws InputError when Slurm's associations cannot be read); returns
  // whether they changed after init (added, quota, weight or parent changed, removed).
  // `partition_gpus`: what the tree's guarantees are checked against (-1: not checked).
  bool load(ClusterSource& source, bool at_init, std::int64_t wall_ms, int partition_gpus);
  [[nodiscard]] TenantId of(const std::string& account) const;
  [[nodiscard]] const std::vector<Tenant>& list() const { return tenants_; }
  // The tenants with new knobs (a configuration reload).
  void replace(std::vector<Tenant> tenants) { tenants_ = std::move(tenants); }
  // Per tenant: the Slurm account (log context).
  [[nodiscard]] std::vector<std::string> labels() const;
  [[nodiscard]] std::int64_t loaded_wall() const { return loaded_wall_; }
  // The account tree's guarantees that do not fit (tenant_tree.hpp), as last read.
  [[nodiscard]] const std::vector<std::string>& problems() const { return problems_; }

 private:
  bool load_associations(ClusterSource& source, bool at_init, int partition_gpus);
  void report_tree(std::vector<std::string> problems);

  const ControllerConfig& cfg_;
  driver::Log& log_;
  std::vector<Tenant> tenants_;
  std::unordered_map<std::string, std::size_t> by_account_;
  std::int64_t loaded_wall_ = 0;
  std::vector<std::string> problems_;
};

}  // namespace ds::slurm
