#include "slurm/tenants.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "slurm/accounts.hpp"

namespace ds::slurm {

TenantId Tenants::of(const std::string& account) const {
  auto it = by_account_.find(account);
  return it == by_account_.end() ? TenantId() : TenantId(static_cast<std::uint32_t>(it->second));
}

std::vector<std::string> Tenants::labels() const {
  std::vector<std::string> out;
  for (std::size_t t = 0; t < tenants_.size(); ++t)
    out.push_back(cfg_.tenant_source == TenantSource::Config && t < cfg_.tenants.size()
                      ? cfg_.tenants[t].account
                      : tenants_[t].name);
  return out;
}

// A tree whose guarantees do not fit (a sub-account's GrpTRES above its parent's, more than
// the partition): logged when the problems change (the metric counts them).
void Tenants::report_tree(std::vector<std::string> problems) {
  if (problems == problems_) return;
  for (const auto& p : problems) log_.warn("tenant_tree_problem", {{"detail", p}});
  if (problems.empty() && !problems_.empty()) log_.info("tenant_tree_fits");
  problems_ = std::move(problems);
}

bool Tenants::load(ClusterSource& source, bool at_init, std::int64_t wall_ms, int partition_gpus) {
  loaded_wall_ = wall_ms;
  if (cfg_.tenant_source == TenantSource::Slurm)
    return load_associations(source, at_init, partition_gpus);
  if (!at_init) return false;
  for (const auto& t : cfg_.tenants) {
    by_account_[t.account] = tenants_.size();
    tenants_.push_back(t.tenant);
    tenants_.back().id = TenantId(static_cast<std::uint32_t>(tenants_.size() - 1));
  }
  return false;
}

bool Tenants::load_associations(ClusterSource& source, bool at_init, int partition_gpus) {
  auto assocs = source.associations(cfg_.quota_tres);
  if (!assocs) {
    if (at_init) throw InputError("cannot read Slurm's associations: " + source.last_error());
    log_.warn("tenants_read_failed", {{"error", source.last_error()}});
    return false;
  }
  const Accounts accounts = accounts_of(*assocs);
  std::vector<Tenant> next = tenants_;
  for (const auto& [account, a] : accounts) {
    if (by_account_.count(account)) continue;
    Tenant t = cfg_.knobs_for(account);
    t.name = account;
    t.id = TenantId(static_cast<std::uint32_t>(next.size()));
    by_account_[account] = next.size();
    next.push_back(t);
  }
  // The account tree resolved (accounts.hpp): parents, guarantees, classes, weights.
  report_tree(apply_accounts(next, accounts, partition_gpus));
  bool changed = next.size() != tenants_.size();
  for (std::size_t i = 0; i < next.size(); ++i) {
    Tenant& t = next[i];
    if (!accounts.count(t.name)) t.cls = TenantClass::BestEffort;  // removed: no quota
    if (i >= tenants_.size()) {
      if (!at_init) log_.info("tenant_added", {{"account", t.name}, {"quota_gpus", t.quota_gpus}});
      continue;
    }
    const Tenant& cur = tenants_[i];
    if (cur.quota_gpus == t.quota_gpus && cur.weight == t.weight && cur.cls == t.cls &&
        cur.parent == t.parent && cur.tree_quota_gpus == t.tree_quota_gpus)
      continue;
    changed = true;
    if (!accounts.count(t.name))
      log_.info("tenant_removed", {{"account", t.name}});
    else
      log_.info("tenant_changed", {{"account", t.name},
                                   {"quota_gpus", t.quota_gpus},
                                   {"was", cur.quota_gpus},
                                   {"weight", t.weight}});
  }
  tenants_ = std::move(next);
  return changed && !at_init;
}

}  // namespace ds::slurm
