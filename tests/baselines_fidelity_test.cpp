// Fidelity of the Lucid baselines (sjf, srtf, qssf, tiresias) against Lucid's own
// simulator on the real Venus trace: per-VC isolation, checkpoint at preemption
// (Lucid's assumption), Lucid's estimate files for QSSF. Reference averages:
// ../shared/traces/venus-sept/lucid-rerun/lucid-artifact-results.csv (and, for QSSF
// with the EBM file, jct_avg_consolidate.csv / que_avg_consolidate.csv). One Venus
// run per policy. Skips, saying why, when the data is absent. docs/baselines.md
// explains every remaining difference.
#include <gtest/gtest.h>

#include <filesystem>

#include "registry/registry.hpp"
#include "report/metrics.hpp"
#include "sim/simulator.hpp"
#include "trace/aux_files.hpp"
#include "trace/load.hpp"
#include "venus.hpp"

namespace ds {
namespace {
namespace fs = std::filesystem;

using testing::kVenus;

// Runs `policy` on Venus as Lucid does: each VC alone, checkpoint at preemption;
// `extra` is added to every job's run time.
Metrics run_venus(const std::string& policy, std::vector<std::string> sets = {}, Time extra = 0) {
  Workload w = load_trace(kVenus + "/venus_sept_23859_jobs.csv", LoadOptions{"venus", "", {}});
  for (auto& t : w.tenants) t.checkpoint_interval = 0;
  for (auto& t : w.truth) t.work += extra;
  PolicyOptions options;
  for (const auto& s : sets) options.set(s);
  std::vector<Time> oracle;
  for (const auto& t : w.truth) oracle.push_back(t.work);
  const AuxData aux = load_aux(w.aux_dir);
  auto p = make_policy(policy, PolicyContext{w.cluster, w.tenants, options, oracle, &aux});
  RunRecord r = simulate(w, *p);
  return compute_metrics(w, r);
}

struct Reference {
  double jct_s, queue_s, p999_queue_s;  // averages and 99.9th percentile of queueing delay
  std::size_t preemptions;
};

void expect_near(const Metrics& m, Reference r, double rel) {
  EXPECT_NEAR(m.avg_jct_s, r.jct_s, r.jct_s * rel);
  EXPECT_NEAR(m.avg_queue_s, r.queue_s, r.queue_s * rel);
  EXPECT_NEAR(m.p999_queue_s, r.p999_queue_s, r.p999_queue_s * rel);
}

// Within 3% of Lucid's averages (the acceptance bound), and equal to what we
// reproduced when this test was written (to 0.01%), so that any drift shows.
void expect_reproduces(const Metrics& m, Reference lucid, Reference ours) {
  EXPECT_EQ(m.jobs_completed, 23859u);
  EXPECT_NEAR(m.avg_jct_s, lucid.jct_s, lucid.jct_s * 0.03);
  EXPECT_NEAR(m.avg_queue_s, lucid.queue_s, lucid.queue_s * 0.03);
  expect_near(m, ours, 1e-4);
  EXPECT_EQ(m.preemptions, ours.preemptions);
  ::testing::Test::RecordProperty("avg_jct_s", std::to_string(m.avg_jct_s));
  ::testing::Test::RecordProperty("avg_queue_s", std::to_string(m.avg_queue_s));
}

// Lucid's lucid-artifact-results.csv rows.
constexpr Reference kLucidSjf{21095.0, 9325.8, 322076.8, 0};
constexpr Reference kLucidSrtf{12609.9, 829.7, 126901.8, 5507};
constexpr Reference kLucidQssfLgb{18797.5, 7028.2, 690767.2, 0};
constexpr Reference kLucidTiresias{14700.0, 2916.0, 195846.3, 7466};
// QSSF with the EBM file: the artifact's --sweep run (jct/que_avg_consolidate.csv,
// which truncate to whole seconds; no p99.9 there).
constexpr Reference kLucidQssfEbm{15548, 3779, 0, 0};

TEST(BaselinesFidelity, SjfMatchesLucid) {
  REQUIRE_VENUS();
  Metrics m = run_venus("sjf");
  expect_reproduces(m, kLucidSjf, {21095.0, 9325.75, 322077.0, 0});
  expect_near(m, kLucidSjf, 1e-4);  // exact
}

TEST(BaselinesFidelity, QssfWithLucidsLightGbmEstimatesMatchesLucid) {
  REQUIRE_VENUS();
  Metrics m = run_venus("qssf", {"fidelity=lucid", "estimates=lgb"});
  expect_reproduces(m, kLucidQssfLgb, {18797.5, 7028.2, 690767.0, 0});
  expect_near(m, kLucidQssfLgb, 1e-4);  // exact
}

TEST(BaselinesFidelity, QssfWithLucidsEbmEstimatesMatchesLucidsSweep) {
  REQUIRE_VENUS();
  Metrics m = run_venus("qssf", {"fidelity=lucid", "estimates=ebm"});
  expect_reproduces(m, kLucidQssfEbm, {15548.88, 3779.61, 214310.0, 0});
  // Lucid's files hold these averages truncated to whole seconds.
  EXPECT_EQ(static_cast<long>(m.avg_jct_s), 15548);
  EXPECT_EQ(static_cast<long>(m.avg_queue_s), 3779);
}

// SRTF and Tiresias differ from Lucid by its 1 s tick: Lucid ends a job one tick after
// its remaining time reaches 0 (end = start + remaining + 1 s), we at start +
// remaining. The plain run stays within 3%; adding that second to every job's run
// time reproduces Lucid exactly (averages, p99.9 and the number of preemptions), which
// shows that the tick is the whole difference (docs/baselines.md).
TEST(BaselinesFidelity, SrtfMatchesLucid) {
  REQUIRE_VENUS();
  expect_reproduces(run_venus("srtf"), kLucidSrtf, {12615.35, 835.89, 121510.2, 5655});
}

TEST(BaselinesFidelity, SrtfWithLucidsEndOfJobTickEqualsLucid) {
  REQUIRE_VENUS();
  Metrics m = run_venus("srtf", {}, kSecond);
  expect_near(m, kLucidSrtf, 1e-4);
  EXPECT_EQ(m.preemptions, kLucidSrtf.preemptions);
}

TEST(BaselinesFidelity, TiresiasMatchesLucid) {
  REQUIRE_VENUS();
  expect_reproduces(run_venus("tiresias"), kLucidTiresias, {14737.43, 2954.83, 195829.2, 7200});
}

TEST(BaselinesFidelity, TiresiasWithLucidsEndOfJobTickEqualsLucid) {
  REQUIRE_VENUS();
  Metrics m = run_venus("tiresias", {}, kSecond);
  expect_near(m, kLucidTiresias, 1e-4);
  EXPECT_EQ(m.preemptions, kLucidTiresias.preemptions);
}

}  // namespace
}  // namespace ds
