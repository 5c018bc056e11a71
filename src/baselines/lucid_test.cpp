// Hand-made scenarios for the lucid baseline: pairing, the sharing switch, the
// profiler, estimated-GPU-time order and Lucid's partner-recovery quirk.
#include "baselines/lucid.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.hpp"
#include "model/testing.hpp"
#include "sim/simulator.hpp"
#include "trace/aux_files.hpp"

namespace ds {
namespace {

using testing::add_job;
using testing::make_workload;

struct Outcome {
  RunRecord result;
  std::map<std::string, double> summary;
};

// Runs lucid with `setup`; job i gets estimate est[i] seconds and sharescore score[i].
Outcome run(const Workload& w, LucidSetup setup, std::vector<double> est, std::vector<int> score,
            const SimConfig& cfg = {}) {
  PolicyOptions o;
  for (std::size_t i = 0; i < est.size(); ++i) setup.estimate_s[w.jobs[i].name] = est[i];
  for (std::size_t i = 0; i < score.size(); ++i) setup.share_score[w.jobs[i].name] = score[i];
  auto p = make_lucid(PolicyContext{w.cluster, w.tenants, o}, std::move(setup));
  Outcome r{simulate(w, *p, cfg), {}};
  r.summary = r.result.policy_summary;
  return r;
}

LucidSetup sharing_always() {
  LucidSetup s;
  s.profiler = false;
  s.sharing = LucidSharing::Always;
  return s;
}

TEST(LucidPairing, RuleChecksGpusMemoryScoresAndEstimatedTime) {
  const PairView job{1, 4000, 1, 100};
  EXPECT_TRUE(lucid_can_pair(job, {1, 4000, 1, 50}, 24576));    // 100 <= 2 x 50
  EXPECT_FALSE(lucid_can_pair(job, {1, 4000, 1, 49}, 24576));   // job runs > 2x longer
  EXPECT_FALSE(lucid_can_pair(job, {2, 4000, 1, 100}, 24576));  // other GPU count
  EXPECT_FALSE(lucid_can_pair(job, {1, 4000, 2, 100}, 24576));  // scores 1 + 2 > 2
  EXPECT_TRUE(lucid_can_pair({1, 4000, 0, 100}, {1, 4000, 2, 100}, 24576));
  EXPECT_FALSE(lucid_can_pair(job, {1, 20576, 1, 100}, 24576));  // 20576 !< 24576 - 4000
  EXPECT_TRUE(lucid_can_pair(job, {1, 20575, 1, 100}, 24576));
  // The first candidate in start order wins.
  const std::vector<PairView> running = {
      {2, 0, 0, 100}, {1, 0, 2, 100}, {1, 0, 1, 100}, {1, 0, 0, 100}};
  EXPECT_EQ(lucid_pick_partner(job, running, 24576), 2u);
  EXPECT_FALSE(lucid_pick_partner({9, 0, 0, 1}, running, 24576));  // > 8 GPUs never pair
}

TEST(LucidPairing, SharesTheFirstCompatibleJobsGpusEvenWhenGpusAreFree) {
  auto w = make_workload(1, 1);  // 8 GPUs
  add_job(w, 0, 1, 0, 100);
  add_job(w, 0, 1, 10, 100);
  w.finalize();
  // Time slicing (the default ground truth): both run at 1/2 while they share.
  Outcome r = run(w, sharing_always(), {100, 100}, {0, 1});
  EXPECT_EQ(r.result.jobs[1].first_start, seconds(10));
  EXPECT_EQ(r.result.jobs[0].end, seconds(190));  // 10 s alone, then 90 s of work at 1/2
  EXPECT_EQ(r.result.jobs[1].end, seconds(200));  // 90 s of work at 1/2, then 10 s alone
  EXPECT_EQ(r.summary.at("lucid_shared_starts"), 1);
}

TEST(LucidPairing, IncompatibleJobsTakeFreeGpus) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 1, 0, 100);
  add_job(w, 0, 1, 10, 100);
  w.finalize();
  Outcome r = run(w, sharing_always(), {100, 100}, {1, 2});  // scores sum to 3
  EXPECT_EQ(r.result.jobs[0].end, seconds(100));
  EXPECT_EQ(r.result.jobs[1].end, seconds(110));
  EXPECT_EQ(r.summary.at("lucid_shared_starts"), 0);
}

