// Unit tests of the Slurm driver's pure parts: the pin codec (job Comment), the excerpt
// spec and its (jittered) simulation, and the observed-runs -> RunRecord conversion. The parts that
// talk to Slurm are tested against a real cluster in tests/slurm/.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/testing.hpp"
#include "report/metrics.hpp"
#include "slurm/excerpt.hpp"
#include "slurm/excerpt_sim.hpp"
#include "slurm/observed.hpp"
#include "slurm/pin.hpp"

namespace ds::slurm {

TEST(Pin, RoundTripKeepsOtherKeys) {
  CommentFields f = parse_comment("ds:trace=765472;u=62;mem=3642");
  EXPECT_FALSE(read_pin(f));
  Pin p;
  p.restart = 2;
  p.borrowed = true;
  p.shared = false;
  p.mps_percent = 50;
  p.decided_ms = 1234;
  p.gpus = {{"node1", 0b1011}, {"node3", 0b1}};
  write_pin(f, p);
  const std::string text = format_comment(f);
  EXPECT_EQ(text.rfind("ds:r=2;", 0), 0u) << text;  // r first: the TaskProlog matches it
  EXPECT_NE(text.find("g=node1@0,1,3/node3@0"), std::string::npos) << text;
  const auto back = read_pin(parse_comment(text));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->restart, 2u);
  EXPECT_TRUE(back->borrowed);
  EXPECT_EQ(back->mps_percent, 50);
  EXPECT_EQ(back->gpus, p.gpus);
  EXPECT_EQ(parse_comment(text).at("trace"), "765472");
  CommentFields g = parse_comment(text);
  clear_pin(g);
  EXPECT_FALSE(read_pin(g));
  EXPECT_EQ(g.at("mem"), "3642");
}

TEST(Pin, IgnoresForeignComments) {
  EXPECT_TRUE(parse_comment("my own comment").empty());
}

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
  const ExcerptStats one = excerpt_stats(w, simulate_excerpt(w, config, 1.0, 2.0));
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
  const RunRecord r = simulate_excerpt(w, config, 1.0, 0.0);
  std::vector<bool> include(w.jobs.size(), false);
  include[3] = true;
  const ExcerptStats s = excerpt_stats(w, r, include);
  EXPECT_EQ(s.jobs, 1u);
  EXPECT_DOUBLE_EQ(s.avg_queue_s, to_seconds(r.jobs[3].queue));
  EXPECT_DOUBLE_EQ(s.avg_jct_s, to_seconds(r.jobs[3].end - w.jobs[3].submit));
}

}  // namespace ds::slurm
