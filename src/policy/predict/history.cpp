#include "policy/predict/history.hpp"

#include <algorithm>
#include <cmath>

namespace ds {
namespace {

constexpr double kMaxSeconds = 365.0 * 24 * 3600;

}  // namespace

HistoryPredictor::HistoryPredictor(const PredictorConfig& config, std::size_t levels)
    : cfg_(config), levels_(std::clamp<std::size_t>(levels, 1, kHistoryLevels)) {
  if (cfg_.floor <= 0) cfg_.floor = kSecond;
  if (cfg_.prior_runtime <= 0) cfg_.prior_runtime = kHour;
}

std::size_t HistoryPredictor::KeyHash::operator()(const Key& k) const noexcept {
  // SplitMix64 finalizer over the four fields (fixed: the same on every platform).
  std::uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (std::int64_t v : {std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k)}) {
    h ^= static_cast<std::uint64_t>(v) + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
    h ^= h >> 31;
  }
  return static_cast<std::size_t>(h);
}

HistoryPredictor::Key HistoryPredictor::key(const JobSpec& job, std::size_t level) {
  const std::int64_t tenant = job.tenant.valid() ? job.tenant.value : -1;
  const std::int64_t user = job.user.valid() ? job.user.value : -1;
  switch (static_cast<HistoryLevel>(level)) {
    case HistoryLevel::Global:
      return {-1, -1, -1, -1};
    case HistoryLevel::Tenant:
      return {tenant, -1, -1, -1};
    case HistoryLevel::User:
      return {tenant, user, -1, -1};
    case HistoryLevel::UserGpus:
      return {tenant, user, job.gpus, -1};
    case HistoryLevel::UserGpusProfile:
      return {tenant, user, job.gpus, job.profile};
  }
  return {-1, -1, -1, -1};
}

void HistoryPredictor::observe(const JobSpec& job, Time runtime) {
  const double x = std::log2(to_seconds(std::max(runtime, cfg_.floor)));
  for (std::size_t l = 0; l < levels_; ++l) {
    // A job without a profile teaches nothing about profiles (step 2 repeats the parent).
    if (l == static_cast<std::size_t>(HistoryLevel::UserGpusProfile) && job.profile < 0) continue;
    Cell& c = cells_[l][key(job, l)];
    c.weight = cfg_.decay[l] * c.weight + 1.0;
    c.sum = cfg_.decay[l] * c.sum + x;
  }
}

std::array<double, kHistoryLevels> HistoryPredictor::estimates(const JobSpec& job) const {
  std::array<double, kHistoryLevels> mu{};
  double parent = std::log2(to_seconds(cfg_.prior_runtime));
  for (std::size_t l = 0; l < kHistoryLevels; ++l) {
    Cell c;
    const bool has_level =
        l < levels_ &&
        !(l == static_cast<std::size_t>(HistoryLevel::UserGpusProfile) && job.profile < 0);
    if (has_level) {
      const auto it = cells_[l].find(key(job, l));
      if (it != cells_[l].end()) c = it->second;
    }
    const double k = std::max(cfg_.strength[l], 0.0);
    if (has_level && c.weight + k > 0) parent = (c.sum + k * parent) / (c.weight + k);
    mu[l] = parent;
  }
  return mu;
}

Time HistoryPredictor::predict(const JobSpec& job) const {
  const double s = std::exp2(estimates(job).back());
  const double clamped = std::clamp(s, to_seconds(cfg_.floor), kMaxSeconds);
  return std::max<Time>(1, static_cast<Time>(std::llround(clamped * kSecond)));
}

}  // namespace ds
