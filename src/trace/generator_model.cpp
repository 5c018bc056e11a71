// Calibration and sampling of the generator's per-tenant models (see the header).
#include "trace/generator_model.hpp"

#include <algorithm>
#include <cmath>

#include "trace/generator_calibration.hpp"

namespace ds::gen {
namespace {

using venus_stats::kDurationQuantiles;

constexpr double kMaxDuration = kDurationQuantiles.back().seconds;
constexpr int kSegmentSteps = 256;  // midpoint-rule steps per quantile segment

// log Q(u) of the published quantiles, linear between knots.
double log_global_quantile(double u) {
  u = std::clamp(u, 0.0, 1.0);
  for (std::size_t i = 1; i < kDurationQuantiles.size(); ++i) {
    const auto& a = kDurationQuantiles[i - 1];
    const auto& b = kDurationQuantiles[i];
    if (u > b.q && i + 1 < kDurationQuantiles.size()) continue;
    const double f = (u - a.q) / (b.q - a.q);
    return std::log(a.seconds) + f * (std::log(b.seconds) - std::log(a.seconds));
  }
  return std::log(kMaxDuration);
}

double log_global_median() {
  return log_global_quantile(0.5);
}

}  // namespace

// ---- SizeModel -------------------------------------------------------------------

SizeModel SizeModel::calibrate(double multi_share, double mean_gpus, int cap) {
  SizeModel m;
  for (const auto& sc : venus_stats::kGpuMix)
    if (sc.gpus > 1 && sc.gpus <= cap) m.sizes_.push_back(sc.gpus);
  if (m.sizes_.empty()) {
    m.multi_share_ = 0;  // a one-GPU tenant: every job is single-GPU
    return m;
  }
  m.multi_share_ = std::clamp(multi_share, 0.0, 1.0);
  std::vector<double> base;
  for (const auto& sc : venus_stats::kGpuMix)
    if (sc.gpus > 1 && sc.gpus <= cap) base.push_back(sc.jobs);
  auto tilted = [&](double lambda) {
    std::vector<double> p(base.size());
    double sum = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      p[i] = base[i] * std::pow(static_cast<double>(m.sizes_[i]), lambda);
      sum += p[i];
    }
    for (auto& x : p) x /= sum;
    return p;
  };
  auto mean_of = [&](const std::vector<double>& p) {
    double s = 0;
    for (std::size_t i = 0; i < p.size(); ++i) s += p[i] * m.sizes_[i];
    return s;
  };
  // Mean size of multi-GPU jobs that gives the published overall mean.
  const double target =
      m.multi_share_ > 0 ? (mean_gpus - (1 - m.multi_share_)) / m.multi_share_ : 2.0;
  double lo = -8, hi = 8;
  for (int it = 0; it < 80; ++it) {
    const double mid = 0.5 * (lo + hi);
    (mean_of(tilted(mid)) < target ? lo : hi) = mid;
  }
  m.prob_ = tilted(0.5 * (lo + hi));
  return m;
}

int SizeModel::sample(Rng& rng) const {
  const double u = rng.uniform();
  if (sizes_.empty() || u >= multi_share_) return 1;
  double v = rng.uniform();
  for (std::size_t i = 0; i < sizes_.size(); ++i) {
    if (v < prob_[i]) return sizes_[i];
    v -= prob_[i];
  }
  return sizes_.back();
}

double SizeModel::mean() const {
  double multi = 0;
  for (std::size_t i = 0; i < sizes_.size(); ++i) multi += prob_[i] * sizes_[i];
  return sizes_.empty() ? 1.0 : (1 - multi_share_) + multi_share_ * multi;
}

// ---- DurationModel ---------------------------------------------------------------

double DurationModel::quantile(double u) const {
  const double rel = log_global_quantile(u) - log_global_median();
  const double l = log_median_ + rel * (u > 0.5 ? stretch_ : 1.0);
  return std::clamp(std::exp(l), 1.0, kMaxDuration);
}

long long DurationModel::sample(Rng& rng) const {
  return std::max(1LL, std::llround(quantile(rng.uniform())));
}

double DurationModel::mean() const {
  double sum = 0;
  for (std::size_t i = 1; i < kDurationQuantiles.size(); ++i) {
    const double a = kDurationQuantiles[i - 1].q;
    const double b = kDurationQuantiles[i].q;
    const double h = (b - a) / kSegmentSteps;
    for (int k = 0; k < kSegmentSteps; ++k) sum += h * quantile(a + (k + 0.5) * h);
  }
  return sum;
}

DurationModel DurationModel::calibrate(double median_s, double target_mean_s) {
  // The mean grows monotonically with the stretch; bisect on it.
  double lo = 0.05, hi = 4.0;
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    (DurationModel(median_s, mid).mean() < target_mean_s ? lo : hi) = mid;
  }
  return DurationModel(median_s, 0.5 * (lo + hi));
}

// ---- Categorical -----------------------------------------------------------------

Categorical::Categorical(const std::vector<double>& weights) {
  double sum = 0;
  for (double w : weights) cumulative_.push_back(sum += std::max(0.0, w));
}

std::size_t Categorical::sample(Rng& rng) const {
  if (cumulative_.empty()) return 0;
  const double x = rng.uniform() * cumulative_.back();
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), x);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative_.begin()),
                               cumulative_.size() - 1);
}

}  // namespace ds::gen