TEST(LucidPairing, FidelityKeepsLucidsPartnerRecoveryQuirk) {
  // One GPU: A runs, B pairs with A, A ends first, then C arrives. Lucid "recovers" the
  // job that ends (A) instead of its partner, so B is never paired again: C waits for B.
  auto w = make_workload(1, 1, 1);
  add_job(w, 0, 1, 0, 100);   // A
  add_job(w, 0, 1, 10, 400);  // B
  add_job(w, 0, 1, 300, 50);  // C
  w.finalize();
  const std::vector<double> est = {100, 100, 100};
  const std::vector<int> score = {0, 0, 0};
  // A: 10 s alone + 90 s at 1/2 -> ends at 190. B: 90 s done by 190, alone until 500.
  LucidSetup quirk = sharing_always();
  quirk.lucid_recover_quirk = true;
  Outcome a = run(w, std::move(quirk), est, score);
  EXPECT_EQ(a.result.jobs[0].end, seconds(190));
  EXPECT_EQ(a.result.jobs[1].end, seconds(500));
  EXPECT_EQ(a.result.jobs[2].first_start, seconds(500));
  // Without the quirk B runs alone again and C pairs with it at once.
  Outcome b = run(w, sharing_always(), est, score);
  EXPECT_EQ(b.result.jobs[2].first_start, seconds(300));
}

TEST(LucidOrder, EstimatedGpuTimeFirstWithHeadOfLineBlockingWhenSharingIsOff) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 8, 0, 100);  // fills the node
  add_job(w, 0, 4, 1, 50);   // 4 x 100 = 400 GPU-s estimated
  add_job(w, 0, 1, 2, 50);   // 1 x 1000
  add_job(w, 0, 2, 3, 50);   // 2 x 100 = 200: first
  add_job(w, 0, 8, 4, 50);   // 8 x 10 = 80: first of all, blocks the others
  w.finalize();
  LucidSetup s;
  s.profiler = false;
  s.sharing = LucidSharing::Never;
  Outcome r = run(w, std::move(s), {100, 100, 1000, 100, 10}, {2, 2, 2, 2, 2});
  EXPECT_EQ(r.result.jobs[4].first_start, seconds(100));
  EXPECT_EQ(r.result.jobs[3].first_start, seconds(150));  // then by estimated GPU time
  EXPECT_EQ(r.result.jobs[1].first_start, seconds(150));
  EXPECT_EQ(r.result.jobs[2].first_start, seconds(150));
}

TEST(LucidOrder, SharingOnTriesEveryQueuedJob) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 6, 0, 100);
  add_job(w, 0, 4, 1, 50);  // head of the queue, does not fit
  add_job(w, 0, 1, 2, 50);  // fits: started while sharing is on (no partner: scores 2)
  w.finalize();
  Outcome on = run(w, sharing_always(), {100, 10, 100}, {2, 2, 2});
  EXPECT_EQ(on.result.jobs[2].first_start, seconds(2));
  LucidSetup off = sharing_always();
  off.sharing = LucidSharing::Never;
  Outcome blocked = run(w, std::move(off), {100, 10, 100}, {2, 2, 2});
  EXPECT_EQ(blocked.result.jobs[2].first_start, seconds(100));
}

// A forecast file with 10-minute bins of `jobs` submitted GPU jobs each.
std::string forecast_file(const std::vector<double>& jobs) {
  const auto path = std::filesystem::temp_directory_path() / "lucid_test_forecast.csv";
  std::ofstream f(path);
  f << "time,submit_gpu_job,submit_gpu_num,pred_gpu_job,pred_gpu_num\n";
  for (std::size_t k = 0; k < jobs.size(); ++k)
    f << "2020-09-01 " << (k / 6 < 10 ? "0" : "") << k / 6 << ":" << (k % 6) << "0:00,0,0,"
      << jobs[k] << "," << jobs[k] * 10 << "\n";
  return path.string();
}

