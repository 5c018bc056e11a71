// Report data preparation (see report_series.hpp for the contracts).
#include "report/report_series.hpp"

#include <algorithm>
#include <cmath>

namespace ds::report {

std::vector<Point> cdf_points(std::vector<double>& values, std::size_t max_points, double floor) {
  std::vector<Point> out;
  const std::size_t n = values.size();
  if (n == 0) return out;
  for (double& v : values) v = std::max(v, floor);
  std::sort(values.begin(), values.end());
  // Target ranks evenly spaced over [0, n-1]; each moves to the last index of its run
  // of equal values, where (value, (index + 1) / n) lies exactly on F. Rank 0 gives
  // the minimum, rank n-1 the maximum with F = 1; repeats are dropped.
  const std::size_t k_max = std::max<std::size_t>(max_points, 2) - 1;
  for (std::size_t k = 0; k <= k_max; ++k) {
    const std::size_t rank = (k * (n - 1) + k_max / 2) / k_max;
    const auto run_end = std::upper_bound(values.begin() + static_cast<std::ptrdiff_t>(rank),
                                          values.end(), values[rank]);
    const auto i = static_cast<std::size_t>(run_end - values.begin()) - 1;
    const double f = static_cast<double>(i + 1) / static_cast<double>(n);
    if (out.empty() || out.back().x < values[i]) out.push_back({values[i], f});
  }
  return out;
}

namespace {

// Bucket of time x: monotone in x (IEEE subtraction and division round monotonically).
std::size_t bucket_of(double x, double t0, double width, std::size_t buckets) {
  if (!(width > 0)) return 0;
  const double pos = std::floor((x - t0) / width);
  if (!(pos >= 0)) return 0;  // also NaN (inf / inf): converting it would be undefined
  return static_cast<std::size_t>(std::min(pos, static_cast<double>(buckets - 1)));
}

}  // namespace

std::vector<Point> downsample_minmax(const std::vector<Point>& series, std::size_t buckets) {
  if (buckets == 0 || series.size() <= 2 * buckets) return series;
  const double t0 = series.front().x;
  const double width = (series.back().x - t0) / static_cast<double>(buckets);
  std::vector<Point> out;
  out.reserve(2 * buckets);
  for (std::size_t i = 0; i < series.size();) {
    const std::size_t b = bucket_of(series[i].x, t0, width, buckets);
    std::size_t lo = i, hi = i, j = i + 1;
    for (; j < series.size() && bucket_of(series[j].x, t0, width, buckets) == b; ++j) {
      if (series[j].y < series[lo].y) lo = j;
      if (series[j].y > series[hi].y) hi = j;
    }
    out.push_back(series[std::min(lo, hi)]);
    if (lo != hi) out.push_back(series[std::max(lo, hi)]);
    i = j;
  }
  return out;
}

std::vector<Point> cumulative_bins(const std::vector<Event>& events, double t0, double t1,
                                   std::size_t bins) {
  bins = std::max<std::size_t>(bins, 1);
  if (!(t1 > t0)) t1 = t0 + 1;
  const double width = (t1 - t0) / static_cast<double>(bins);
  std::vector<double> sum(bins, 0.0);
  for (const Event& e : events) {
    const double pos = std::floor((e.t - t0) / width);
    const auto b =  // NaN (inf / inf) goes to bin 0: converting it would be undefined
        pos >= 0 ? static_cast<std::size_t>(std::min(pos, static_cast<double>(bins - 1))) : 0;
    sum[b] += e.amount;
  }
  std::vector<Point> out;
  out.reserve(bins + 1);
  out.push_back({t0, 0});
  double acc = 0;
  for (std::size_t b = 0; b < bins; ++b) {
    acc += sum[b];
    out.push_back({b + 1 == bins ? t1 : t0 + width * static_cast<double>(b + 1), acc});
  }
  return out;
}

std::vector<int> best_indices(const std::vector<double>& values, bool higher_is_better) {
  std::vector<int> out;
  if (values.empty()) return out;
  const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  const double scale = std::max({std::fabs(*mn), std::fabs(*mx), 1e-300});
  const double tol = 1e-9 * scale;
  if (*mx - *mn <= tol) return out;
  const double best = higher_is_better ? *mx : *mn;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (std::fabs(values[i] - best) <= tol) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace ds::report
