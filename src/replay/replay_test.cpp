// Unit tests of the offline replay tools (src/replay): the excerpt spec and its (jittered)
// simulation, the observed-runs -> RunRecord conversion, and the fidelity verdict.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/testing.hpp"
#include "replay/excerpt.hpp"
#include "replay/excerpt_sim.hpp"
#include "replay/fidelity.hpp"
#include "replay/observed.hpp"
#include "report/metrics.hpp"

namespace ds::slurm {

TEST(Excerpt, ParsesKeys) {
  ExcerptSpec s;
  parse_excerpt("from=10,jobs=200,load=2.5,min=6,max=90", s);
  EXPECT_EQ(s.from, 10u);
  EXPECT_EQ(s.jobs, 200u);
  EXPECT_DOUBLE_EQ(s.load, 2.5);
  EXPECT_DOUBLE_EQ(s.min_wall_s, 6);
  EXPECT_DOUBLE_EQ(s.max_wall_s, 90);
  EXPECT_THROW(parse_excerpt("jobs", s), InputError);
  EXPECT_THROW(parse_excerpt("speed=3", s), InputError);
}

TEST(Observed, QueueJctPreemptionAndOccupancy) {
  Workload w = testing::make_workload(2, 1, 4);  // tenants t0, t1 with 4 GPUs each
  testing::add_job(w, 0, 2, 0, 100);
  testing::add_job(w, 1, 4, 10, 50);
  w.finalize();
  std::vector<ObservedJob> obs(2);
  obs[0].submit = 0;
  obs[0].completed = true;
  obs[0].runs.push_back({seconds(5), seconds(20), true, false, true, {{NodeId(1), 0b11}}});
  obs[0].runs.push_back({seconds(30), seconds(130), false, false, false, {{NodeId(0), 0b11}}});
  obs[1].submit = seconds(10);
  obs[1].completed = true;
  obs[1].runs.push_back({seconds(20), seconds(70), false, false, false, {{NodeId(1), 0b1111}}});
  const RunRecord r = result_from_observation(w, obs);
  EXPECT_EQ(r.jobs[0].queue, seconds(5 + 10));
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_EQ(r.jobs[0].end, seconds(130));
  EXPECT_EQ(r.jobs[1].queue, seconds(10));
  EXPECT_TRUE(r.jobs[1].entitled);
  const Metrics m = compute_metrics(w, r);
  EXPECT_EQ(m.jobs_completed, 2u);
  EXPECT_NEAR(m.avg_queue_s, 12.5, 1e-9);
  EXPECT_NEAR(m.avg_jct_s, (130.0 + 60.0) / 2, 1e-9);
  EXPECT_EQ(m.preemptions, 1u);
  // GPU-seconds: 2x15 + 2x100 + 4x50 = 430 over 8 GPUs x 130 s
  EXPECT_NEAR(m.gpu_occupancy_full, 430.0 / (8 * 130.0), 1e-9);
}

// An engine's clock may show a run starting a little before the submit it recorded (seen on
// Kubernetes: the pod ran before the POST of its Job returned), or a run of no length: the
// conversion takes such a run to start at the submit and last 1 ms, never throws.
TEST(Observed, ARunSeenBeforeItsSubmitStartsAtTheSubmit) {
  Workload w = testing::make_workload(1, 1, 4);
  testing::add_job(w, 0, 2, 0, 100);
  testing::add_job(w, 0, 1, 0, 100);
  w.finalize();
  std::vector<ObservedJob> obs(2);
  obs[0].submit = seconds(10);
  obs[0].completed = true;
  obs[0].runs.push_back({seconds(9), seconds(60), false, false, false, {{NodeId(0), 0b11}}});
  obs[1].submit = seconds(10);
  obs[1].completed = true;
  obs[1].runs.push_back({seconds(12), seconds(12), false, false, false, {{NodeId(0), 0b100}}});
  const RunRecord r = result_from_observation(w, obs);
  EXPECT_EQ(r.jobs[0].queue, 0);
  EXPECT_EQ(r.jobs[0].first_start, seconds(10));
  EXPECT_EQ(r.jobs[0].end, seconds(60));
  EXPECT_EQ(r.jobs[1].queue, seconds(2));
  EXPECT_EQ(r.jobs[1].end, seconds(12) + 1);
}

namespace {
Workload contended_workload() {
  Workload w = testing::make_workload(2, 1, 4);
  for (int i = 0; i < 30; ++i) testing::add_job(w, i % 2, 1 + i % 3, i * 7, 40 + (i * 13) % 60);
  w.finalize();
  return w;
}
}  // namespace

TEST(ExcerptSim, EnsembleWithoutJitterIsTheSingleSimulation) {
  const Workload w = contended_workload();
  ControllerConfig config;  // deepshare, default options
  const ExcerptStats one = excerpt_stats(w, simulate_excerpt(w, config, 1.0, {2.0}));
  EXPECT_EQ(one.jobs, w.jobs.size());
  const Ensemble e = simulate_ensemble(w, config, 1.0, {2.0, 0.0}, 4);
  EXPECT_EQ(e.runs, 4u);
  EXPECT_DOUBLE_EQ(e.avg_queue_s.min, one.avg_queue_s);
  EXPECT_DOUBLE_EQ(e.avg_queue_s.max, one.avg_queue_s);
  EXPECT_NEAR(e.avg_jct_s.mean, one.avg_jct_s, 1e-9);
}

TEST(ExcerptSim, JitteredEnsembleIsReproducibleAndBracketsItsMean) {
  const Workload w = contended_workload();
  ControllerConfig config;
  const LatencyModel latency{2.0, 1.5};
  const Ensemble a = simulate_ensemble(w, config, 1.0, latency, 8);
  const Ensemble b = simulate_ensemble(w, config, 1.0, latency, 8);
  EXPECT_DOUBLE_EQ(a.avg_queue_s.min, b.avg_queue_s.min);
  EXPECT_DOUBLE_EQ(a.avg_queue_s.max, b.avg_queue_s.max);
  EXPECT_LT(a.avg_queue_s.min, a.avg_queue_s.max);  // the latency draws differ per seed
  EXPECT_LE(a.avg_queue_s.min, a.avg_queue_s.mean);
  EXPECT_GE(a.avg_queue_s.max, a.avg_queue_s.mean);
}

TEST(ExcerptSim, StatsCountOnlyIncludedJobs) {
  const Workload w = contended_workload();
  ControllerConfig config;
  const RunRecord r = simulate_excerpt(w, config, 1.0, LatencyModel{});
  std::vector<bool> include(w.jobs.size(), false);
  include[3] = true;
  const ExcerptStats s = excerpt_stats(w, r, include);
  EXPECT_EQ(s.jobs, 1u);
  EXPECT_DOUBLE_EQ(s.avg_queue_s, to_seconds(r.jobs[3].queue));
  EXPECT_DOUBLE_EQ(s.avg_jct_s, to_seconds(r.jobs[3].end - w.jobs[3].submit));
}

// The overhang is what the controller sees: each job holds its GPUs that much longer (the
// ensemble too), and a job's run ends overhang x time scale later than its work.
TEST(ExcerptSim, OverhangLengthensEveryRunAsTheControllerSeesIt) {
  Workload w = testing::make_workload(1, 1, 4);
  // Two 4-GPU jobs that fill their GPUs' memory (no sharing): one waits for the other.
  testing::add_job(w, 0, 4, 0, 100, -1, kDefaultGpuMemoryMib);
  testing::add_job(w, 0, 4, 0, 50, -1, kDefaultGpuMemoryMib);
  w.finalize();
  ControllerConfig config;
  const RunRecord plain = simulate_excerpt(w, config, 10.0, LatencyModel{});
  const RunRecord seen = simulate_excerpt(w, config, 10.0, {0.0, 0.0, 0.5});  // 5 trace s
  ASSERT_EQ(plain.jobs.size(), 2u);
  EXPECT_EQ(w.truth[0].work, seconds(100));  // the caller's workload is left alone
  for (int i = 0; i < 2; ++i) {
    const JobOutcome &p = plain.jobs[i], &o = seen.jobs[i];
    EXPECT_EQ(o.end - o.first_start, p.end - p.first_start + seconds(5)) << i;
  }
  // The job that waits, waits for the first one's overhang too.
  const std::size_t second = plain.jobs[0].first_start == 0 ? 1 : 0;
  EXPECT_EQ(seen.jobs[second].queue, plain.jobs[second].queue + seconds(5));
  const Ensemble e = simulate_ensemble(w, config, 10.0, {0.0, 0.0, 0.5}, 2);
  EXPECT_DOUBLE_EQ(e.avg_jct_s.mean, excerpt_stats(w, seen).avg_jct_s);
  EXPECT_EQ(with_overhang(w, 10.0, 0.5).truth[1].work, seconds(55));
}

// A real run agrees when its means lie inside the jittered ensemble's range widened by the
// tolerance (of the ensemble's mean); without an ensemble, near the single simulation.
TEST(Fidelity, RealMeansAreJudgedAgainstTheEnsemblesSpread) {
  FidelityReport rep;
  rep.sim_avg_jct_s = 1000;
  rep.sim_avg_queue_s = 100;
  rep.real_avg_jct_s = 1050;
  rep.real_avg_queue_s = 140;  // 40 % above the single simulation
  EXPECT_EQ(fidelity_disagreement(rep, 0.10).find("JCT"), std::string::npos);
  EXPECT_NE(fidelity_disagreement(rep, 0.10).find("queueing delay 140.0 s"), std::string::npos);
  rep.ensemble.runs = 32;
  rep.ensemble.avg_jct_s = {990, 1020, 1000};
  rep.ensemble.avg_queue_s = {70, 135, 100};        // timing noise alone spans 70-135 s
  EXPECT_EQ(fidelity_disagreement(rep, 0.10), "");  // 140 <= 135 + 10
  rep.real_avg_queue_s = 146;
  EXPECT_NE(fidelity_disagreement(rep, 0.10).find("outside [60.0, 145.0]"), std::string::npos);
  rep.real_avg_queue_s = 100;
  rep.real_avg_jct_s = 880;  // below 990 - 100
  EXPECT_NE(fidelity_disagreement(rep, 0.10).find("mean JCT 880.0 s"), std::string::npos);
}

}  // namespace ds::slurm
