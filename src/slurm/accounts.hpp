// Slurm's account hierarchy as DeepShare's tenant tree (model/tenant_tree.hpp).
//
// Tenants are Slurm accounts (docs/slurm.md §4). slurmdbd keeps accounts as a tree under
// `root` (`sacctmgr add account nlp parent=research`); an account's own association (no
// user, no partition) carries its parent, its GrpTRES on the quota TRES and its Fairshare.
// Assumptions: Slurm's `root` is no tenant (its children are top-level tenants); an
// account's GrpTRES is the guarantee of the account with its whole subtree (Slurm's GrpTRES
// limits the subtree's use the same way), none set means it shares its parent's.
// Algorithm: the accounts (sorted by name) -> each tenant's parent, configured quota and weight
// -> resolve_tenant_tree (a parent's quota bounds its children; problems reported) -> class:
// guaranteed when the resolved own quota is above 0. Without sub-accounts every tenant's
// quota is its account's GrpTRES, as before trees.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/tenant.hpp"
#include "slurm/ports.hpp"

namespace ds::slurm {

struct Account {
  std::string parent;           // "" for root's children
  std::int64_t grp_quota = -1;  // -1: none set
  std::uint32_t shares = 1;
};
using Accounts = std::map<std::string, Account>;

// The accounts' own associations (no user, no partition), Slurm's root left out.
Accounts accounts_of(const std::vector<Association>& assocs);

// Sets each tenant's parent, configured and resolved quota, class and weight from the account
// of its name; a tenant whose account is gone keeps no quota and no parent. Returns the
// tree's problems (tenant_tree.hpp). `cluster_gpus` < 0: no cluster check.
std::vector<std::string> apply_accounts(std::vector<Tenant>& tenants, const Accounts& accounts,
                                        int cluster_gpus);

}  // namespace ds::slurm
