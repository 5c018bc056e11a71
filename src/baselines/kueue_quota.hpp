// Kueue's quota arithmetic for one resource (GPUs) in one flat cohort: what a tenant
// (ClusterQueue) may still use, whether it borrows, and its dominant resource share.
//
// Source: kubernetes-sigs/kueue @ff69552, pkg/cache/scheduler/resource_node.go
// (localQuota, LocalAvailable, available, potentialAvailable, accumulateFromChild),
// pkg/cache/scheduler/fair_sharing.go (dominantResourceShare, CompareDRS).
//
// Assumptions: one cohort holding every tenant (no nested cohorts, one resource flavor),
// nominal quota = the tenant's guaranteed GPUs, optional lending / borrowing limits.
// Algorithm (u_t = GPUs admitted for tenant t, Q_t nominal, L_t lending limit, B_t
// borrowing limit):
//  1. local_t = max(0, Q_t - L_t) when L_t is set, else 0: quota never lent.
//  2. cohort quota C = sum_t (Q_t - local_t); cohort usage U = sum_t max(0, u_t - local_t).
//  3. available_t = max(0, local_t - u_t) + min(C - U, (Q_t - local_t) -
//     max(0, u_t - local_t) + B_t) (the min only with B_t set). Without a cohort:
//     available_t = Q_t - u_t.
//  4. potential_t = local_t + C, capped at Q_t + B_t: the most t can ever hold.
//  5. DRS_t(extra) = max(0, u_t + extra - Q_t) x 1000 / C / weight_t (0 when not
//     borrowing; +inf for a borrowing tenant of weight 0).
#pragma once

#include <limits>
#include <span>
#include <vector>

#include "model/tenant.hpp"

namespace ds {

struct KueueLimits {
  bool cohort = true;
  int lending_limit = -1;    // GPUs each tenant may lend at most; -1: no limit
  int borrowing_limit = -1;  // GPUs each tenant may borrow at most; -1: no limit
};

class CohortQuota {
 public:
  CohortQuota(std::span<const Tenant> tenants, const KueueLimits& limits);

  void add(std::size_t t, int gpus);
  void remove(std::size_t t, int gpus);

  [[nodiscard]] int usage(std::size_t t) const { return usage_[t]; }
  [[nodiscard]] int nominal(std::size_t t) const { return nominal_[t]; }
  [[nodiscard]] int available(std::size_t t) const;
  [[nodiscard]] int potential(std::size_t t) const;
  [[nodiscard]] bool borrowing(std::size_t t, int extra = 0) const {
    return usage_[t] + extra > nominal_[t];
  }
  [[nodiscard]] double drs(std::size_t t, int extra = 0) const;
  [[nodiscard]] std::size_t size() const { return usage_.size(); }

 private:
  [[nodiscard]] int local(std::size_t t) const { return local_[t]; }
  KueueLimits limits_;
  std::vector<int> nominal_, local_, usage_;
  std::vector<double> weight_;
  int cohort_quota_ = 0;
  int cohort_usage_ = 0;
};

// CompareDRS on weighted shares: a zero-weight borrower (+inf) sorts above all others.
inline constexpr double kInfiniteShare = std::numeric_limits<double>::infinity();

}  // namespace ds
