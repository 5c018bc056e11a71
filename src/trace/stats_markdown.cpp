// Renders TraceStats as Markdown in the layout of STATS.md: a per-tenant table, the
// GPU-count mix, duration quantiles, final states and the arrival pattern.
// Counts get thousands separators, shares are percentages with one decimal.
#include <cmath>
#include <cstdio>
#include <string>

#include "trace/stats.hpp"

namespace ds {
namespace {

std::string count(std::size_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pct(double share) {
  return fixed(100 * share, 1) + " %";
}

// Seconds: whole numbers (and anything from 1,000 s up) with separators, else 1 decimal.
std::string secs(double s) {
  const double r = std::round(s);
  if (s >= 0 && (r == s || s >= 1000)) return count(static_cast<std::size_t>(r));
  return fixed(s, 1);
}

void row(std::string& out, std::initializer_list<std::string> cells) {
  out += '|';
  for (const auto& c : cells) out += ' ' + c + " |";
  out += '\n';
}

void tenants(std::string& out, const TraceStats& s) {
  out += "\n## Tenants\n\n";
  row(out, {"tenant", "nodes", "GPUs", "jobs", "users", "mean GPUs/job", "multi-GPU share",
            "median duration (s)", "offered load"});
  row(out, {"---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"});
  for (const auto& t : s.tenants)
    row(out,
        {t.name, count(static_cast<std::size_t>(t.nodes)), count(static_cast<std::size_t>(t.gpus)),
         count(t.jobs), count(t.users), fixed(t.mean_gpus, 1), pct(t.multi_gpu_share),
         secs(t.median_duration_s), fixed(t.offered_load, 2)});
}

void jobs(std::string& out, const TraceStats& s) {
  out += "\n## Jobs\n\nGPUs per job: " + pct(s.single_gpu_share) + " single-GPU, " +
         pct(s.above8_share) + " above 8 GPUs; mean " + fixed(s.mean_gpus, 2) + ", max " +
         std::to_string(s.max_gpus) + ".\n\n";
  row(out, {"GPUs", "jobs", "share"});
  row(out, {"---:", "---:", "---:"});
  for (const auto& m : s.gpu_mix)
    row(out, {std::to_string(m.gpus), count(m.jobs),
              pct(static_cast<double>(m.jobs) / static_cast<double>(s.jobs))});
  out += "\n";
  row(out, {"size (GPUs)", "jobs", "share of jobs", "share of GPU time"});
  row(out, {"---", "---:", "---:", "---:"});
  for (const auto& b : s.size_buckets)
    row(out, {b.label, count(b.jobs), pct(b.job_share), pct(b.gpu_time_share)});

  out += "\nDuration (s):\n\n";
  std::string head = "|", rule = "|", vals = "|";
  for (std::size_t q = 0; q < TraceStats::kQuantiles.size(); ++q) {
    const double p = 100 * TraceStats::kQuantiles[q];
    head += " p" + (p == static_cast<int>(p) ? fixed(p, 0) : fixed(p, 1)) + " |";
    rule += " ---: |";
    vals += " " + secs(s.duration_quantiles_s[q]) + " |";
  }
  out += head + " mean | min | max |\n" + rule + " ---: | ---: | ---: |\n" + vals + " " +
         secs(s.duration_mean_s) + " | " + secs(s.duration_min_s) + " | " + secs(s.duration_max_s) +
         " |\n\nFinal states:\n\n";
  row(out, {"state", "jobs", "share of jobs", "share of GPU time"});
  row(out, {"---", "---:", "---:", "---:"});
  for (const auto& st : s.states)
    row(out, {st.label, count(st.jobs), pct(st.job_share), pct(st.gpu_time_share)});
}

void arrivals(std::string& out, const TraceStats& s) {
  out += "\n## Arrivals\n\n";
  out += "- Jobs per calendar day: mean " + fixed(s.jobs_per_day_mean, 1) + ", min " +
         count(s.jobs_per_day_min) + ", max " + count(s.jobs_per_day_max) + " over " +
         std::to_string(s.jobs_per_day.size()) + " days.\n";
  out += "- Inter-arrival: mean " + fixed(s.gap_mean_s, 1) + " s, median " +
         fixed(s.gap_median_s, 1) + " s, CV " + fixed(s.gap_cv, 2) + "; " + pct(s.zero_gap_share) +
         " of gaps are 0 s.\n\nJobs per hour of day (average day):\n\n";
  std::string head = "| hour |", rule = "| --- |", vals = "| jobs/h |";
  for (std::size_t h = 0; h < 24; ++h) {
    head += " " + std::to_string(h) + " |";
    rule += " ---: |";
    vals += " " + fixed(s.jobs_per_hour_of_day[h], 1) + " |";
  }
  out += head + "\n" + rule + "\n" + vals + "\n";
}

}  // namespace

std::string stats_markdown(const TraceStats& s) {
  std::string out = "# Trace statistics: " + s.name + "\n\n";
  out += "Format `" + s.format + "`: " + count(s.tenants.size()) + " tenants, " +
         count(static_cast<std::size_t>(s.nodes)) + " nodes, " +
         count(static_cast<std::size_t>(s.gpus)) + " GPUs; " + count(s.jobs) + " jobs from " +
         count(s.users) + " users (" + count(s.multi_tenant_users) +
         " submit to more than one tenant).\n";
  out += "Submission window " + fixed(s.window_s / 86400, 2) + " days; " +
         count(static_cast<std::size_t>(s.gpu_hours + 0.5)) +
         " GPU-hours; offered load (GPU-hours / (GPUs x window)) " + fixed(s.offered_load, 3) +
         ".\n";
  tenants(out, s);
  jobs(out, s);
  arrivals(out, s);
  return out;
}

}  // namespace ds
