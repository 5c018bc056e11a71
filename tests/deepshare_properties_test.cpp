// Property tests for the DeepShare policy (rapidcheck) on random multi-tenant
// workloads with workload profiles, so that lending, reclaim and sharing all occur:
//  - usage never exceeds capacity: at most two jobs per GPU, and their memory fits;
//  - every job completes exactly once, never before its submit time;
//  - reclaim rules: after the decisions of a cycle, no entitled job that fits its
//    tenant's quota has waited past its SLO while some node could hold it if the
//    borrowed jobs alone on that node's GPUs were preempted;
//  - determinism: the same workload gives the same schedule;
//  - with the rules of issue #15 on or off in any mix, the above hold; with a model that is
//    far too optimistic, no entitled job runs beyond its sharing bound (probation).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "model/testing.hpp"
#include "registry/registry.hpp"
#include "sim/simulator.hpp"
#include "sim/speed_models.hpp"

namespace ds {
namespace {

Workload random_workload() {
  const int tenants = *rc::gen::inRange(2, 5);
  Workload w = testing::make_workload(tenants, *rc::gen::inRange(1, 3), 8);
  for (auto& t : w.tenants) t.checkpoint_interval = seconds(*rc::gen::element(0, 300, 1800));
  const int jobs = *rc::gen::inRange(1, 120);
  for (int i = 0; i < jobs; ++i) {
    const int gpus = *rc::gen::element(1, 1, 1, 2, 4, 8, 16);
    testing::add_job(w, *rc::gen::inRange(0, tenants), gpus, *rc::gen::inRange(0, 4000),
                     *rc::gen::inRange(1, 3000), *rc::gen::inRange(5, 100),
                     *rc::gen::inRange(500, 16000));
  }
  w.finalize();
  return w;
}

class Checked final : public Policy {
 public:
  Checked(std::unique_ptr<Policy> inner, const Workload& w)
      : inner_(std::move(inner)), w_(w), entitled_(w.jobs.size(), false) {}

  Decisions decide(const ClusterSnapshot& s) override {
    for (std::size_t g = 0; g < s.gpus.size(); ++g) {
      RC_ASSERT(s.gpus[g].jobs <= 2);
      if (s.gpus[g].jobs >= 2) {
        const Node* node = nullptr;
        for (const auto& n : w_.cluster.nodes)
          if (static_cast<int>(g) >= n.first_gpu && static_cast<int>(g) < n.first_gpu + n.gpus)
            node = &n;
        RC_ASSERT(s.gpus[g].memory_used_mib <= node->gpu_memory_mib);
      }
    }
    for (const auto& f : s.finished) {
      RC_ASSERT(!done_.count(f.job));
      done_.insert(f.job);
    }
    // Entitlement at submit, as the metrics define it.
    for (JobId id : s.arrived) {
      const JobSpec& j = s.jobs[id.index()];
      entitled_[id.index()] = guaranteed(s, j.tenant) + queued_entitled(s, j.tenant) + j.gpus <=
                              s.tenants[j.tenant.index()].quota_gpus;
    }
    Decisions d = inner_->decide(s);
    check_reclaim_rules(s, d);
    return d;
  }
  std::set<JobId> done_;

 private:
  int guaranteed(const ClusterSnapshot& s, TenantId t) const {
    int g = 0;
    for (JobId id : s.running)
      if (s.jobs[id.index()].tenant == t && !s.runtime[id.index()].borrowed)
        g += s.jobs[id.index()].gpus;
    return g;
  }
  int queued_entitled(const ClusterSnapshot& s, TenantId t) const {
    int q = 0;
    for (JobId id : s.pending)
      if (s.jobs[id.index()].tenant == t && entitled_[id.index()]) q += s.jobs[id.index()].gpus;
    return q;
  }

