// Data preparation for the HTML report: pure functions that turn complete series
// (thousands to millions of values) into the few hundred points a chart needs,
// without changing what the chart says.
//
// Assumptions:
//  - CDFs are empirical: F(x) = #{v <= x} / n. Every point returned lies exactly on
//    F (no interpolation), so a point read off the chart is a true quantile.
//  - Time series are point samples in time order (timeseries.csv); downsampling keeps
//    each bucket's minimum and maximum sample, so peaks and dips survive at any zoom.
//  - Event totals (preemptions, lost work) are known per job with one time stamp each;
//    they are summed into equal-width bins and reported cumulatively.
#pragma once

#include <cstddef>
#include <vector>

namespace ds::report {

struct Point {
  double x = 0;
  double y = 0;
  bool operator==(const Point&) const = default;
};

// Empirical CDF of `values` (sorted in place) as at most max(2, `max_points`) points
// (x, F(x)), x strictly increasing, the first at the minimum and the last at the
// maximum with F = 1. Values below `floor` are raised to it first (for a log axis,
// where 0 cannot be drawn: the curve then starts at F(floor)). Empty input: {}.
std::vector<Point> cdf_points(std::vector<double>& values, std::size_t max_points,
                              double floor = -1e300);

// Downsamples a time-ordered series to at most 2 x `buckets` points: the time span is
// cut into `buckets` equal-width buckets, and each non-empty bucket contributes its
// minimum and its maximum sample (one point when they coincide), in time order.
// Series with at most 2 x `buckets` points are returned unchanged.
std::vector<Point> downsample_minmax(const std::vector<Point>& series, std::size_t buckets);

// A stamped amount (e.g. one job's preemptions at its end time).
struct Event {
  double t = 0;
  double amount = 0;
};

// Cumulative sum of `events` at the right edge of `bins` equal-width bins over
// [t0, t1], with a leading point (t0, 0). Events outside the span are clamped into
// the first or last bin, so the last point's y is the total.
std::vector<Point> cumulative_bins(const std::vector<Event>& events, double t0, double t1,
                                   std::size_t bins);

// Indices of the best of `values` (lower or higher is better), all of them when
// several tie within a relative 1e-9; empty when `values` is empty or all of them
// tie (no winner to mark).
std::vector<int> best_indices(const std::vector<double>& values, bool higher_is_better);

}  // namespace ds::report
