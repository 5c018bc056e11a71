// Slurm's priority/multifactor plugin for the `slurm` baseline (slurm.hpp): the Fair Tree
// fair-share factor over accounts and the weighted sum that is a job's priority.
//
// Source (read, not copied; SchedMD/slurm at tag slurm-22-05-8-1, the version Debian 12
// ships and the test cluster runs): doc/html/priority_multifactor.shtml ("Age Factor", "Job
// Size Factor", "TRES Factors", "Configuration"), doc/html/fair_tree.shtml ("Algorithm",
// "Ties"), src/plugins/priority/multifactor/priority_multifactor.c (set_priority_factors,
// _get_priority_internal, the decay thread) and fair_tree.c (_calc_assoc_fs, _calc_tree_fs).
//
// Assumptions:
//  - The association tree of a site that gives each tenant an account under root: the root
//    account holds the tenants' accounts and root's own user association (which runs no
//    job), and each account holds one user association; an account's users share its
//    factor (Fairshare=parent). Shares (sacctmgr Fairshare=) = the tenant's quota GPUs,
//    root's user 1.
//  - Usage is GPU-seconds (TRESBillingWeights="GRES/gpu=1.0" on the partition), decayed with
//    PriorityDecayHalfLife: per second by d = 1 - ln 2 / half-life, a new piece of run time
//    delta counting delta * d^delta, every PriorityCalcPeriod (as the decay thread does).
//
// Fair Tree (fair_tree.shtml): among siblings, level fair-share LF = S / U with S = shares /
// the siblings' shares and U = usage / the parent's usage (U = 0: LF = infinity; S = 0:
// LF = 0). Siblings are sorted by LF, highest first (a user before an account on ties);
// users get ranks from N (the number of user associations) down, tied ones the same rank;
// fs_factor = rank / N.
//
// Priority (priority_multifactor.shtml): sum of weight_i x factor_i, each factor in [0, 1]:
//  - age = min(1, (now - eligible) / PriorityMaxAge), eligible = when the job could first run
//    (its submit, or after a requeue the end of the requeue delay: accrue time);
//  - fair-share = the account's fs_factor;
//  - job size (PriorityFavorSmall=NO) = (nodes / cluster nodes + CPUs / cluster CPUs) / 2,
//    with GPUs for CPUs (the jobs of a GPU cluster ask CPUs in proportion to GPUs; the
//    testbed's replay does: deploy/slurm/native/README.md);
//  - QOS = the QOS's priority / the highest QOS priority (tenant QOS 1, scavenger 0);
//  - TRES (PriorityWeightTRES=GRES/gpu=W) = GPUs / the partition's GPUs.
// The sum is truncated to an unsigned 32-bit integer, at least 1 (0 means held).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/types.hpp"
#include "model/tenant.hpp"

namespace ds {

struct SlurmWeights {
  // priority_multifactor.shtml "Configuration Example"; QOS weight above the sum of the
  // others so that every tenant-QOS job orders before every scavenger job.
  double age = 1000;
  double fairshare = 10000;
  double job_size = 1000;
  double qos = 100000;
  double tres_gpu = 0;
};

struct SlurmPriorityConfig {
  SlurmWeights weights;
  Time half_life = 7 * kDay;       // PriorityDecayHalfLife (Slurm's default 7-0); 0: no decay
  Time max_age = 7 * kDay;         // PriorityMaxAge (default 7-0)
  Time calc_period = 5 * kMinute;  // PriorityCalcPeriod (default 5 minutes)
};

// Per-account decayed usage and the Fair Tree factors computed from it.
class FairTree {
 public:
  FairTree(std::span<const Tenant> tenants, Time half_life);
  // Decays every account's usage by d^elapsed (the decay thread's _apply_decay).
  void decay(Time elapsed);
  // Adds a piece of run time `delta` of `gpus` GPUs: gpus x delta x d^delta GPU-seconds.
  void add_run(std::size_t tenant, int gpus, Time delta);
  // Recomputes every account's fs_factor from the usage (once per PriorityCalcPeriod).
  void rank();
  [[nodiscard]] double factor(std::size_t tenant) const { return factor_[tenant]; }
  [[nodiscard]] double usage(std::size_t tenant) const { return usage_[tenant]; }
  [[nodiscard]] double level_fs(std::size_t tenant) const;

 private:
  double per_second_ = 1.0;  // d
  std::vector<double> shares_, usage_, factor_;
  double root_user_shares_ = 1;
  Time weight_delta_ = -1;  // add_run's last delta and its d^delta
  double weight_ = 1.0;
};

struct PriorityInputs {
  Time now = 0;
  Time eligible = 0;  // accrue time
  int gpus = 1;
  int nodes = 1;
  bool tenant_qos = true;  // false: the scavenger QOS
  double fs_factor = 1;
  int cluster_nodes = 1;
  int cluster_gpus = 1;
};

// The job's priority as _get_priority_internal computes it (no site factor, nice 0).
std::uint32_t slurm_priority(const SlurmPriorityConfig& config, const PriorityInputs& job);

}  // namespace ds
