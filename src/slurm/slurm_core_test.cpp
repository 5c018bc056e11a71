// Unit tests of the Slurm driver's pure parts: the record codec (AdminComment), the GRES
// layout and how a start is expressed in it, the excerpt
// spec and its (jittered) simulation, and the observed-runs -> RunRecord conversion. The parts that
// talk to Slurm are tested against a real cluster in tests/slurm/.
#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "model/testing.hpp"
#include "report/metrics.hpp"
#include "slurm/api.hpp"
#include "slurm/excerpt.hpp"
#include "slurm/excerpt_sim.hpp"
#include "slurm/fidelity.hpp"
#include "slurm/gres.hpp"
#include "slurm/observed.hpp"
#include "slurm/record.hpp"

namespace ds::slurm {

TEST(Record, GateRequestAndPinRoundTrip) {
  const std::string gate = "ds:v=1;gpus=4;n=1;nr=0;mem=3642;u=62;trace=765472";
  auto r = parse_record(gate);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->request.gpus, 4);
  EXPECT_EQ(r->request.nodes, 1);
  EXPECT_FALSE(r->request.no_requeue);
  EXPECT_DOUBLE_EQ(r->request.mem_mib, 3642);
  EXPECT_DOUBLE_EQ(r->request.util, 62);
  EXPECT_EQ(r->request.trace, "765472");
  EXPECT_FALSE(r->pin);
  RecordFields f = parse_fields(gate);
  Pin p;
  p.restart = 2;
  p.borrowed = true;
  p.mps_percent = 50;
  p.mem_limit_mib = 4096;
  p.decided_ms = 1234;
  p.gpus = {{"node1", 0b1011}, {"node3", 0b1}};
  write_pin(f, p);
  const std::string text = format_fields(f);
  EXPECT_EQ(text.rfind("ds:v=1;gpus=4;n=1;nr=0;mem=3642;u=62;trace=765472;", 0), 0u) << text;
  EXPECT_NE(text.find("g=node1@0,1,3/node3@0"), std::string::npos) << text;
  const auto back = parse_record(text);
  ASSERT_TRUE(back && back->pin);
  EXPECT_EQ(back->pin->restart, 2u);
  EXPECT_TRUE(back->pin->borrowed);
  EXPECT_FALSE(back->pin->shared);
  EXPECT_EQ(back->pin->mps_percent, 50);
  EXPECT_EQ(back->pin->mem_limit_mib, 4096);
  EXPECT_EQ(back->pin->gpus, p.gpus);
  clear_pin(f);
  EXPECT_FALSE(parse_record(format_fields(f))->pin);
  EXPECT_EQ(parse_record(format_fields(f))->request.gpus, 4);
}

TEST(Record, ValuesAreCheckedWithRanges) {
  EXPECT_FALSE(parse_record("my own comment"));
  EXPECT_FALSE(parse_record("ds:u=40"));  // no request: not a gate record
  RecordLimits lim;
  lim.max_gpus = 16;
  lim.max_mem_mib = 24576;
  EXPECT_THROW(parse_record("ds:v=1;gpus=17", lim), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=0"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2x"), InputError);
  EXPECT_THROW(parse_record("ds:v=2;gpus=2"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;mem=99999", lim), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;u=101"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;nr=2"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;r=0;b=1;g=node1@64"), InputError);
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;r=0;b=1"), InputError);  // a pin names its GPUs
  EXPECT_THROW(parse_record("ds:v=1;gpus=2;r=0;m=0;g=node1@0"), InputError);
  auto p = parse_record("ds:v=1;gpus=1;n=1;nr=1;begin=1700000000;p=3;x=no room");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->request.no_requeue);
  EXPECT_EQ(p->request.begin_s, 1700000000);
  EXPECT_EQ(p->preempted_at, 3u);
  EXPECT_EQ(p->refused, "no room");
}

TEST(Record, ForgedPinsInTheCommentAreRecognised) {
  EXPECT_TRUE(has_pin_keys("ds:r=0;b=0;s=0;g=node4@0,1,2,3;m=100;gpus=4"));
  EXPECT_TRUE(has_pin_keys("ds:gpus=2;b=0"));
  EXPECT_FALSE(has_pin_keys("ds:gpus=2;u=40;mem=4000"));
  EXPECT_FALSE(has_pin_keys("b=0 in prose"));
}

