#include "policy/interference/model.hpp"

#include <algorithm>

#include "policy/interference/ridge.hpp"

namespace ds {
namespace {

constexpr double kMinSpeed = 0.05;
constexpr double kMaxSpeed = 1.5;
constexpr std::size_t kFlags = 4;  // amp_j, amp_o, same family, same profile
// Per profile: own effect, partner effect, own x partner util, partner x own util.
constexpr std::size_t kProfileBlocks = 4;
constexpr double kTiny = 1e-6;  // keeps the unpenalized columns well-posed

double clamp_speed(double s) {
  return std::clamp(s, kMinSpeed, kMaxSpeed);
}

}  // namespace

std::array<double, kUtilFeatures> util_features(const ResolvedShape& j, const ResolvedShape& o) {
  return {1.0,
          j.util,
          o.util,
          j.util * o.util,
          std::max(0.0, j.util + o.util - 1.0),
          (j.mem_gib + o.mem_gib) / 24.0};
}

FittedInterference::FittedInterference(const std::array<double, kUtilFeatures>& util_coefficients)
    : util_beta_(util_coefficients.begin(), util_coefficients.end()) {}

FittedInterference::FittedInterference(const std::vector<const MeasuredPair*>& pairs,
                                       const ColocationTable& singles, double ridge) {
  for (const auto& s : singles.singles())
    singles_.emplace(profile_key(s.profile), std::pair{s.gpu_util, s.gmem_mib});
  // Vocabulary from the training pairs only: in cross-validation a profile that only
  // occurs in the held-out fold is "unknown", as it would be in production.
  for (const MeasuredPair* p : pairs)
    for (const Profile* q : {&p->a, &p->b}) {
      families_.emplace(q->model, 0);
      profiles_.emplace(profile_key(*q), 0);
    }
  int i = 0;
  for (auto& [name, index] : families_) index = i++;
  i = 0;
  for (auto& [name, index] : profiles_) index = i++;

  RidgeProblem util(kUtilFeatures);
  const std::size_t width =
      kUtilFeatures + kFlags + 2 * families_.size() + kProfileBlocks * profiles_.size();
  RidgeProblem full(width);
  for (const MeasuredPair* p : pairs) {
    const ResolvedShape a = resolve(JobShape{&p->a});
    const ResolvedShape b = resolve(JobShape{&p->b});
    for (int dir = 0; dir < 2; ++dir) {
      const ResolvedShape& j = dir == 0 ? a : b;
      const ResolvedShape& o = dir == 0 ? b : a;
      const double y = dir == 0 ? p->speed_a : p->speed_b;
      const auto f = util_features(j, o);
      util.add(std::vector<double>(f.begin(), f.end()), y);
      full.add(profile_features(j, o), y);
    }
  }
  util_beta_ = util.solve(std::vector<double>(kUtilFeatures, kTiny));
  if (pairs.empty()) return;
  std::vector<double> penalty(width, ridge);
  for (std::size_t k = 0; k < kUtilFeatures + kFlags; ++k) penalty[k] = kTiny;
  profile_beta_ = full.solve(penalty);
}

ResolvedShape FittedInterference::resolve(const JobShape& s) const {
  ResolvedShape r;
  const std::pair<double, double>* single = nullptr;
  if (s.profile) {
    r.amp = s.profile->amp;
    r.family_name = s.profile->model;
    auto [k, fresh] = known_.try_emplace(s.profile);
    Known& known = k->second;
    if (fresh || !(known.profile == *s.profile)) {
      known = Known{*s.profile, nullptr, -1, -1};
      const std::string key = profile_key(*s.profile);
      if (auto it = singles_.find(key); it != singles_.end()) known.single = &it->second;
      if (auto it = profiles_.find(key); it != profiles_.end()) known.index = it->second;
      if (auto it = families_.find(s.profile->model); it != families_.end())
        known.family = it->second;
    }
    single = known.single;
    r.profile = known.index;
    r.family = known.family;
  }
  if (s.gpu_util >= 0) {
    r.util = std::min(s.gpu_util, 100.0) / 100.0;
  } else if (single) {
    r.util = single->first / 100.0;
  }
  if (s.gpu_memory_mib > 0) {
    r.mem_gib = s.gpu_memory_mib / 1024.0;
  } else if (single) {
    r.mem_gib = single->second / 1024.0;
  }
  return r;
}

std::vector<double> FittedInterference::profile_features(const ResolvedShape& j,
                                                         const ResolvedShape& o) const {
  const std::size_t nf = families_.size();
  const std::size_t np = profiles_.size();
  std::vector<double> x(kUtilFeatures + kFlags + 2 * nf + kProfileBlocks * np, 0.0);
  const auto u = util_features(j, o);
  std::copy(u.begin(), u.end(), x.begin());
  std::size_t k = kUtilFeatures;
  x[k++] = j.amp ? 1 : 0;
  x[k++] = o.amp ? 1 : 0;
  x[k++] = (!j.family_name.empty() && j.family_name == o.family_name) ? 1 : 0;
  x[k++] = (j.profile >= 0 && j.profile == o.profile) ? 1 : 0;
  if (j.family >= 0) x[k + static_cast<std::size_t>(j.family)] = 1;
  if (o.family >= 0) x[k + nf + static_cast<std::size_t>(o.family)] = 1;
  k += 2 * nf;
  if (j.profile >= 0) {
    const auto jp = static_cast<std::size_t>(j.profile);
    x[k + jp] = 1;
    x[k + 2 * np + jp] = o.util;  // how much this profile suffers per unit of partner load
  }
  if (o.profile >= 0) {
    const auto op = static_cast<std::size_t>(o.profile);
    x[k + np + op] = 1;
    x[k + 3 * np + op] = j.util;  // how hard this partner hits a busier job
  }
  return x;
}

double FittedInterference::util_speed(const JobShape& job, const JobShape& other) const {
  const auto f = util_features(resolve(job), resolve(other));
  return clamp_speed(dot(util_beta_, std::vector<double>(f.begin(), f.end())));
}

double FittedInterference::speed(const JobShape& job, const JobShape& other) const {
  const ResolvedShape j = resolve(job);
  const ResolvedShape o = resolve(other);
  if (profile_beta_.empty() || j.profile < 0 || o.profile < 0) {
    const auto f = util_features(j, o);
    double sum = 0;  // dot(util_beta_, f) without a copy
    for (std::size_t k = 0; k < f.size() && k < util_beta_.size(); ++k) sum += util_beta_[k] * f[k];
    return clamp_speed(sum);
  }
  // profile_features(j, o) is one-hot but for its first columns: the dot product over its
  // non-zero entries, in column order (the same sum, bit for bit: adding x * 0 changes none).
  const std::size_t nf = families_.size(), np = profiles_.size();
  const auto u = util_features(j, o);
  const std::array<double, kFlags> flags = {
      j.amp ? 1.0 : 0.0, o.amp ? 1.0 : 0.0,
      (!j.family_name.empty() && j.family_name == o.family_name) ? 1.0 : 0.0,
      j.profile == o.profile ? 1.0 : 0.0};
  double sum = 0;
  for (std::size_t k = 0; k < kUtilFeatures; ++k) sum += profile_beta_[k] * u[k];
  for (std::size_t k = 0; k < kFlags; ++k) sum += profile_beta_[kUtilFeatures + k] * flags[k];
  std::size_t k = kUtilFeatures + kFlags;
  if (j.family >= 0) sum += profile_beta_[k + static_cast<std::size_t>(j.family)];
  if (o.family >= 0) sum += profile_beta_[k + nf + static_cast<std::size_t>(o.family)];
  k += 2 * nf;
  const auto jp = static_cast<std::size_t>(j.profile), op = static_cast<std::size_t>(o.profile);
  sum += profile_beta_[k + jp];
  sum += profile_beta_[k + np + op];
  sum += profile_beta_[k + 2 * np + jp] * o.util;
  sum += profile_beta_[k + 3 * np + op] * j.util;
  return clamp_speed(sum);
}

}  // namespace ds