  void check_reclaim_rules(const ClusterSnapshot& s, const Decisions& d) {
    // State after the decisions: running set, per-GPU job counts.
    std::set<JobId> running(s.running.begin(), s.running.end());
    std::map<JobId, Placement> where;
    std::map<JobId, bool> borrowed;
    for (JobId id : s.running) {
      where[id] = s.runtime[id.index()].placement;
      borrowed[id] = s.runtime[id.index()].borrowed;
    }
    for (const auto& p : d.preempt) running.erase(p.job);
    std::set<JobId> started;
    for (const auto& st : d.start) {
      running.insert(st.job);
      started.insert(st.job);
      where[st.job] = st.placement;
      borrowed[st.job] = st.borrowed;
    }
    std::vector<int> jobs_on(s.gpus.size(), 0);
    auto each_gpu = [&](const Placement& p, auto f) {
      for (const auto& a : p) {
        const Node& n = w_.cluster.nodes[a.node.index()];
        for (std::uint64_t m = a.gpu_mask; m; m &= m - 1)
          f(n.first_gpu + std::countr_zero(m), a.node);
      }
    };
    for (JobId id : running)
      each_gpu(where[id], [&](int g, NodeId) { ++jobs_on[static_cast<std::size_t>(g)]; });
    std::vector<int> room(w_.cluster.nodes.size(), 0);  // free + preemptible GPUs per node
    for (const auto& n : w_.cluster.nodes)
      for (int g = n.first_gpu; g < n.first_gpu + n.gpus; ++g)
        if (jobs_on[static_cast<std::size_t>(g)] == 0) ++room[n.id.index()];
    for (JobId id : running) {
      if (!borrowed[id]) continue;
      bool alone = true;
      each_gpu(where[id],
               [&](int g, NodeId) { alone = alone && jobs_on[static_cast<std::size_t>(g)] == 1; });
      if (alone) each_gpu(where[id], [&](int, NodeId n) { ++room[n.index()]; });
    }
    std::map<TenantId, int> g_after;
    for (JobId id : running)
      if (!borrowed[id]) g_after[s.jobs[id.index()].tenant] += s.jobs[id.index()].gpus;
    for (JobId id : s.pending) {
      if (started.count(id) || !entitled_[id.index()]) continue;
      const JobSpec& j = s.jobs[id.index()];
      const Tenant& t = s.tenants[j.tenant.index()];
      if (s.runtime[id.index()].first_start != kNever) continue;
      if (s.now <= j.submit + t.slo_queue || j.gpus > 8) continue;
      if (g_after[j.tenant] + j.gpus > t.quota_gpus) continue;
      for (const auto& n : w_.cluster.nodes) {
        if (room[n.id.index()] >= j.gpus && std::getenv("DS_PROP_DUMP")) {
          std::fprintf(stderr, "job %u tenant %u gpus %d submit %lld now %lld node %u owner %u\n",
                       id.index(), j.tenant.index(), j.gpus, (long long)(j.submit / 1000),
                       (long long)(s.now / 1000), n.id.index(), n.owner.index());
          for (JobId r : running)
            std::fprintf(stderr, "  running %u tenant %u gpus %d borrowed %d node %u started %d\n",
                         r.index(), s.jobs[r.index()].tenant.index(), s.jobs[r.index()].gpus,
                         (int)borrowed[r], where[r][0].node.index(), (int)started.count(r));
          for (const auto& t : w_.tenants)
            std::fprintf(stderr, "tenant %u quota %d\n", t.id.index(), t.quota_gpus);
          for (JobId p : s.pending)
            std::fprintf(
                stderr,
                "  pending %u tenant %u gpus %d entitled %d submit %lld wait %s started %d\n",
                p.index(), s.jobs[p.index()].tenant.index(), s.jobs[p.index()].gpus,
                (int)entitled_[p.index()], (long long)(s.jobs[p.index()].submit / 1000),
                to_string(s.runtime[p.index()].wait), (int)started.count(p));
          for (JobId r : s.running)
            std::fprintf(stderr,
                         "  snap-running %u last_start %lld partner? borrowed %d shared %d\n",
                         r.index(), (long long)(s.runtime[r.index()].last_start / 1000),
                         (int)s.runtime[r.index()].borrowed, (int)s.runtime[r.index()].shared);
        }
        RC_ASSERT(room[n.id.index()] < j.gpus);  // else a reclaim could have placed it
      }
    }
  }

