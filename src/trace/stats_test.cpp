// Tests of the trace statistics: exact numbers on a tiny hand-made workload, and
// the published Venus numbers (STATS.md) when ../shared/traces is present.
#include "trace/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "trace/load.hpp"

namespace ds {
namespace {

// Two tenants: A owns one 8-GPU node, B one 4-GPU node. Five jobs over one day:
//   A: 1 GPU x 100 s at 0 s, 4 GPUs x 200 s at 0 s, 2 GPUs x 300 s at 3,600 s;
//   B: 1 GPU x 50 s at 7,200 s, 4 GPUs x 1,000 s at 86,400 s (day 1).
Workload tiny() {
  Workload w;
  w.name = "tiny";
  w.format = "test";
  for (const char* name : {"A", "B"}) {
    Tenant t;
    t.id = TenantId(static_cast<std::uint32_t>(w.tenants.size()));
    t.name = name;
    t.quota_gpus = w.tenants.empty() ? 8 : 4;
    w.tenants.push_back(t);
    w.cluster.add_nodes(1, t.quota_gpus, 24 * 1024, "", t.id);
  }
  struct J {
    int tenant;
    const char* user;
    int gpus;
    std::int64_t submit, duration;
    FinalState state;
  };
  const J jobs[] = {{0, "u1", 1, 0, 100, FinalState::Completed},
                    {0, "u2", 4, 0, 200, FinalState::Failed},
                    {0, "u1", 2, 3600, 300, FinalState::Completed},
                    {1, "u1", 1, 7200, 50, FinalState::Cancelled},
                    {1, "u3", 4, 86400, 1000, FinalState::Completed}};
  for (const auto& j : jobs) {
    JobSpec s;
    s.name = std::to_string(w.jobs.size());
    s.tenant = TenantId(static_cast<std::uint32_t>(j.tenant));
    s.user = w.intern_user(j.user);
    s.gpus = j.gpus;
    s.submit = seconds(j.submit);
    w.jobs.push_back(s);
    w.truth.push_back({seconds(j.duration), j.state});
  }
  w.finalize();
  return w;
}

TEST(Stats, TinyWorkloadExactNumbers) {
  const TraceStats s = compute_stats(tiny());
  EXPECT_EQ(s.jobs, 5u);
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.gpus, 12);
  EXPECT_EQ(s.users, 3u);
  EXPECT_EQ(s.multi_tenant_users, 1u);  // u1 in A and B
  EXPECT_DOUBLE_EQ(s.window_s, 86400);
  // GPU-seconds: 100 + 800 + 600 + 50 + 4000 = 5550.
  EXPECT_DOUBLE_EQ(s.gpu_hours, 5550.0 / 3600);
  EXPECT_DOUBLE_EQ(s.offered_load, 5550.0 / (12 * 86400));

  ASSERT_EQ(s.tenants.size(), 2u);
  const auto& a = s.tenants[0];
  EXPECT_EQ(a.nodes, 1);
  EXPECT_EQ(a.gpus, 8);
  EXPECT_EQ(a.jobs, 3u);
  EXPECT_EQ(a.users, 2u);
  EXPECT_DOUBLE_EQ(a.mean_gpus, 7.0 / 3);
  EXPECT_DOUBLE_EQ(a.multi_gpu_share, 2.0 / 3);
  EXPECT_DOUBLE_EQ(a.median_duration_s, 200);
  EXPECT_DOUBLE_EQ(a.offered_load, 1500.0 / (8 * 86400));
  EXPECT_DOUBLE_EQ(s.tenants[1].median_duration_s, 525);  // between 50 and 1000
  EXPECT_DOUBLE_EQ(s.tenants[1].offered_load, 4050.0 / (4 * 86400));

  ASSERT_EQ(s.gpu_mix.size(), 3u);
  EXPECT_EQ(s.gpu_mix[0].gpus, 1);
  EXPECT_EQ(s.gpu_mix[0].jobs, 2u);
  EXPECT_EQ(s.gpu_mix[2].gpus, 4);
  EXPECT_EQ(s.gpu_mix[2].jobs, 2u);
  EXPECT_DOUBLE_EQ(s.single_gpu_share, 0.4);
  EXPECT_DOUBLE_EQ(s.above8_share, 0);
  EXPECT_DOUBLE_EQ(s.mean_gpus, 12.0 / 5);
  EXPECT_EQ(s.max_gpus, 4);
  ASSERT_EQ(s.size_buckets.size(), 3u);  // 1, 2, 3-4
  EXPECT_EQ(s.size_buckets[2].label, "3-4");
  EXPECT_DOUBLE_EQ(s.size_buckets[2].gpu_time_share, 4800.0 / 5550);

