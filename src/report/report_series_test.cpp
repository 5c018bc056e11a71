// Tests of the report's data preparation: exact CDF points, min/max downsampling that
// keeps extremes, cumulative event bins, best-value marking.
#include "report/report_series.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace ds::report {
namespace {

double ecdf(const std::vector<double>& sorted, double x) {
  return static_cast<double>(std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin()) /
         static_cast<double>(sorted.size());
}

TEST(CdfPoints, EveryPointLiesOnTheEmpiricalCdf) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(5, 2);
  std::vector<double> v;
  for (int i = 0; i < 20000; ++i) v.push_back(i % 5 == 0 ? 0.0 : std::round(dist(rng)));
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const auto pts = cdf_points(v, 500);
  ASSERT_LE(pts.size(), 500u);
  ASSERT_GE(pts.size(), 300u);  // ranks that fall in a run of ties collapse into one point
  EXPECT_EQ(pts.front().x, sorted.front());
  EXPECT_EQ(pts.back().x, sorted.back());
  EXPECT_EQ(pts.back().y, 1.0);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    EXPECT_DOUBLE_EQ(pts[i].y, ecdf(sorted, pts[i].x)) << "point " << i;
    if (i > 0) {
      EXPECT_LT(pts[i - 1].x, pts[i].x);
      EXPECT_LT(pts[i - 1].y, pts[i].y);
    }
  }
}

TEST(CdfPoints, DistinctValuesUseEveryPoint) {
  std::mt19937_64 rng(11);
  std::exponential_distribution<double> dist(0.01);
  std::vector<double> v;
  for (int i = 0; i < 100000; ++i) v.push_back(dist(rng));
  EXPECT_EQ(cdf_points(v, 500).size(), 500u);
}

TEST(CdfPoints, SmallInputsKeepEveryDistinctValue) {
  std::vector<double> v = {3, 1, 2, 2, 5};
  const auto pts = cdf_points(v, 500);
  const std::vector<Point> want = {{1, 0.2}, {2, 0.6}, {3, 0.8}, {5, 1.0}};
  EXPECT_EQ(pts, want);
}

TEST(CdfPoints, QuantilesAreExactForUniformRanks) {
  std::vector<double> v;
  for (int i = 1; i <= 1001; ++i) v.push_back(i);
  const auto pts = cdf_points(v, 11);
  ASSERT_EQ(pts.size(), 11u);
  for (std::size_t k = 0; k < pts.size(); ++k) {
    EXPECT_EQ(pts[k].x, 1.0 + 100.0 * static_cast<double>(k));  // the exact 10% quantiles
    EXPECT_DOUBLE_EQ(pts[k].y, pts[k].x / 1001.0);
  }
}

TEST(CdfPoints, FloorRaisesSmallValuesForALogAxis) {
  std::vector<double> v = {0, 0, 0, 0.5, 10, 100};
  const auto pts = cdf_points(v, 500, 1.0);
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[0], (Point{1.0, 4.0 / 6}));
  EXPECT_EQ(pts[2], (Point{100.0, 1.0}));
}

TEST(CdfPoints, EmptyAndConstantInputs) {
  std::vector<double> none;
  EXPECT_TRUE(cdf_points(none, 500).empty());
  std::vector<double> same(1000, 42.0);
  const auto pts = cdf_points(same, 500);
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0], (Point{42.0, 1.0}));
}

std::vector<Point> noisy_series(std::size_t n) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.05);
  std::vector<Point> s;
  for (std::size_t i = 0; i < n; ++i)
    s.push_back({600.0 * static_cast<double>(i),
                 0.5 + 0.3 * std::sin(static_cast<double>(i) / 300.0) + noise(rng)});
  return s;
}

TEST(DownsampleMinMax, KeepsGlobalAndPerBucketExtremes) {
  auto s = noisy_series(100000);
  s[31337].y = 9.0;   // a one-sample spike
  s[77777].y = -9.0;  // and a dip
  const std::size_t buckets = 400;
  const auto d = downsample_minmax(s, buckets);
  ASSERT_LE(d.size(), 2 * buckets);
  ASSERT_GE(d.size(), buckets);
  EXPECT_NE(std::find(d.begin(), d.end(), s[31337]), d.end());
  EXPECT_NE(std::find(d.begin(), d.end(), s[77777]), d.end());
  for (std::size_t i = 1; i < d.size(); ++i) EXPECT_LT(d[i - 1].x, d[i].x);
  // Every output point is an input sample, and each bucket's range is preserved.
  const double width = (s.back().x - s.front().x) / buckets;
  for (std::size_t b = 0; b < buckets; ++b) {
    double in_lo = 1e9, in_hi = -1e9, out_lo = 1e9, out_hi = -1e9;
    const double a = s.front().x + width * b, z = b + 1 == buckets ? 1e300 : a + width;
    for (const auto& p : s)
      if (p.x >= a && p.x < z) in_lo = std::min(in_lo, p.y), in_hi = std::max(in_hi, p.y);
    for (const auto& p : d)
      if (p.x >= a && p.x < z) out_lo = std::min(out_lo, p.y), out_hi = std::max(out_hi, p.y);
    EXPECT_EQ(in_lo, out_lo) << "bucket " << b;
    EXPECT_EQ(in_hi, out_hi) << "bucket " << b;
  }
  for (const auto& p : d) EXPECT_NE(std::find(s.begin(), s.end(), p), s.end());
}

TEST(DownsampleMinMax, ShortSeriesUnchanged) {
  const auto s = noisy_series(50);
  EXPECT_EQ(downsample_minmax(s, 25), s);
  EXPECT_EQ(downsample_minmax(s, 400), s);
  EXPECT_TRUE(downsample_minmax({}, 10).empty());
}

TEST(DownsampleMinMax, ConstantSeriesGivesOnePointPerBucket) {
  std::vector<Point> s;
  for (int i = 0; i < 1000; ++i) s.push_back({static_cast<double>(i), 1.0});
  const auto d = downsample_minmax(s, 10);
  EXPECT_EQ(d.size(), 10u);
  EXPECT_EQ(d.front(), s.front());
}

TEST(CumulativeBins, EndsAtTheTotalAndNeverDecreases) {
  const std::vector<Event> ev = {{-5, 1}, {0, 2}, {49.9, 3}, {50, 4}, {100, 5}, {1000, 6}};
  const auto c = cumulative_bins(ev, 0, 100, 2);
  const std::vector<Point> want = {{0, 0}, {50, 6}, {100, 21}};
  EXPECT_EQ(c, want);
  const auto none = cumulative_bins({}, 10, 10, 5);  // empty span: one unit wide
  ASSERT_EQ(none.size(), 6u);
  EXPECT_EQ(none.back(), (Point{11, 0}));
}

TEST(BestIndices, LowerHigherTiesAndNoWinner) {
  EXPECT_EQ(best_indices({3, 1, 2}, false), (std::vector<int>{1}));
  EXPECT_EQ(best_indices({3, 1, 3}, true), (std::vector<int>{0, 2}));
  EXPECT_TRUE(best_indices({0, 0, 0}, false).empty());
  EXPECT_TRUE(best_indices({}, true).empty());
  EXPECT_EQ(best_indices({0.5}, true), std::vector<int>{});  // one policy: nothing to beat
}

}  // namespace
}  // namespace ds::report