  std::unique_ptr<Policy> inner_;
  const Workload& w_;
  std::vector<bool> entitled_;
};

// The rules of issue #15 switched on and off at random (reclaim by present need or waiting
// for predicted ends, quota aging of small jobs only or of all, probation, split pairs, pairs
// as victims at their host's checkpoint): the invariants hold in every configuration.
std::map<std::string, std::string> random_options() {
  return {{"reclaim_wait", *rc::gen::element<std::string>("on", "off")},
          {"aging_max_share", *rc::gen::element<std::string>("0.5", "1")},
          {"probation", *rc::gen::element<std::string>("on", "off")},
          {"split_pairs", *rc::gen::element<std::string>("on", "off")},
          {"pair_victims", *rc::gen::element<std::string>("on", "off")}};
}

RC_GTEST_PROP(DeepShareProperties, InvariantsHoldOnRandomWorkloads, ()) {
  Workload w = random_workload();
  const auto options = random_options();
  PolicyOptions o(options);
  Checked p(make_policy("deepshare", PolicyContext{w.cluster, w.tenants, o}), w);
  RunRecord r = simulate(w, p);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    RC_ASSERT(r.jobs[i].status == JobStatus::Done);
    RC_ASSERT(r.jobs[i].first_start >= w.jobs[i].submit);
  }
  RC_ASSERT(p.done_.size() == w.jobs.size());
  for (const auto& step : r.steps) RC_ASSERT(step.busy_gpus <= w.cluster.total_gpus());
  PolicyOptions o2(options);
  auto again = make_policy("deepshare", PolicyContext{w.cluster, w.tenants, o2});
  RunRecord r2 = simulate(w, *again);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) RC_ASSERT(r.jobs[i].end == r2.jobs[i].end);
}

// Sharing probation: with a ground truth twice as slow shared as the interference model
// predicts, no entitled job ever runs beyond its tenant's sharing bound (only jobs that are
// not entitled share while the model is on probation, and it fails probation), and split
// pairs never lose more than a minute of a job's work.
RC_GTEST_PROP(DeepShareProperties, ProbationProtectsEntitledJobsFromAWrongModel, ()) {
  Workload w = random_workload();
  PolicyOptions o(std::map<std::string, std::string>{{"learn_sharing", "off"}});
  Checked p(make_policy("deepshare", PolicyContext{w.cluster, w.tenants, o}), w);
  const InterferenceFit fit = fit_interference(nullptr);
  SimConfig cfg;
  cfg.speed_model = worse_than_predicted(model_speed_model(w, *fit.model), 1.0);
  RunRecord r = simulate(w, p, cfg);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    RC_ASSERT(r.jobs[i].status == JobStatus::Done);
    if (r.jobs[i].entitled)
      RC_ASSERT(r.jobs[i].max_slowdown <= w.tenants[w.jobs[i].tenant.index()].max_slowdown + 1e-9);
  }
}