  // Durations sorted: 50 100 200 300 1000.
  EXPECT_DOUBLE_EQ(s.duration_quantiles_s[2], 200);  // p50
  EXPECT_DOUBLE_EQ(s.duration_quantiles_s[1], 100);  // p25: position 1
  EXPECT_DOUBLE_EQ(s.duration_quantiles_s[4], 720);  // p90: 300 + 0.6 x 700
  EXPECT_DOUBLE_EQ(s.duration_mean_s, 330);
  EXPECT_DOUBLE_EQ(s.duration_min_s, 50);
  EXPECT_DOUBLE_EQ(s.duration_max_s, 1000);

  ASSERT_EQ(s.states.size(), 3u);
  EXPECT_EQ(s.states[0].label, "COMPLETED");
  EXPECT_EQ(s.states[0].jobs, 3u);
  EXPECT_DOUBLE_EQ(s.states[0].gpu_time_share, 4700.0 / 5550);
  EXPECT_EQ(s.states[2].label, "FAILED");

  ASSERT_EQ(s.jobs_per_day.size(), 2u);
  EXPECT_EQ(s.jobs_per_day[0], 4u);
  EXPECT_EQ(s.jobs_per_day[1], 1u);
  EXPECT_DOUBLE_EQ(s.jobs_per_day_mean, 2.5);
  EXPECT_EQ(s.jobs_per_day_min, 1u);
  EXPECT_EQ(s.jobs_per_day_max, 4u);
  // Gaps: 0, 3600, 3600, 79200.
  EXPECT_DOUBLE_EQ(s.gap_mean_s, 21600);
  EXPECT_DOUBLE_EQ(s.gap_median_s, 3600);
  EXPECT_DOUBLE_EQ(s.zero_gap_share, 0.25);
  EXPECT_NEAR(s.gap_cv,
              std::sqrt((21600.0 * 21600 + 2 * 18000.0 * 18000 + 57600.0 * 57600) / 4) / 21600,
              1e-12);
  EXPECT_DOUBLE_EQ(s.jobs_per_hour_of_day[0], 3);  // two at 0 s, one at 86,400 s; window 1 day
  EXPECT_DOUBLE_EQ(s.jobs_per_hour_of_day[1], 1);
  EXPECT_DOUBLE_EQ(s.jobs_per_hour_of_day[2], 1);
}

TEST(Stats, MarkdownHasTheTables) {
  const std::string md = stats_markdown(compute_stats(tiny()));
  EXPECT_NE(md.find("# Trace statistics: tiny"), std::string::npos);
  EXPECT_NE(md.find("| A | 1 | 8 | 3 | 2 | 2.3 | 66.7 % | 200 | 0.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| p10 | p25 | p50 |"), std::string::npos);
  EXPECT_NE(md.find("| p99.9 |"), std::string::npos);
  EXPECT_NE(md.find("offered load (GPU-hours / (GPUs x window)) 0.005"), std::string::npos) << md;
}

TEST(Stats, EmptyWorkload) {
  Workload w;
  w.finalize();
  const TraceStats s = compute_stats(w);
  EXPECT_EQ(s.jobs, 0u);
  EXPECT_DOUBLE_EQ(s.offered_load, 0);
  EXPECT_FALSE(stats_markdown(s).empty());
}

TEST(Stats, VenusMatchesPublishedNumbers) {
  const std::filesystem::path trace =
      std::filesystem::path(DEEPSHARE_SHARED_DIR) / "traces/venus-sept/venus_sept_23859_jobs.csv";
  if (!std::filesystem::exists(trace))
    GTEST_SKIP() << "Venus trace not found at " << trace << " (needs ../shared/traces)";
  LoadOptions o;
  o.format = "venus";
  const TraceStats s = compute_stats(load_trace(trace.string(), o));
  EXPECT_EQ(s.jobs, 23859u);
  EXPECT_EQ(s.gpus, 1080);
  EXPECT_NEAR(s.single_gpu_share, 0.565, 0.0005);
  EXPECT_DOUBLE_EQ(s.duration_quantiles_s[2], 193);
  EXPECT_DOUBLE_EQ(s.duration_quantiles_s[3], 814.5);
  EXPECT_NEAR(s.offered_load, 0.893, 0.0005);
  EXPECT_NEAR(s.zero_gap_share, 0.132, 0.0005);
  EXPECT_NEAR(s.gap_cv, 3.3, 0.05);
  ASSERT_EQ(s.tenants.size(), 15u);
  const auto jsw = std::find_if(s.tenants.begin(), s.tenants.end(),
                                [](const TenantStats& t) { return t.name == "vcJsw"; });
  ASSERT_NE(jsw, s.tenants.end());
  EXPECT_EQ(jsw->nodes, 32);
  EXPECT_EQ(jsw->jobs, 1854u);
  EXPECT_EQ(jsw->users, 8u);
  EXPECT_DOUBLE_EQ(jsw->median_duration_s, 123);
  EXPECT_NEAR(jsw->offered_load, 0.91, 0.005);
}

}  // namespace
}  // namespace ds
