#include "baselines/kueue_quota.hpp"

#include <algorithm>

namespace ds {

CohortQuota::CohortQuota(std::span<const Tenant> tenants, const KueueLimits& limits)
    : limits_(limits),
      nominal_(tenants.size()),
      local_(tenants.size(), 0),
      usage_(tenants.size(), 0),
      weight_(tenants.size()) {
  for (std::size_t t = 0; t < tenants.size(); ++t) {
    nominal_[t] = std::max(0, tenants[t].quota_gpus);
    weight_[t] = tenants[t].weight;
    if (limits_.lending_limit >= 0) local_[t] = std::max(0, nominal_[t] - limits_.lending_limit);
    cohort_quota_ += nominal_[t] - local_[t];
  }
}

void CohortQuota::add(std::size_t t, int gpus) {
  cohort_usage_ -= std::max(0, usage_[t] - local(t));
  usage_[t] += gpus;
  cohort_usage_ += std::max(0, usage_[t] - local(t));
}

void CohortQuota::remove(std::size_t t, int gpus) {
  add(t, -gpus);
}

int CohortQuota::available(std::size_t t) const {
  if (!limits_.cohort) return nominal_[t] - usage_[t];
  const int local_free = std::max(0, local(t) - usage_[t]);
  int parent = cohort_quota_ - cohort_usage_;
  if (limits_.borrowing_limit >= 0) {
    const int stored = nominal_[t] - local(t);
    const int used = std::max(0, usage_[t] - local(t));
    parent = std::min(parent, stored - used + limits_.borrowing_limit);
  }
  return local_free + parent;
}

int CohortQuota::potential(std::size_t t) const {
  if (!limits_.cohort) return nominal_[t];
  int p = local(t) + cohort_quota_;
  if (limits_.borrowing_limit >= 0) p = std::min(p, nominal_[t] + limits_.borrowing_limit);
  return p;
}

double CohortQuota::drs(std::size_t t, int extra) const {
  const int borrowed = usage_[t] + extra - nominal_[t];
  if (borrowed <= 0 || !limits_.cohort) return 0;
  if (weight_[t] <= 0) return kInfiniteShare;
  if (cohort_quota_ <= 0) return 0;  // nothing lendable: Kueue skips the resource
  return borrowed * 1000.0 / cohort_quota_ / weight_[t];
}

}  // namespace ds
