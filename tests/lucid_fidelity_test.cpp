// Fidelity of `lucid` (fidelity=lucid) against Lucid's own simulator on the real Venus
// trace (../shared/traces/venus-sept). Skips, saying why, when the data is absent.
//
// Reference: lucid-rerun/lucid-artifact-results.csv, "simulator.py -s lucid (profiler on,
// EBM estimates)": avg JCT 12,886.1 s, avg queue 915.2 s. The ground truth of shared GPUs
// is Lucid's (updater.ColocateUpdater): the measured pair speed, 1/1 for pairs with NeuMF,
// ResNet50, BERT or Transformer. One Venus run for the whole test.
#include <gtest/gtest.h>

#include <filesystem>

#include "baselines/lucid.hpp"
#include "registry/registry.hpp"
#include "report/metrics.hpp"
#include "sim/simulator.hpp"
#include "trace/aux_files.hpp"
#include "trace/load.hpp"

namespace ds {
namespace {
namespace fs = std::filesystem;

const std::string kVenus = std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept";

TEST(LucidFidelity, LucidAveragesMatchLucidsSimulator) {
  if (!fs::exists(kVenus + "/venus_sept_23859_jobs.csv") ||
      !fs::exists(kVenus + "/aux/Venus_Sept_ebm_weekly_updated.csv"))
    GTEST_SKIP() << "Venus trace or its aux/ files not found under " << kVenus
                 << " (research data lives in ../shared/traces beside the project)";
  LoadOptions lo;
  lo.format = "venus";
  Workload w = load_trace(kVenus + "/venus_sept_23859_jobs.csv", lo);
  ASSERT_EQ(w.jobs.size(), 23859u);
  // Lucid's 1 s tick: a job in a VC ends one tick after its work is done (end = start +
  // duration + 1); jobs that finish in the profiler end exactly (lgf.py).
  for (std::size_t i = 0; i < w.jobs.size(); ++i)
    if (w.jobs[i].gpus > 8 || w.truth[i].work > seconds(200)) w.truth[i].work += seconds(1);

  PolicyOptions options;
  options.set("fidelity=lucid");
  const AuxData aux = load_aux(kVenus + "/aux");
  auto policy = make_policy("lucid", PolicyContext{w.cluster, w.tenants, options, {}, &aux});

  const ColocationTable table = ColocationTable::load(kVenus + "/aux");
  std::size_t unmeasured = 0;
  auto profile = [&](const JobSpec& j) -> const Profile* {
    return j.profile >= 0 ? &w.profiles[static_cast<std::size_t>(j.profile)] : nullptr;
  };
  SimConfig cfg;
  // A job stopped by Lucid's profiler restarts in its VC from the start at no cost.
  cfg.restart_overhead.small = cfg.restart_overhead.large = 0;
  cfg.speed_model = [&](const JobSpec& job, std::span<const JobSpec* const> others) {
    double speed = 1;
    for (const JobSpec* o : others) {
      const double v = lucid_colocated_speed(table, profile(job), profile(*o), -1);
      if (v < 0) ++unmeasured;
      speed *= v < 0 ? 0.5 : v;
    }
    return speed;
  };
  const RunRecord r = simulate(w, *policy, cfg);
  const Metrics m = compute_metrics(w, r);
  const auto& sum = r.policy_summary;
  auto get = [&](const char* k) { return sum.count(k) ? sum.at(k) : -1.0; };

  for (const auto& [k, v] : sum) RecordProperty(k, std::to_string(v));
  RecordProperty("avg_jct_s", std::to_string(m.avg_jct_s));
  RecordProperty("avg_queue_s", std::to_string(m.avg_queue_s));
  std::printf(
      "lucid fidelity: Lucid-defined JCT %.1f s, queue %.1f s; ours JCT %.1f s, "
      "queue %.1f s, p99.9 queue %.0f s; occupancy (Lucid) %.4f; shared starts %.0f; "
      "unmeasured pairs %zu\n",
      get("lucid_avg_jct_s"), get("lucid_avg_queue_s"), m.avg_jct_s, m.avg_queue_s, m.p999_queue_s,
      m.gpu_occupancy_lucid, get("lucid_shared_starts"), unmeasured);

  EXPECT_EQ(m.jobs_completed, 23859u);
  EXPECT_EQ(unmeasured, 0u);  // every pair Lucid's rule makes was measured, as Lucid asserts
  // Lucid's averages (its metric definitions): both within 3 %. What remains (queue 2.4 %
  // low): the simulator cannot keep a stranded partner's shared rate, and the profiler is
  // causal (docs/baselines.md, "lucid", has each cause measured).
  EXPECT_NEAR(get("lucid_avg_jct_s"), 12886.1, 12886.1 * 0.03);
  EXPECT_NEAR(get("lucid_avg_queue_s"), 915.2, 915.2 * 0.03);
  // Pinned: our reproduction (0.01 %), so that any change to it is noticed.
  EXPECT_NEAR(get("lucid_avg_jct_s"), 12786.1, 12786.1 * 1e-4);
  EXPECT_NEAR(get("lucid_avg_queue_s"), 893.6, 893.6 * 1e-4);
  EXPECT_EQ(get("lucid_finished_in_profiler"), 10644);  // = Lucid's profiler log
  EXPECT_EQ(get("lucid_profiled_jobs"), 21417);
}

}  // namespace
}  // namespace ds