TEST(LucidSharingSwitch, ForecastWindowIsTheNextFiveBinsAfterNow) {
  auto f = ThroughputForecast::from_rows(
      read_forecast_file(forecast_file({9, 1, 1, 1, 1, 1, 9, 9, 9, 9, 9, 9})));
  EXPECT_FALSE(f.window_mean(0, ThroughputForecast::Field::Jobs));  // not anchored yet
  f.anchor(seconds(1000));
  using F = ThroughputForecast::Field;
  // At the file's start: bins 1..5 (all 1) -> sharing off at threshold 2.
  EXPECT_DOUBLE_EQ(*f.window_mean(seconds(1000), F::Jobs), 1.0);
  EXPECT_DOUBLE_EQ(*f.window_mean(seconds(1000), F::Gpus), 10.0);
  // 10 minutes later: bins 2..6.
  EXPECT_DOUBLE_EQ(*f.window_mean(seconds(1600), F::Jobs), (4 * 1 + 9) / 5.0);
  EXPECT_EQ(f.next_change(seconds(1000)), seconds(1600));
  // Fewer than six bins left: the mean of all that remain; none left: no forecast.
  EXPECT_DOUBLE_EQ(*f.window_mean(seconds(1000 + 8 * 600), F::Jobs), 9.0);
  EXPECT_FALSE(f.window_mean(seconds(1000 + 11 * 600), F::Jobs));
}

TEST(LucidSharingSwitch, LowForecastTurnsSharingOffUntilItRises) {
  // Bins 1..5 predict 1 GPU job each: PAS is off for the first 10 minutes.
  auto w = make_workload(1, 1);
  add_job(w, 0, 6, 0, 1000);
  add_job(w, 0, 4, 1, 50);  // head, does not fit
  add_job(w, 0, 1, 2, 50);  // would fit
  w.finalize();
  LucidSetup s = sharing_always();
  s.sharing = LucidSharing::Pas;
  s.forecast = ThroughputForecast::from_rows(
      read_forecast_file(forecast_file({9, 1, 1, 1, 1, 1, 9, 9, 9, 9, 9, 9})));  // anchored at 0
  Outcome r = run(w, std::move(s), {1000, 10, 100}, {2, 2, 2});
  // Off until t = 600 s (bins 2..6 average 2.6 > 2): then the small job starts.
  EXPECT_EQ(r.result.jobs[2].first_start, seconds(600));
  EXPECT_EQ(r.result.jobs[1].first_start, seconds(1000));
}

TEST(LucidProfiler, ShortJobsFinishInTheProfilerLongOnesMoveToTheirVc) {
  // Tenant 0 owns the job's VC, tenant 1's node is the profiler.
  auto w = make_workload(2, 1);
  add_job(w, 0, 2, 0, 150);    // done in the profiler: 0..150
  add_job(w, 0, 8, 10, 1000);  // waits for the profiler (6 GPUs free), runs 150..350, VC
  add_job(w, 0, 16, 20, 100);  // > 8 GPUs: skips the profiler -> rejected (VC has 8)
  w.finalize();
  LucidSetup s;
  s.sharing = LucidSharing::Never;
  s.profiler_config.base_nodes = {w.cluster.nodes[1].id};
  Outcome r = run(w, std::move(s), {100, 1000, 100}, {2, 2, 2});
  EXPECT_EQ(r.result.jobs[0].end, seconds(150));
  EXPECT_EQ(r.result.jobs[1].first_start, seconds(150));  // profiling run
  EXPECT_EQ(r.result.jobs[1].preemptions, 1);             // stopped at the 200 s limit
  // In its VC from 350; the simulator adds its 40 s restart overhead.
  EXPECT_EQ(r.result.jobs[1].end, seconds(350 + 1000 + 40));
  EXPECT_EQ(r.result.jobs[2].status, JobStatus::Rejected);
  EXPECT_EQ(r.summary.at("lucid_finished_in_profiler"), 1);
  EXPECT_EQ(r.summary.at("lucid_profiler_stops"), 1);
  // Lucid's definitions: queue = profiler queue (0 and 140 s) + VC wait (0);
  // JCT = 150 s in the profiler, and 1040 s from VC entry.
  EXPECT_DOUBLE_EQ(r.summary.at("lucid_avg_queue_s"), (0 + 140) / 2.0);
  EXPECT_DOUBLE_EQ(r.summary.at("lucid_avg_jct_s"), (150 + 1040) / 2.0);
}