// A counterexample ProbationProtectsEntitledJobsFromAWrongModel found (shrunk by rapidcheck,
// seed 5980467285950590989): a pair's partner ended between the cycle it joined and the next,
// so the job's observed rate was its solo rate (1.0); counted as the pair's slowdown it let
// probation pass under a model half as fast as the truth, and an entitled job was then shared
// at 2.0x against its bound of 1.5x. Pinned as a fixed workload.
TEST(DeepShareProperties, ProbationCountsNoObservationOfAPairWhosePartnerLeft) {
  Workload w = testing::make_workload(3, 1, 8);
  const std::int64_t checkpoint_s[] = {0, 1800, 300};
  for (std::size_t t = 0; t < 3; ++t) w.tenants[t].checkpoint_interval = seconds(checkpoint_s[t]);
  // tenant, GPUs, submit s, duration s, GPU util (percent), GPU memory MiB
  const int jobs[][6] = {
      {1, 1, 131, 1, 5, 500},  {1, 2, 131, 1, 5, 500}, {0, 16, 129, 1, 5, 500},
      {0, 8, 167, 1, 5, 500},  {0, 2, 167, 1, 5, 500}, {1, 1, 63, 68, 5, 500},
      {0, 1, 0, 1, 5, 500},    {0, 1, 0, 1, 5, 500},   {0, 1, 0, 1, 5, 500},
      {0, 1, 0, 1, 5, 500},    {0, 4, 0, 1, 5, 500},   {0, 1, 0, 1, 5, 500},
      {0, 2, 0, 1, 5, 500},    {0, 1, 0, 1, 5, 500},   {0, 2, 0, 1, 5, 500},
      {0, 16, 0, 1, 5, 500},   {0, 8, 0, 1, 5, 500},   {0, 2, 0, 1, 5, 500},
      {1, 8, 130, 77, 5, 500}, {0, 4, 0, 1, 5, 500},   {0, 1, 0, 1, 5, 500},
      {1, 16, 39, 1, 5, 500},  {0, 1, 0, 1, 5, 500},   {0, 2, 0, 1, 5, 500},
      {0, 4, 0, 1, 5, 500},    {0, 8, 133, 1, 5, 500}, {0, 16, 39, 129, 5, 500},
  };
  for (const auto& j : jobs) testing::add_job(w, j[0], j[1], j[2], j[3], j[4], j[5]);
  w.finalize();
  PolicyOptions o(std::map<std::string, std::string>{{"learn_sharing", "off"}});
  auto p = make_policy("deepshare", PolicyContext{w.cluster, w.tenants, o});
  const InterferenceFit fit = fit_interference(nullptr);  // outlives the speed model
  SimConfig cfg;
  cfg.speed_model = worse_than_predicted(model_speed_model(w, *fit.model), 1.0);
  RunRecord r = simulate(w, *p, cfg);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    EXPECT_EQ(r.jobs[i].status, JobStatus::Done) << "job " << i;
    if (r.jobs[i].entitled) {
      EXPECT_LE(r.jobs[i].max_slowdown, w.tenants[w.jobs[i].tenant.index()].max_slowdown + 1e-9)
          << "job " << i;
    }
  }
}

