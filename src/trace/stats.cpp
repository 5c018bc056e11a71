// Computes TraceStats (definitions in stats.hpp) in one pass over the jobs plus sorts.
#include "trace/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace ds {
namespace {

constexpr double kDay = 86400;

double ratio(double a, double b) {
  return b > 0 ? a / b : 0;
}

struct Bucket {
  const char* label;
  int max_gpus;
};
constexpr std::array<Bucket, 9> kBuckets = {{{"1", 1},
                                             {"2", 2},
                                             {"3-4", 4},
                                             {"5-8", 8},
                                             {"9-16", 16},
                                             {"17-32", 32},
                                             {"33-64", 64},
                                             {"65-128", 128},
                                             {">128", 1 << 30}}};

void tenant_table(const Workload& w, TraceStats& s) {
  const std::size_t n = w.tenants.size();
  std::vector<std::vector<double>> durations(n);
  std::vector<std::set<std::uint32_t>> users(n);
  std::vector<double> gpu_sum(n, 0), gpu_seconds(n, 0);
  std::vector<std::size_t> multi(n, 0);
  s.tenants.resize(n);
  for (std::size_t t = 0; t < n; ++t) s.tenants[t].name = w.tenants[t].name;
  for (const auto& node : w.cluster.nodes) {
    if (!node.owner.valid() || node.owner.index() >= n) continue;
    s.tenants[node.owner.index()].nodes += 1;
    s.tenants[node.owner.index()].gpus += node.gpus;
  }
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const auto& j = w.jobs[i];
    const std::size_t t = j.tenant.index();
    const double d = to_seconds(w.truth[i].work);
    s.tenants[t].jobs += 1;
    if (j.user.valid()) users[t].insert(j.user.value);
    durations[t].push_back(d);
    gpu_sum[t] += j.gpus;
    gpu_seconds[t] += j.gpus * d;
    if (j.gpus > 1) ++multi[t];
  }
  for (std::size_t t = 0; t < n; ++t) {
    auto& ts = s.tenants[t];
    if (ts.gpus == 0) ts.gpus = w.tenants[t].quota_gpus;
    ts.users = users[t].size();
    const auto jobs = static_cast<double>(ts.jobs);
    ts.mean_gpus = ratio(gpu_sum[t], jobs);
    ts.multi_gpu_share = ratio(static_cast<double>(multi[t]), jobs);
    std::sort(durations[t].begin(), durations[t].end());
    ts.median_duration_s = sorted_quantile(durations[t], 0.5);
    ts.offered_load = ratio(gpu_seconds[t], ts.gpus * s.window_s);
  }
}

void job_shape(const Workload& w, TraceStats& s) {
  std::vector<std::size_t> per_size;
  std::vector<double> durations;
  std::array<double, 4> state_jobs{}, state_gpu_s{};
  std::array<double, kBuckets.size()> bucket_jobs{}, bucket_gpu_s{};
  double gpu_s = 0, gpu_sum = 0;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const int g = w.jobs[i].gpus;
    const double d = to_seconds(w.truth[i].work);
    if (per_size.size() <= static_cast<std::size_t>(g)) per_size.resize(g + 1, 0);
    ++per_size[g];
    durations.push_back(d);
    gpu_s += g * d;
    gpu_sum += g;
    const auto st = static_cast<std::size_t>(w.truth[i].state);
    state_jobs[st] += 1;
    state_gpu_s[st] += g * d;
    std::size_t b = 0;
    while (g > kBuckets[b].max_gpus) ++b;
    bucket_jobs[b] += 1;
    bucket_gpu_s[b] += g * d;
    s.max_gpus = std::max(s.max_gpus, g);
  }
  const auto jobs = static_cast<double>(w.jobs.size());
  for (std::size_t g = 0; g < per_size.size(); ++g)
    if (per_size[g] > 0) s.gpu_mix.push_back({static_cast<int>(g), per_size[g]});
  s.single_gpu_share = ratio(per_size.size() > 1 ? static_cast<double>(per_size[1]) : 0, jobs);
  double above8 = 0;
  for (std::size_t g = 9; g < per_size.size(); ++g) above8 += static_cast<double>(per_size[g]);
  s.above8_share = ratio(above8, jobs);
  s.mean_gpus = ratio(gpu_sum, jobs);
  for (std::size_t b = 0; b < kBuckets.size(); ++b)
    if (bucket_jobs[b] > 0)
      s.size_buckets.push_back({kBuckets[b].label, static_cast<std::size_t>(bucket_jobs[b]),
                                ratio(bucket_jobs[b], jobs), ratio(bucket_gpu_s[b], gpu_s)});
  for (std::size_t st = 0; st < state_jobs.size(); ++st)
    if (state_jobs[st] > 0)
      s.states.push_back({to_string(static_cast<FinalState>(st)),
                          static_cast<std::size_t>(state_jobs[st]), ratio(state_jobs[st], jobs),
                          ratio(state_gpu_s[st], gpu_s)});
  std::sort(durations.begin(), durations.end());
  for (std::size_t q = 0; q < TraceStats::kQuantiles.size(); ++q)
    s.duration_quantiles_s[q] = sorted_quantile(durations, TraceStats::kQuantiles[q]);
  s.duration_mean_s = ratio(std::accumulate(durations.begin(), durations.end(), 0.0), jobs);
  s.duration_min_s = durations.empty() ? 0 : durations.front();
  s.duration_max_s = durations.empty() ? 0 : durations.back();
  s.gpu_hours = gpu_s / 3600;
  s.offered_load = ratio(gpu_s, s.gpus * s.window_s);
}

