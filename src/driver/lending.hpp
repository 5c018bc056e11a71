// The lent / borrowed accounting of an online driver's metrics, one definition for every
// policy and engine (docs/outputs.md, "borrowed"; docs/slurm.md §10): a tenant borrows the
// GPUs it holds beyond its quota; those GPUs come out of other tenants' idle quota (lent,
// shared out in proportion to the idle quota) or out of capacity no quota covers, so that
// sum(lent) + unowned = sum(borrowed).
#pragma once

#include <span>
#include <vector>

namespace ds::driver {

struct Lending {
  std::vector<int> borrowed;  // per tenant: GPUs held beyond its quota
  std::vector<int> lent;      // per tenant: its idle quota that borrowers use
  int unowned = 0;            // borrowed GPUs that no tenant's quota covers
};
// quota[t], held[t]: whole GPUs (colocated clients hold none of their own).
Lending account_lending(std::span<const int> quota, std::span<const int> held);

}  // namespace ds::driver
