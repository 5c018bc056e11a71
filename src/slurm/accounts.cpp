#include "slurm/accounts.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/error.hpp"
#include "model/tenant_tree.hpp"

namespace ds::slurm {

Accounts accounts_of(const std::vector<Association>& assocs) {
  Accounts out;
  for (const auto& a : assocs) {
    if (!a.user.empty() || !a.partition.empty() || a.account == "root") continue;
    Account& acc = out[a.account];
    acc.parent = a.parent == "root" ? "" : a.parent;
    acc.grp_quota = a.grp_quota;
    acc.shares = a.shares;
  }
  return out;
}

std::vector<std::string> apply_accounts(std::vector<Tenant>& tenants, const Accounts& accounts,
                                        int cluster_gpus) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t t = 0; t < tenants.size(); ++t) index.emplace(tenants[t].name, t);
  for (std::size_t t = 0; t < tenants.size(); ++t) {
    Tenant& x = tenants[t];
    x.parent = TenantId();
    x.tree_quota_gpus = -1;
    const auto it = accounts.find(x.name);
    if (it == accounts.end()) {
      x.quota_gpus = 0;  // a deleted account keeps its tenant id, with no quota
      continue;
    }
    const Account& a = it->second;
    x.quota_gpus = static_cast<int>(std::clamp<std::int64_t>(a.grp_quota, 0, 1 << 20));
    x.tree_quota_gpus = a.grp_quota < 0 ? -1 : x.quota_gpus;
    x.weight = static_cast<double>(a.shares);
    if (const auto p = index.find(a.parent);
        !a.parent.empty() && p != index.end() && p->second != t) {
      x.parent = TenantId(static_cast<std::uint32_t>(p->second));
    }
  }
  std::vector<std::string> problems;
  try {
    problems = resolve_tenant_tree(tenants, cluster_gpus);
  } catch (const InputError& e) {  // Slurm keeps a tree; a cycle here would be a bug of ours
    problems.push_back(e.what());
    for (auto& x : tenants) x.parent = TenantId();
  }
  for (auto& x : tenants)
    if (accounts.count(x.name))
      x.cls = x.quota_gpus > 0 ? TenantClass::Guaranteed : TenantClass::BestEffort;
  return problems;
}

}  // namespace ds::slurm