// A counterexample the property above once found (shrunk by rapidcheck): in one cycle a
// reclaim preempted a borrowed job, the same cycle restarted it elsewhere, and the
// sharing phase then paired another job with it on its old GPUs, which the reclaiming
// job had just taken (memory overflow). Pinned as a fixed workload.
TEST(DeepShareProperties, PartnerPreemptedAndRestartedInOneCycleIsNotSharedWith) {
  Workload w = testing::make_workload(3, 2, 8);
  const std::int64_t checkpoint_s[] = {1800, 0, 300};
  for (std::size_t t = 0; t < 3; ++t) w.tenants[t].checkpoint_interval = seconds(checkpoint_s[t]);
  // tenant, GPUs, submit s, duration s, GPU util (percent), GPU memory MiB
  const int jobs[][6] = {
      {0, 8, 507, 1, 5, 500},       {0, 1, 1184, 508, 5, 500},   {0, 1, 97, 2232, 51, 500},
      {2, 4, 1023, 1, 5, 500},      {0, 1, 339, 146, 5, 500},    {0, 8, 484, 726, 5, 500},
      {0, 16, 194, 2415, 5, 500},   {1, 4, 705, 2223, 25, 500},  {0, 1, 2815, 2008, 14, 500},
      {0, 16, 738, 1, 5, 500},      {1, 4, 2760, 358, 50, 500},  {0, 1, 1183, 1365, 5, 12904},
      {2, 1, 2760, 436, 5, 500},    {0, 4, 1934, 2105, 5, 500},  {1, 1, 726, 1089, 5, 500},
      {1, 8, 726, 1, 5, 500},       {0, 16, 1267, 1, 5, 500},    {2, 4, 2493, 1731, 5, 10675},
      {0, 16, 1267, 1, 5, 500},     {1, 4, 2538, 1359, 17, 500}, {2, 8, 484, 1, 5, 500},
      {0, 1, 792, 943, 33, 500},    {2, 8, 913, 1107, 5, 500},   {0, 4, 1543, 498, 42, 500},
      {2, 1, 1750, 2491, 56, 500},  {2, 1, 1750, 360, 53, 6724}, {0, 16, 541, 1, 5, 500},
      {0, 16, 541, 1, 5, 500},      {1, 1, 2890, 1643, 8, 500},  {0, 2, 141, 968, 5, 500},
      {0, 4, 3053, 368, 58, 500},   {0, 1, 3295, 251, 5, 500},   {2, 4, 1023, 1930, 5, 500},
      {0, 1, 2777, 1174, 12, 500},  {2, 1, 1650, 455, 5, 500},   {0, 1, 1651, 754, 8, 500},
      {2, 1, 1678, 1571, 85, 1058}, {1, 8, 726, 1490, 5, 500},   {2, 16, 527, 1, 5, 13902},
      {0, 8, 2893, 28, 5, 500},     {0, 16, 485, 1, 5, 500},     {0, 16, 794, 424, 5, 500},
      {2, 1, 170, 980, 51, 500},    {1, 2, 3445, 1070, 5, 500},  {1, 4, 246, 1195, 5, 500},
      {1, 16, 222, 1, 5, 500},      {0, 1, 1011, 962, 5, 11673}, {1, 4, 1044, 2296, 5, 500},
      {0, 16, 2040, 562, 5, 500},   {2, 1, 1750, 513, 47, 2292}, {1, 8, 541, 1, 5, 500},
      {2, 1, 678, 2071, 51, 500},   {0, 1, 2890, 716, 5, 500},   {2, 1, 1750, 1347, 5, 500},
      {1, 1, 2191, 1232, 30, 7747}, {2, 4, 1006, 154, 5, 500},   {0, 1, 195, 1, 8, 500},
      {1, 1, 1544, 932, 73, 863},   {0, 16, 443, 403, 5, 500},   {2, 4, 1023, 232, 5, 500},
      {0, 16, 40, 1365, 6, 500},    {0, 2, 2820, 989, 5, 500},   {0, 8, 1177, 90, 5, 500},
      {2, 8, 3484, 263, 5, 500},    {0, 1, 195, 1, 5, 500},      {0, 2, 221, 221, 5, 500},
      {0, 1, 740, 1892, 5, 500},    {1, 1, 2191, 142, 40, 5977}, {0, 4, 526, 1191, 5, 500},
      {0, 8, 31, 1103, 5, 500},     {0, 4, 2493, 1, 5, 500},     {0, 16, 542, 206, 5, 500},
      {1, 8, 1417, 348, 5, 500},    {0, 4, 497, 2625, 26, 500},  {0, 4, 1645, 145, 5, 500},
      {1, 16, 1178, 249, 5, 500},   {0, 1, 195, 1, 51, 500},     {0, 1, 195, 1, 5, 500},
      {0, 1, 1812, 468, 5, 500},    {0, 1, 536, 7, 6, 500},      {1, 1, 1813, 1363, 5, 500},
      {0, 2, 1183, 233, 5, 500},
  };
  for (const auto& j : jobs) testing::add_job(w, j[0], j[1], j[2], j[3], j[4], j[5]);
  w.finalize();
  PolicyOptions o;
  auto p = make_policy("deepshare", PolicyContext{w.cluster, w.tenants, o});
  RunRecord r;
  ASSERT_NO_THROW(r = simulate(w, *p));
  for (const auto& job : r.jobs) EXPECT_EQ(job.status, JobStatus::Done);
}

}  // namespace
}  // namespace ds
