// A tenant: a team or virtual cluster with a guaranteed GPU quota and an SLO. Tenants may
// form trees (Slurm's account hierarchy): model/tenant_tree.hpp resolves a tree's quotas into
// each tenant's own guarantee, `quota_gpus`, which is all that policies without a notion of
// trees read.
#pragma once

#include <string>

#include "core/types.hpp"

namespace ds {

enum class TenantClass : std::uint8_t { Guaranteed, BestEffort };

struct Tenant {
  TenantId id;
  std::string name;
  int quota_gpus = 0;             // guaranteed GPUs of its own jobs (Venus: the VC's GPUs)
  Time slo_queue = seconds(300);  // target queueing delay W_t for entitled jobs
  double max_slowdown = 1.5;      // largest tolerated sharing slowdown (run time factor)
  TenantClass cls = TenantClass::Guaranteed;
  double weight = 1.0;
  Time checkpoint_interval = 30 * kMinute;  // 0: a job checkpoints when it is preempted
  // In a tenant tree: the parent (invalid: a top-level tenant), and the configured quota of
  // the tenant with its whole subtree (Slurm's GrpTRES on the account; -1: none of its own,
  // it shares its parent's). Flat tenants leave both unset.
  TenantId parent{};
  int tree_quota_gpus = -1;
};

const char* to_string(TenantClass c);

}  // namespace ds