TEST(LucidProfiler, LeastGpuFirstAndElasticNode) {
  // Profiler base node: tenant 1's (8 GPUs); elastic donor: tenant 2.
  auto w = make_workload(3, 1);
  add_job(w, 0, 8, 0, 100);                               // takes the whole base node
  for (int k = 0; k < 12; ++k) add_job(w, 0, 1, 1, 100);  // 12 wait: > 10 -> scale up at 10 s
  add_job(w, 0, 4, 1, 100);                               // LGF: after the 1-GPU jobs
  w.finalize();
  LucidSetup s;
  s.sharing = LucidSharing::Never;
  s.profiler_config.base_nodes = {w.cluster.nodes[1].id};
  s.profiler_config.elastic_donors = {TenantId(2)};
  Outcome r = run(w, std::move(s), std::vector<double>(w.jobs.size(), 100),
                  std::vector<int>(w.jobs.size(), 2));
  EXPECT_EQ(r.summary.at("lucid_profiler_scale_ups"), 1);
  for (int k = 1; k <= 8; ++k) EXPECT_EQ(r.result.jobs[k].first_start, seconds(10)) << k;
  EXPECT_EQ(r.result.jobs[9].first_start, seconds(100));   // base node frees at 100
  EXPECT_EQ(r.result.jobs[13].first_start, seconds(100));  // 4 GPUs: after the 1-GPU jobs
}

TEST(Lucid, RandomWorkloadsSettleUnderEveryProfile) {
  // The simulator validates every decision (shared memory, placements, preemptions).
  std::mt19937 rng(11);
  for (int it = 0; it < 60; ++it) {
    const int tenants = 3 + static_cast<int>(rng() % 3);
    auto w = make_workload(tenants, 1 + static_cast<int>(rng() % 3));
    const int sizes[] = {1, 1, 2, 4, 8, 8, 12, 16};
    const int jobs = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < jobs; ++i)
      add_job(w, static_cast<int>(rng() % tenants), sizes[rng() % 8], rng() % 2000, rng() % 900, 30,
              static_cast<double>(rng() % 20000));
    w.finalize();
    for (auto sharing : {LucidSharing::Pas, LucidSharing::Always, LucidSharing::Never}) {
      LucidSetup s;
      s.sharing = sharing;
      s.pooled = rng() % 2 == 0;
      s.profiler_config = lucid_profiler_nodes(w.cluster, w.tenants);
      s.profiler = !s.profiler_config.base_nodes.empty();
      s.forecast = ThroughputForecast::online().anchor(0);
      std::vector<double> est(w.jobs.size());
      std::vector<int> score(w.jobs.size());
      for (std::size_t k = 0; k < est.size(); ++k) {
        est[k] = static_cast<double>(1 + rng() % 1000);
        score[k] = static_cast<int>(rng() % 3);
      }
      auto r = run(w, std::move(s), est, score);
      for (const auto& o : r.result.jobs)
        ASSERT_TRUE(o.status == JobStatus::Done || o.status == JobStatus::Rejected) << it;
    }
  }
}

TEST(LucidOptions, FidelityNeedsLucidsFiles) {
  auto w = make_workload(3, 2);
  w.finalize();
  PolicyOptions o;
  o.set("fidelity=lucid");
  EXPECT_THROW(make_lucid(PolicyContext{w.cluster, w.tenants, o}), InputError);  // no aux data
  const AuxData empty;
  EXPECT_THROW(make_lucid(PolicyContext{w.cluster, w.tenants, o, {}, &empty}), InputError);
  PolicyOptions bad;
  bad.set("scope=everywhere");
  EXPECT_THROW(make_lucid(PolicyContext{w.cluster, w.tenants, bad}), InputError);
}

TEST(LucidOptions, ProfilerNodesFollowLucidsVcs) {
  auto w = make_workload(4, 2);
  w.tenants[1].name = "vc8Gr";
  w.tenants[2].name = "vcefl";
  w.tenants[3].name = "vcYVn";
  const ProfilerConfig c = lucid_profiler_nodes(w.cluster, w.tenants);
  ASSERT_EQ(c.base_nodes.size(), 2u);
  EXPECT_EQ(c.base_nodes[0], w.cluster.nodes[3].id);  // vc8Gr's last node
  EXPECT_EQ(c.base_nodes[1], w.cluster.nodes[5].id);  // vcefl's last node
  ASSERT_EQ(c.elastic_donors.size(), 1u);
  EXPECT_EQ(c.elastic_donors[0], TenantId(3));
}

}  // namespace
}  // namespace ds
