// Descriptive statistics of a workload (trace or generated), as in STATS.md.
//
// Definitions (times in seconds; a job's duration is its exclusive run time, truth.work):
//  - submission window: last submit - first submit.
//  - offered load: sum of GPUs x duration / (GPUs x window); per tenant over the
//    tenant's own GPUs (the nodes it owns; its quota when it owns none). 0 when the
//    window or the GPU count is 0.
//  - quantiles: linear interpolation between order statistics (numpy's default).
//  - arrivals per day: jobs per calendar day floor(submit / 86400), over the days
//    from the first submit's to the last submit's; mean = jobs / days.
//  - inter-arrival gaps: differences of consecutive submit times (jobs sorted by
//    submit); CV = population standard deviation / mean; zero-gap share = gaps of 0.
//  - hour-of-day profile: jobs submitted in hour (submit mod 86400) / 3600, divided
//    by the window in days (jobs per hour on an average day).
//  - GPU time: GPUs x duration; final-state and size shares are of jobs and of GPU time.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "model/workload.hpp"

namespace ds {

struct TenantStats {
  std::string name;
  int nodes = 0;
  int gpus = 0;
  std::size_t jobs = 0;
  std::size_t users = 0;
  double mean_gpus = 0;
  double multi_gpu_share = 0;
  double median_duration_s = 0;
  double offered_load = 0;
};

struct SizeCount {
  int gpus = 0;
  std::size_t jobs = 0;
};

struct ShareRow {
  std::string label;
  std::size_t jobs = 0;
  double job_share = 0;
  double gpu_time_share = 0;
};

struct TraceStats {
  std::string name;
  std::string format;
  std::size_t jobs = 0;
  int nodes = 0;
  int gpus = 0;
  std::size_t users = 0;
  std::size_t multi_tenant_users = 0;  // users with jobs in more than one tenant
  std::vector<TenantStats> tenants;

  std::vector<SizeCount> gpu_mix;      // ascending GPU count
  std::vector<ShareRow> size_buckets;  // 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65-128, >128
  double single_gpu_share = 0;
  double above8_share = 0;
  double mean_gpus = 0;
  int max_gpus = 0;

  static constexpr std::array<double, 8> kQuantiles = {0.10, 0.25, 0.50, 0.75,
                                                       0.90, 0.95, 0.99, 0.999};
  std::array<double, 8> duration_quantiles_s{};
  double duration_mean_s = 0;
  double duration_min_s = 0;
  double duration_max_s = 0;
  std::vector<ShareRow> states;  // COMPLETED, CANCELLED, FAILED, OTHER (those present)

  double window_s = 0;
  double gpu_hours = 0;
  double offered_load = 0;
  std::vector<std::size_t> jobs_per_day;
  double jobs_per_day_mean = 0;
  std::size_t jobs_per_day_min = 0;
  std::size_t jobs_per_day_max = 0;
  double gap_mean_s = 0;
  double gap_median_s = 0;
  double gap_cv = 0;
  double zero_gap_share = 0;
  std::array<double, 24> jobs_per_hour_of_day{};
};

TraceStats compute_stats(const Workload& w);

// The statistics as Markdown (headings, tables), for stdout.
std::string stats_markdown(const TraceStats& s);

// Linear-interpolated quantile of sorted values (numpy's default); 0 when empty.
double sorted_quantile(const std::vector<double>& sorted, double q);

}  // namespace ds
