// The lent / over-quota accounting of an online driver's metrics, one definition for every
// policy and engine (docs/outputs.md; docs/slurm.md §10): the GPUs a tenant holds beyond its
// quota come out of other tenants' idle quota (lent, shared out in proportion to the idle
// quota) or out of capacity no quota covers, so that sum(lent) + unowned = sum(over_quota).
// (Not the same as "borrowed": the GPUs of jobs a policy started on borrowed, preemptible
// capacity, which a policy may do within the quota too; ClusterState counts those.)
#pragma once

#include <span>
#include <vector>

namespace ds::driver {

struct Lending {
  std::vector<int> over_quota;  // per tenant: GPUs held beyond its quota
  std::vector<int> lent;        // per tenant: its idle quota that others' over-quota GPUs use
  int unowned = 0;              // over-quota GPUs that no tenant's idle quota covers
};
// quota[t], held[t]: whole GPUs (colocated clients hold none of their own).
Lending account_lending(std::span<const int> quota, std::span<const int> held);

}  // namespace ds::driver