void arrivals(const Workload& w, TraceStats& s) {
  if (w.jobs.empty()) return;
  std::vector<double> submit;
  for (const auto& j : w.jobs) submit.push_back(to_seconds(j.submit));
  std::sort(submit.begin(), submit.end());
  const auto first_day = static_cast<std::int64_t>(std::floor(submit.front() / kDay));
  const auto last_day = static_cast<std::int64_t>(std::floor(submit.back() / kDay));
  s.jobs_per_day.assign(static_cast<std::size_t>(last_day - first_day + 1), 0);
  for (double t : submit) {
    const auto day = static_cast<std::int64_t>(std::floor(t / kDay)) - first_day;
    ++s.jobs_per_day[static_cast<std::size_t>(day)];
    const double in_day = t - std::floor(t / kDay) * kDay;
    s.jobs_per_hour_of_day[static_cast<std::size_t>(in_day / 3600)] += 1;
  }
  const auto [mn, mx] = std::minmax_element(s.jobs_per_day.begin(), s.jobs_per_day.end());
  s.jobs_per_day_min = *mn;
  s.jobs_per_day_max = *mx;
  s.jobs_per_day_mean =
      static_cast<double>(submit.size()) / static_cast<double>(s.jobs_per_day.size());
  const double days = s.window_s / kDay;
  if (days > 0)
    for (auto& h : s.jobs_per_hour_of_day) h /= days;

  std::vector<double> gaps;
  for (std::size_t i = 1; i < submit.size(); ++i) gaps.push_back(submit[i] - submit[i - 1]);
  if (gaps.empty()) return;
  const auto n = static_cast<double>(gaps.size());
  s.gap_mean_s = std::accumulate(gaps.begin(), gaps.end(), 0.0) / n;
  double var = 0;
  for (double g : gaps) var += (g - s.gap_mean_s) * (g - s.gap_mean_s);
  s.gap_cv = ratio(std::sqrt(var / n), s.gap_mean_s);
  s.zero_gap_share = static_cast<double>(std::count(gaps.begin(), gaps.end(), 0.0)) / n;
  std::sort(gaps.begin(), gaps.end());
  s.gap_median_s = sorted_quantile(gaps, 0.5);
}

}  // namespace

double sorted_quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

TraceStats compute_stats(const Workload& w) {
  TraceStats s;
  s.name = w.name;
  s.format = w.format;
  s.jobs = w.jobs.size();
  s.nodes = static_cast<int>(w.cluster.nodes.size());
  s.gpus = w.cluster.total_gpus();
  if (!w.jobs.empty()) {
    const auto [first, last] =
        std::minmax_element(w.jobs.begin(), w.jobs.end(),
                            [](const JobSpec& a, const JobSpec& b) { return a.submit < b.submit; });
    s.window_s = to_seconds(last->submit - first->submit);
  }
  std::vector<std::set<std::uint32_t>> tenants_of_user(w.users.size());
  for (const auto& j : w.jobs)
    if (j.user.valid() && j.user.index() < tenants_of_user.size())
      tenants_of_user[j.user.index()].insert(j.tenant.value);
  for (const auto& t : tenants_of_user) {
    s.users += t.empty() ? 0 : 1;
    s.multi_tenant_users += t.size() > 1 ? 1 : 0;
  }
  tenant_table(w, s);
  job_shape(w, s);
  arrivals(w, s);
  return s;
}

}  // namespace ds