TEST(Gres, RequestsAllocationsAndCounts) {
  auto r = parse_gres_request("gres:gpu:g0:1,gres:gpu:g2:1");
  EXPECT_EQ(r.kind, GresKind::Whole);
  EXPECT_EQ(r.mask, 0b101u);
  r = parse_gres_request("gres:gpushare:g3:1");
  EXPECT_EQ(r.kind, GresKind::Slot);
  EXPECT_EQ(r.mask, 0b1000u);
  EXPECT_EQ(parse_gres_request("").kind, GresKind::None);
  EXPECT_EQ(parse_gres_request("gres:gpu:2").kind, GresKind::Other);
  EXPECT_EQ(parse_gres_request("gres:gpu:g0:1,gres:gpushare:g1:1").kind, GresKind::Other);
  EXPECT_EQ(parse_gres_request("gres:nic:1").kind, GresKind::Other);
  EXPECT_EQ(format_gres_request(GresKind::Whole, 0b101), "gres:gpu:g0:1,gres:gpu:g2:1");
  EXPECT_EQ(format_gres_request(GresKind::Slot, 0b10), "gres:gpushare:g1:1");
  auto a = parse_gres_alloc("gpu:g0:1(IDX:0),gpu:g2:1(IDX:2),gpushare:g3:1(IDX:3)");
  EXPECT_EQ(a.gpus, 0b101u);
  EXPECT_EQ(a.slots, 0b1000u);
  a = parse_gres_alloc("gpu:2(IDX:0-1)");
  EXPECT_EQ(a.gpus, 0b11u);
  a = parse_gres_alloc("gpu:a100:3(IDX:0,2-3)");
  EXPECT_EQ(a.gpus, 0b1101u);
  EXPECT_EQ(parse_gres_alloc("gpu:g1:0(IDX:),gpushare:g1:1(IDX:1)").gpus, 0u);
  EXPECT_EQ(parse_gpu_count("gpu:g0:1,gpu:g1:1,gpushare:g0:1,gpushare:g1:1"), 2);
  EXPECT_EQ(parse_gpu_count("gpu:4,mps:400"), 4);
  EXPECT_EQ(parse_gpu_count("gpu:tesla:4(S:0)"), 4);
  EXPECT_EQ(expand_tasks("0-5%2"), (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(expand_tasks("1,3-4,7-11:2"), (std::vector<std::uint32_t>{1, 3, 4, 7, 9, 11}));
}

TEST(Gres, AJobsRequestIsFixedOnceWritten) {
  std::set<std::pair<std::string, int>> busy = {{"node1", 0}, {"node2", 1}};
  Occupancy occ;
  occ.idle = [&](const std::string& n, std::uint64_t m) {
    for (int k = 0; k < 64; ++k)
      if ((m >> k & 1) && busy.count({n, k})) return false;
    return true;
  };
  occ.may_share = [](const std::string& n) { return n != "node3"; };
  const std::vector<std::string> nodes = {"node1", "node2", "node3"};
  // first start: as decided, and the request is written
  auto e = express_start({{"node1", 0b110}}, false, {}, nodes, occ);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->write_request);
  EXPECT_EQ(e->kind, GresKind::Whole);
  EXPECT_EQ(e->gpus.at("node1"), 0b110u);
  e = express_start({{"node1", 0b1}}, true, {}, nodes, occ);  // colocated: slots
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, GresKind::Slot);
  // colocated on a partner that holds only the slots (it ran colocated before): the GPUs
  e = express_start({{"node1", 0b1}}, true, {}, nodes, occ, GresKind::Slot);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, GresKind::Whole);
  EXPECT_FALSE(express_start({{"node1", 0b11}, {"node2", 0b1100}}, false, {}, nodes, occ));
  // a restart of a job that holds gpu g1: same indices, where they are idle
  const GresRequest g1{GresKind::Whole, 0b10, 0};
  e = express_start({{"node1", 0b100}}, false, g1, nodes, occ);
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->write_request);
  EXPECT_EQ(e->gpus, (std::map<std::string, std::uint64_t>{{"node1", 0b10}}));
  busy.insert({"node1", 1});
  e = express_start({{"node1", 0b100}}, false, g1, nodes, occ);  // moves to node3
  ASSERT_TRUE(e);
  EXPECT_EQ(e->gpus, (std::map<std::string, std::uint64_t>{{"node3", 0b10}}));
  busy.insert({"node3", 1});
  EXPECT_FALSE(express_start({{"node1", 0b100}}, false, g1, nodes, occ));
  EXPECT_FALSE(express_start({{"node1", 0b10}}, true, g1, nodes, occ));  // ran whole: no slots
  // a job that ran colocated holds slot g0: colocated again on g0, or alone on g0 of a
  // DeepShare-only node
  const GresRequest s0{GresKind::Slot, 0b1, 0};
  EXPECT_TRUE(express_start({{"node2", 0b1}}, true, s0, nodes, occ));
  EXPECT_FALSE(express_start({{"node2", 0b10}}, true, s0, nodes, occ));
  e = express_start({{"node1", 0b100}}, false, s0, nodes, occ);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->gpus, (std::map<std::string, std::uint64_t>{{"node2", 0b1}}));
  EXPECT_EQ(e->kind, GresKind::Slot);
  EXPECT_FALSE(express_start({{"node1", 0b1}}, false, {GresKind::Other, 0, 2}, nodes, occ));
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
