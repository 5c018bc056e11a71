// Calibration and sampling of the generator's per-tenant models (see the header).
#include "trace/generator_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "trace/generator_calibration.hpp"

namespace ds::gen {
namespace {

using venus_stats::kDurationQuantiles;

constexpr double kMaxDuration = kDurationQuantiles.back().seconds;

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

// Integral over [a, b] of exp(clamp(l(u), lo, hi)), l linear from la at a to lb at b.
double clamped_exp_integral(double a, double b, double la, double lb, double lo, double hi) {
  if (b <= a) return 0;
  auto line = [&](double u) { return la + (lb - la) * (u - a) / (b - a); };
  // Cut points: a, where the line crosses lo and hi (if it does, in order), b.
  std::array<double, 4> cut{a, b, b, b};
  std::size_t n = 1;
  const double first = la < lb ? lo : hi, second = la < lb ? hi : lo;
  for (double level : {first, second})
    if ((la - level) * (lb - level) < 0) cut[n++] = a + (level - la) / (lb - la) * (b - a);
  cut[n++] = b;
  double sum = 0;
  for (std::size_t k = 1; k < n; ++k) {
    const double p = cut[k - 1], q = cut[k];
    const double mid = line(0.5 * (p + q));
    if (mid <= lo || mid >= hi) {
      sum += (q - p) * std::exp(std::clamp(mid, lo, hi));
      continue;
    }
    const double lp = line(p), lq = line(q);
    sum += std::abs(lq - lp) < 1e-12 ? (q - p) * std::exp(lp)
                                     : (q - p) * (std::exp(lq) - std::exp(lp)) / (lq - lp);
  }
  return sum;
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

double SizeModel::multi_mean() const {
  double multi = 0;
  for (std::size_t i = 0; i < sizes_.size(); ++i) multi += prob_[i] * sizes_[i];
  return multi;
}

double SizeModel::mean() const {
  return sizes_.empty() ? 1.0 : (1 - multi_share_) + multi_share_ * multi_mean();
}

// ---- DurationModel ---------------------------------------------------------------

double DurationModel::log_at(double u) const {
  const double rel = log_global_quantile(u) - log_global_median();
  return log_median_ + rel * (u > 0.5 ? stretch_ : 1.0);
}

double DurationModel::quantile(double u) const {
  return std::clamp(std::exp(log_at(u)), 1.0, kMaxDuration);
}

long long DurationModel::sample(Rng& rng) const {
  return std::max(1LL, std::llround(quantile(rng.uniform())));
}

double DurationModel::share_below(double cap) const {
  if (cap >= kMaxDuration) return 1;
  if (cap < 1) return 0;
  // log d is linear within each quantile segment: solve for the crossing.
  const double target = std::log(cap);
  for (std::size_t i = 1; i < kDurationQuantiles.size(); ++i) {
    const double a = kDurationQuantiles[i - 1].q, b = kDurationQuantiles[i].q;
    const double factor = a >= 0.5 ? stretch_ : 1.0;
    const double la = log_median_ + (log_global_quantile(a) - log_global_median()) * factor;
    const double lb = log_median_ + (log_global_quantile(b) - log_global_median()) * factor;
    if (target < la) return a;
    if (target < lb) return a + (target - la) / (lb - la) * (b - a);
  }
  return 1;
}

double DurationModel::mean(double cap) const {
  // log d is linear in u within each quantile segment, so each segment's integral of
  // d = exp(clamp(log d)) is exact in closed form once split where the clamp starts.
  const double end = share_below(cap);
  if (end <= 0) return std::max(1.0, cap);
  const double lo = 0, hi = std::log(kMaxDuration);
  double sum = 0;
  for (std::size_t i = 1; i < kDurationQuantiles.size(); ++i) {
    const double a = kDurationQuantiles[i - 1].q;
    const double b = std::min(end, kDurationQuantiles[i].q);
    if (b <= a) break;
    const double factor = a >= 0.5 ? stretch_ : 1.0;
    const double la = log_median_ + (log_global_quantile(a) - log_global_median()) * factor;
    const double lb = log_median_ + (log_global_quantile(b) - log_global_median()) * factor;
    sum += clamped_exp_integral(a, b, la, lb, lo, hi);
  }
  return sum / end;
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
