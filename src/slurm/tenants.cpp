#include "slurm/tenants.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"

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

bool Tenants::load(ClusterSource& source, bool at_init, std::int64_t wall_ms) {
  loaded_wall_ = wall_ms;
  if (cfg_.tenant_source == TenantSource::Slurm) return load_associations(source, at_init);
  if (!at_init) return false;
  for (const auto& t : cfg_.tenants) {
    by_account_[t.account] = tenants_.size();
    tenants_.push_back(t.tenant);
    tenants_.back().id = TenantId(static_cast<std::uint32_t>(tenants_.size() - 1));
  }
  return false;
}

bool Tenants::load_associations(ClusterSource& source, bool at_init) {
  auto assocs = source.associations(cfg_.quota_tres);
  if (!assocs) {
    if (at_init) throw InputError("cannot read Slurm's associations: " + source.last_error());
    log_.warn("tenants_read_failed", {{"error", source.last_error()}});
    return false;
  }
  std::map<std::string, Association> accounts;
  for (const auto& a : *assocs)
    if (a.user.empty() && a.partition.empty() && a.account != "root") accounts[a.account] = a;
  bool changed = false;
  for (const auto& [account, a] : accounts) {
    Tenant t = cfg_.knobs_for(account);
    t.name = account;
    t.quota_gpus = static_cast<int>(std::clamp<std::int64_t>(a.grp_quota, 0, 1 << 20));
    t.cls = t.quota_gpus > 0 ? TenantClass::Guaranteed : TenantClass::BestEffort;
    t.weight = static_cast<double>(a.shares);
    auto it = by_account_.find(account);
    if (it == by_account_.end()) {
      t.id = TenantId(static_cast<std::uint32_t>(tenants_.size()));
      by_account_[account] = tenants_.size();
      tenants_.push_back(t);
      changed = true;
      if (!at_init) log_.info("tenant_added", {{"account", account}, {"quota_gpus", t.quota_gpus}});
      continue;
    }
    Tenant& cur = tenants_[it->second];
    if (cur.quota_gpus != t.quota_gpus || cur.weight != t.weight || cur.cls != t.cls) {
      log_.info("tenant_changed", {{"account", account},
                                   {"quota_gpus", t.quota_gpus},
                                   {"was", cur.quota_gpus},
                                   {"weight", t.weight}});
      t.id = cur.id;
      cur = t;
      changed = true;
    }
  }
  for (auto& t : tenants_) {
    if (accounts.count(t.name) || (t.quota_gpus == 0 && t.cls == TenantClass::BestEffort)) continue;
    log_.info("tenant_removed", {{"account", t.name}});
    t.quota_gpus = 0;
    t.cls = TenantClass::BestEffort;
    changed = true;
  }
  return changed && !at_init;
}

}  // namespace ds::slurm
