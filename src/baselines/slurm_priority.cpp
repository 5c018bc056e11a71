#include "baselines/slurm_priority.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace ds {

FairTree::FairTree(std::span<const Tenant> tenants, Time half_life)
    : shares_(tenants.size()), usage_(tenants.size(), 0.0), factor_(tenants.size(), 1.0) {
  // priority_multifactor.c: decay_factor = 1 - 0.693 / half-life (seconds), per second.
  if (half_life > 0) per_second_ = 1.0 - 0.693 / to_seconds(half_life);
  for (std::size_t t = 0; t < tenants.size(); ++t) shares_[t] = std::max(0, tenants[t].quota_gpus);
}

void FairTree::decay(Time elapsed) {
  if (per_second_ >= 1.0 || elapsed <= 0) return;
  const double d = std::pow(per_second_, to_seconds(elapsed));
  for (double& u : usage_) u *= d;
}

void FairTree::add_run(std::size_t tenant, int gpus, Time delta) {
  if (delta <= 0) return;
  const double s = to_seconds(delta);
  if (delta != weight_delta_) {  // most runs add a whole PriorityCalcPeriod: one pow per tick
    weight_delta_ = delta;
    weight_ = per_second_ >= 1.0 ? 1.0 : std::pow(per_second_, s);
  }
  usage_[tenant] += gpus * s * weight_;
}

double FairTree::level_fs(std::size_t t) const {
  const double total_shares =
      std::accumulate(shares_.begin(), shares_.end(), 0.0) + root_user_shares_;
  const double total_usage = std::accumulate(usage_.begin(), usage_.end(), 0.0);
  const double s = shares_[t] / total_shares;
  const double u = total_usage > 0 ? usage_[t] / total_usage : 0.0;
  if (s == 0) return 0;
  return u == 0 ? std::numeric_limits<double>::infinity() : s / u;
}

void FairTree::rank() {
  // Root's children: its own user association (no usage: LF = infinity, first among ties as
  // a user) and one account per tenant, each with one user that takes the account's place.
  const std::size_t n = usage_.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> lf(n);
  for (std::size_t t = 0; t < n; ++t) lf[t] = level_fs(t);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return lf[a] > lf[b]; });
  const double users = static_cast<double>(n + 1);
  std::size_t remaining = n + 1;  // rnt: the next rank to hand out
  // Root's user first: rank N.
  std::size_t rank = remaining--;
  double prev = std::numeric_limits<double>::infinity();
  for (std::size_t t : order) {
    if (lf[t] != prev) rank = remaining;  // not tied with the sibling before it
    factor_[t] = static_cast<double>(rank) / users;
    --remaining;
    prev = lf[t];
  }
}

std::uint32_t slurm_priority(const SlurmPriorityConfig& c, const PriorityInputs& j) {
  const SlurmWeights& w = c.weights;
  double age = 0;
  if (j.now > j.eligible)
    age = c.max_age <= 0 ? 1.0
                         : std::min(1.0, static_cast<double>(j.now - j.eligible) /
                                             static_cast<double>(c.max_age));
  const double size = std::clamp((static_cast<double>(j.nodes) / std::max(1, j.cluster_nodes) +
                                  static_cast<double>(j.gpus) / std::max(1, j.cluster_gpus)) /
                                     2,
                                 0.0, 1.0);
  const double tres = static_cast<double>(j.gpus) / std::max(1, j.cluster_gpus);
  const double p = w.age * age + w.fairshare * j.fs_factor + w.job_size * size +
                   w.qos * (j.tenant_qos ? 1.0 : 0.0) + w.tres_gpu * tres;
  if (p < 1) return 1;
  if (p >= 4294967295.0) return 4294967295u;
  return static_cast<std::uint32_t>(p);
}

}  // namespace ds
