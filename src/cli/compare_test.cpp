#include "cli/compare.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/whatif.hpp"
#include "core/error.hpp"
#include "model/testing.hpp"
#include "registry/registry.hpp"

namespace ds {
namespace {

namespace fs = std::filesystem;

Workload small_workload() {
  Workload w = testing::make_workload(2, 2);
  for (int i = 0; i < 40; ++i)
    testing::add_job(w, i % 2, 1 << (i % 4), i * 30, 100 + (i * 37) % 900);
  w.finalize();
  return w;
}

// comparison.csv without its last (wall-clock) column.
std::string csv_without_wall(const fs::path& dir) {
  std::ifstream in(dir / "comparison.csv");
  std::string line, out;
  while (std::getline(in, line)) out += line.substr(0, line.rfind(',')) + "\n";
  return out;
}

TEST(Compare, RunsEveryPolicyAtEveryLoadTheSameOnAnyNumberOfThreads) {
  const Workload w = small_workload();
  const fs::path base = fs::temp_directory_path() / "deepshare-compare-test";
  fs::remove_all(base);
  CompareRequest req;
  req.policies = {"fifo-isolated", "sjf", "tiresias"};
  req.loads = {1.0, 1.5};
  req.progress = false;
  req.threads = 1;
  req.out_dir = (base / "one").string();
  const auto one = run_compare(w, req, "test");
  req.threads = 4;
  req.out_dir = (base / "four").string();
  const auto four = run_compare(w, req, "test");
  ASSERT_EQ(one.size(), 6u);
  EXPECT_EQ(one[1].policy, "fifo-isolated");
  EXPECT_EQ(one[1].load, 1.5);
  EXPECT_EQ(one[2].policy, "sjf");
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].metrics.avg_jct_s, four[i].metrics.avg_jct_s) << i;
    EXPECT_EQ(one[i].metrics.jobs_completed, 40u);
  }
  EXPECT_EQ(csv_without_wall(base / "one"), csv_without_wall(base / "four"));
  EXPECT_TRUE(fs::exists(base / "four" / "sjf@1.5" / "summary.json"));
  EXPECT_TRUE(fs::exists(base / "four" / "comparison.md"));
  fs::remove_all(base);
}

TEST(Compare, GlobalOptionsGoToThePoliciesThatReadThem) {
  const Workload w = small_workload();
  CompareRequest req;
  req.policies = {"fifo-isolated", "sjf", "tiresias"};
  req.sets = {"scope=pooled", "tiresias:interval=30", "sjf:backfill=on"};
  const auto opts = options_per_policy(w, req, AuxData{});
  ASSERT_EQ(opts.size(), 3u);
  EXPECT_TRUE(opts[0].values().empty());
  EXPECT_EQ(opts[1].values().at("scope"), "pooled");
  EXPECT_EQ(opts[1].values().at("backfill"), "on");
  EXPECT_EQ(opts[2].values().at("scope"), "pooled");
  EXPECT_EQ(opts[2].values().at("interval"), "30");
  EXPECT_EQ(opts[2].values().count("backfill"), 0u);

  req.sets = {"nobody_reads_this=1"};
  EXPECT_THROW(options_per_policy(w, req, AuxData{}), InputError);
  req.sets = {"qssf:fidelity=lucid"};  // qssf is not compared
  EXPECT_THROW(options_per_policy(w, req, AuxData{}), InputError);
  req.sets = {};
  req.policies = {"sjf", "no-such-policy"};
  EXPECT_THROW(options_per_policy(w, req, AuxData{}), InputError);
}

TEST(Compare, RejectsBadLoadsBeforeRunning) {
  const Workload w = small_workload();
  CompareRequest req;
  req.policies = {"sjf"};
  req.loads = {1.0, 0.0};
  req.out_dir = (fs::temp_directory_path() / "deepshare-compare-bad").string();
  EXPECT_THROW(run_compare(w, req, "test"), InputError);
  EXPECT_FALSE(fs::exists(req.out_dir));
}

TEST(Compare, NamesAndCheckpointOverride) {
  EXPECT_EQ(run_name("sjf", 1.0), "sjf@1");
  EXPECT_EQ(run_name("qssf", 1.25), "qssf@1.25");
  Workload w = small_workload();
  override_checkpoint_interval(w, -1);
  EXPECT_EQ(w.tenants[0].checkpoint_interval, 30 * kMinute);
  override_checkpoint_interval(w, 0);
  EXPECT_EQ(w.tenants[1].checkpoint_interval, 0);
  override_checkpoint_interval(w, 90.5);
  EXPECT_EQ(w.tenants[0].checkpoint_interval, 90500);
  for (const auto& p : main_policies()) EXPECT_FALSE(p.empty());
}

}  // namespace
}  // namespace ds

namespace ds {
namespace {

// `whatif`'s three lines (issue #28): each metric as the site's policy -> DeepShare, with the
// change.
TEST(Whatif, VerdictGivesEachMetricWithItsChange) {
  Metrics site, ds;
  site.avg_queue_s = 12345.6;
  ds.avg_queue_s = 617.3;
  site.p99_queue_s = 100000;
  ds.p99_queue_s = 9000;
  site.entitled_jobs = ds.entitled_jobs = 10;
  site.qos_compliance = 0.884;
  ds.qos_compliance = 0.999;
  site.gpu_occupancy_submit_window = 0.612;
  ds.gpu_occupancy_submit_window = 0.655;
  const auto v = whatif_verdict(site, ds, "slurm");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0],
            "queueing delay: 12,346 s on average with slurm -> 617 s with DeepShare (-95.0 %); "
            "p99 100,000 -> 9,000 s");
  EXPECT_EQ(v[1],
            "QoS of guaranteed tenants: 88.4 % of entitled jobs within their SLO -> 99.9 % "
            "(+11.5 points)");
  EXPECT_EQ(v[2], "utilisation: GPU occupancy 0.612 -> 0.655 (+7.0 %) over the submission window");
  site.entitled_jobs = ds.entitled_jobs = 0;
  site.avg_queue_s = 0;
  EXPECT_EQ(whatif_verdict(site, ds, "fifo-pooled")[1],
            "QoS of guaranteed tenants: no job was entitled (no tenant has a GPU quota)");
  EXPECT_NE(whatif_verdict(site, ds, "fifo-pooled")[0].find("(was 0)"), std::string::npos);
  EXPECT_EQ(default_site_policy(), find_policy("slurm") ? "slurm" : "fifo-pooled");
}

}  // namespace
}  // namespace ds
