#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "core/error.hpp"

#include "model/testing.hpp"
#include "policy/deepshare/assurance.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/deepshare/deepshare.hpp"
#include "policy/deepshare/lending.hpp"
#include "policy/deepshare/reclaim.hpp"
#include "policy/deepshare/sharing.hpp"
#include "policy/deepshare/twins.hpp"
#include "sim/simulator.hpp"
#include "sim/speed_models.hpp"

namespace ds::deepshare {
namespace {

// --- assurance -------------------------------------------------------------

TEST(Assurance, RawCombinesShareDelayAndOutlook) {
  Config c;
  AssuranceInputs in;
  in.quota = 16;
  in.held = 4;
  in.demand = 8;  // entitled to min(16, 8) = 8, holds 4: share 0.5
  in.oldest_wait = seconds(150);
  in.slo = seconds(300);  // delay 0.5
  in.lent = 8;
  in.lent_back = 0.5;  // outlook 1 - 8 * 0.5 / 16 = 0.75
  EXPECT_DOUBLE_EQ(raw_assurance(in, c), 0.4 * 0.5 + 0.4 * 0.5 + 0.2 * 0.75);
}

TEST(Assurance, IdleTenantIsFullyAssured) {
  Config c;
  AssuranceInputs in;
  in.quota = 8;
  EXPECT_DOUBLE_EQ(raw_assurance(in, c), 1.0);
}

TEST(Assurance, DecayIsTheWeightComputedAnewForEachDtAndTau) {
  Decay d;
  const auto fresh = [](Time dt, Time tau) {
    return 1.0 - std::exp(-static_cast<double>(dt) / static_cast<double>(tau));
  };
  // Repeated, changed and returning arguments, either of them: always the exact value.
  const std::pair<Time, Time> asks[] = {{seconds(2), seconds(300)},
                                        {seconds(2), seconds(300)},
                                        {seconds(5), seconds(300)},
                                        {seconds(5), seconds(3600)},
                                        {seconds(2), seconds(3600)},
                                        {seconds(2), seconds(300)},
                                        {0, seconds(300)}};
  for (const auto& [dt, tau] : asks) EXPECT_EQ(d.alpha(dt, tau), fresh(dt, tau));
  EXPECT_EQ(d.alpha(0, seconds(300)), 0.0);
}

TEST(Assurance, SmoothsWithTimeConstantAndHysteresis) {
  Config c;
  c.ewma_tau = seconds(100);
  AssuranceSignal sig(1, c);
  AssuranceInputs bad;
  bad.quota = 8;
  bad.demand = 8;
  bad.oldest_wait = seconds(300);  // share 0, delay 0, outlook 1: raw 0.2
  sig.update(0, std::span(&bad, 1));
  EXPECT_DOUBLE_EQ(sig.value(0), 0.2);  // the first update takes the raw value
  EXPECT_TRUE(sig.at_risk(0));
  AssuranceInputs good;
  good.quota = 8;
  sig.update(seconds(100), std::span(&good, 1));
  const double expected = 0.2 + (1 - std::exp(-1.0)) * 0.8;  // 0.7057
  EXPECT_NEAR(sig.value(0), expected, 1e-12);
  EXPECT_TRUE(sig.at_risk(0));  // still below healthy_above = 0.8
  sig.update(seconds(300), std::span(&good, 1));
  EXPECT_FALSE(sig.at_risk(0));
}

// --- cycle -----------------------------------------------------------------

// A step that reads A_t before the assurance step ran is a bug the cycle reports, not a
// stale value it hands out.
TEST(Cycle, AssuranceIsReadOnlyAfterItsStep) {
  const ClusterSnapshot s;
  FreeMap free;
  Cycle cy(s, free, 1);
  EXPECT_THROW((void)cy.assured(), std::logic_error);
  const Config c;
  Book book(c, 1);
  const Lender lender(c, book, 0);
  const Assurance a(c, book, lender);
  cy.assurance = &a;
  EXPECT_EQ(&cy.assured(), &a);
}

// --- lending ---------------------------------------------------------------

TEST(Lending, ReserveGrowsAsAssuranceFalls) {
  Config c;
  LendInputs in;
  in.quota = 100;
  in.guaranteed = 20;  // idle 80
  in.assurance = 1.0;
  Lending hi = lending(in, c);
  EXPECT_EQ(hi.idle, 80);
  EXPECT_EQ(hi.reserve, 4);  // 5 % of 80
  EXPECT_EQ(hi.lendable, 76);
  in.assurance = 0.5;  // 5 % + 50 % x 0.5 = 30 %
  EXPECT_EQ(lending(in, c).reserve, 24);
  in.forecast_demand = 30;  // +10 expected growth
  EXPECT_EQ(lending(in, c).reserve, 34);
}

TEST(Lending, BackoffAfterReclaimAndAblations) {
  Config c;
  LendInputs in;
  in.quota = 10;
  in.since_reclaim = seconds(60);
  EXPECT_EQ(lending(in, c).lendable, 0);
  in.since_reclaim = kNever;
  c.borrowing = false;
  EXPECT_EQ(lending(in, c).lendable, 0);
  c.borrowing = true;
  c.assurance = false;
  in.assurance = 0;  // ignored: fixed reserve
  EXPECT_EQ(lending(in, c).reserve, 1);
}

// --- reclaim ---------------------------------------------------------------

struct Cluster2 : testing::GpuCluster {
  Cluster2() : GpuCluster({0, 0}) {}
};

TEST(Reclaim, PicksTheCheapestNodeAndAMinimalSet) {
  Cluster2 c;
  c.occupy(0, 0x0F);                 // guaranteed, not a candidate
  const auto a = c.occupy(0, 0xF0);  // borrowed, 4 GPUs, expensive
  const auto b = c.occupy(1, 0x03);  // borrowed, 2 GPUs, cheap
  const auto d = c.occupy(1, 0x0C);  // borrowed, 2 GPUs, cheap
  const auto e = c.occupy(1, 0xF0);  // borrowed, 4 GPUs, mid
  FreeMap free(c.snapshot());
  JobSpec job;
  job.gpus = 4;
  std::vector<Victim> cand = {{JobId(1), 1000, 0, &c.placements[a], 1000},
                              {JobId(2), 10, 0, &c.placements[b], 1000},
                              {JobId(3), 20, 0, &c.placements[d], 1000},
                              {JobId(4), 100, 0, &c.placements[e], 1000}};
  auto plan = plan_reclaim(free, c.ids, job, cand);
  ASSERT_TRUE(plan);
  // Node 1: the two cheap 2-GPU jobs (cost 30) beat node 0's 4-GPU job (1000).
  ASSERT_EQ(plan->victims.size(), 2u);
  EXPECT_DOUBLE_EQ(plan->cost, 30);
  EXPECT_EQ(plan->placement.front().node, NodeId(1));
}

TEST(Reclaim, AddsBackVictimsThatAreNotNeeded) {
  Cluster2 c;
  c.occupy(0, 0xFF);
  const auto a = c.occupy(1, 0x01);  // cheapest, but too small alone
  const auto b = c.occupy(1, 0xFE);  // frees 7: enough with the 1 ... and alone not
  FreeMap free(c.snapshot());
  JobSpec job;
  job.gpus = 7;
  auto plan = plan_reclaim(
      free, c.ids, job,
      {{JobId(1), 1, 0, &c.placements[a], 1000}, {JobId(2), 50, 0, &c.placements[b], 1000}});
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->victims.size(), 1u);  // the 1-GPU job was not needed
  EXPECT_EQ(plan->victims[0], JobId(2));
}

TEST(Reclaim, NothingWhenEvenAllCandidatesDoNotMakeRoom) {
  Cluster2 c;
  c.occupy(0, 0xFF);
  const auto a = c.occupy(1, 0x0F);
  c.occupy(1, 0xF0);  // not a candidate
  FreeMap free(c.snapshot());
  JobSpec job;
  job.gpus = 8;
  EXPECT_FALSE(plan_reclaim(free, c.ids, job, {{JobId(1), 1, 0, &c.placements[a], 1000}}));
}

// The bound plan_reclaim checks first is necessary: when it says no, even with every
// candidate gone the job fits no node a candidate touches (one-node jobs: plan_one_node plans
// only there) or not the cluster (wider jobs); a plan is only ever made where it says yes.
RC_GTEST_PROP(Reclaim, TheBoundRefusesOnlyWhatNoPlanCouldPlace, ()) {
  testing::GpuCluster c(std::vector<int>{0, 0, 0});
  std::vector<std::pair<std::size_t, int>> chosen;  // (placement, milli) of the candidates
  std::vector<NodeId> touched;
  for (int n = 0; n < 3; ++n) {
    int k = 0;
    while (k < 8) {
      const int width = *rc::gen::inRange(1, 9 - k);
      const int use = *rc::gen::inRange(0, 4);  // 0: left free, 1: a share, else a whole job
      if (use == 0) {
        k += width;
        continue;
      }
      const int milli = use == 1 ? *rc::gen::inRange(100, 1000) : kMilliPerGpu;
      const std::size_t i = use == 1 ? c.occupy_share(n, k, milli)
                                     : c.occupy(n, ((std::uint64_t{1} << width) - 1) << k);
      if (*rc::gen::arbitrary<bool>()) {
        chosen.emplace_back(i, milli);
        touched.push_back(c.ids[static_cast<std::size_t>(n)]);
      }
      k += use == 1 ? 1 : width;
    }
  }
  std::vector<Victim> cand;  // (c.placements is complete: the pointers stay valid)
  for (const auto& [i, milli] : chosen)
    cand.push_back({JobId(static_cast<std::uint32_t>(i)), 1, 0, &c.placements[i], milli});
  FreeMap free(c.snapshot());
  JobSpec job;
  job.gpus = *rc::gen::inRange(1, 25);
  const bool may = reclaim_may_fit(free, c.ids, job, cand, 8);
  const auto plan = plan_reclaim(free, c.ids, job, cand);
  RC_ASSERT(!plan || may);
  RC_TAG(may ? "may fit" : "refused");
  if (may) return;
  FreeMap::Trial all(free);
  for (const Victim& v : cand) all.give(*v.placement, v.milli);
  if (job.gpus > 8) {
    RC_ASSERT(!place_job(free, c.ids, job));
    return;
  }
  for (const NodeId n : touched) {
    const NodeId only[] = {n};
    RC_ASSERT(!place_job(free, only, job));
  }
}

TEST(Reclaim, CostCountsWorkSinceTheLastCheckpointAndTheRestart) {
  JobSpec j;
  j.gpus = 4;
  JobRuntime r;
  r.status = JobStatus::Running;
  r.attained = seconds(1000);
  r.last_start = seconds(5000);
  // Ran 1000 + 2500 s; checkpoints every 1800 s: 3500 mod 1800 = 1700 s lost, + 40 s.
  EXPECT_DOUBLE_EQ(preemption_cost(j, r, seconds(7500), seconds(1800), seconds(40)), 4 * 1740.0);
}

// --- sharing ---------------------------------------------------------------

TEST(Sharing, BudgetShrinksWithAssuranceAndVanishesBelowTheThreshold) {
  Config c;
  c.sharing_budget = 1.25;
  Tenant t;
  t.max_slowdown = 1.5;
  EXPECT_DOUBLE_EQ(sharing_budget(t, 1.0, c), 1.25);
  EXPECT_DOUBLE_EQ(sharing_budget(t, 0.75, c), 1.125);
  EXPECT_DOUBLE_EQ(sharing_budget(t, 0.4, c), 1.0);
  t.max_slowdown = 1.1;  // the tenant's own bound caps it
  EXPECT_DOUBLE_EQ(sharing_budget(t, 1.0, c), 1.1);
  c.assurance = false;
  t.max_slowdown = 1.5;
  EXPECT_DOUBLE_EQ(sharing_budget(t, 0.0, c), 1.25);
}

// Predicts a fixed speed from the job's utilization: 1 - util / 200.
class UtilModel final : public InterferenceModel {
 public:
  double speed(const JobShape& job, const JobShape&) const override {
    return 1.0 - job.gpu_util / 200.0;
  }
};

TEST(Sharing, ChoosesTheFeasiblePartnerWithTheBestCombinedSpeed) {
  Workload w = testing::make_workload(1, 1);
  testing::add_job(w, 0, 1, 0, 10, 80, 20000);  // 0: too much memory with the new job
  testing::add_job(w, 0, 1, 0, 10, 60, 4000);   // 1: feasible, speed 0.7 -> slowdown 1.43
  testing::add_job(w, 0, 1, 0, 10, 20, 4000);   // 2: feasible, speed 0.9
  testing::add_job(w, 0, 1, 0, 10, 30, 4000);   // 3: the new job (speed 0.85)
  w.finalize();
  std::vector<JobRuntime> rt(4);
  std::vector<GpuState> gpus(8);
  for (int i = 0; i < 3; ++i) {
    rt[static_cast<std::size_t>(i)].status = JobStatus::Running;
    rt[static_cast<std::size_t>(i)].placement = {NodeAlloc{NodeId(0), 1ULL << i}};
    gpus[static_cast<std::size_t>(i)] = GpuState{
        1, 1000, static_cast<std::int32_t>(w.jobs[static_cast<std::size_t>(i)].gpu_memory_mib)};
  }
  ClusterSnapshot s;
  s.cluster = &w.cluster;
  s.jobs = w.jobs;
  s.runtime = rt;
  s.gpus = gpus;
  const std::vector<JobId> partners = {JobId(0), JobId(1), JobId(2)};
  const std::vector<double> budgets = {1.25};
  UtilModel model;
  auto choice = choose_partner(s, w.jobs[3], partners, budgets, model);
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->partner, JobId(2));
  EXPECT_EQ(choice->placement.front().gpu_mask, 1u << 2);
  EXPECT_EQ(choice->thread_percent, 70);  // 30 / (30 + 20) = 60 %, + 10
  EXPECT_EQ(choice->memory_limit_mib, 4000);
  const std::vector<double> none = {1.0};
  EXPECT_FALSE(choose_partner(s, w.jobs[3], partners, none, model));
  // Learned from observed speeds: jobs run 1.5x slower shared than predicted, so job 2's
  // slowdown (1.11 predicted) is 1.67, past the budget.
  EXPECT_FALSE(choose_partner(s, w.jobs[3], partners, budgets, model, 1.5));
  EXPECT_TRUE(choose_partner(s, w.jobs[3], partners, budgets, model, 1.05));
}

// --- the policy, end to end ------------------------------------------------

RunRecord run(const Workload& w, std::map<std::string, std::string> options = {}) {
  PolicyOptions o(std::move(options));
  auto p = make_deepshare(PolicyContext{w.cluster, w.tenants, o});
  return simulate(w, *p);
}

TEST(DeepShare, IdleQuotaIsLentToAnotherTenant) {
  Workload w = testing::make_workload(2, 1);  // two tenants, 8 GPUs each
  testing::add_job(w, 1, 8, 0, 1000);
  testing::add_job(w, 1, 4, 0, 1000);  // beyond tenant 1's quota: borrows tenant 0's GPUs
  testing::add_job(w, 1, 4, 0, 1000);  // no tenant at risk: every idle GPU is lent at once
  w.finalize();
  auto r = run(w);
  EXPECT_EQ(r.jobs[1].first_start, 0);
  EXPECT_EQ(r.jobs[2].first_start, 0);
  // Reserves held against forecasts (present_risk=off): tenant 0 keeps 5 % (1 GPU).
  auto reserve = run(w, {{"present_risk", "off"}});
  EXPECT_EQ(reserve.jobs[1].first_start, 0);
  EXPECT_EQ(reserve.jobs[2].first_start, seconds(1000));
  auto off = run(w, {{"borrowing", "off"}});
  EXPECT_EQ(off.jobs[1].first_start, seconds(1000));
}

TEST(DeepShare, EntitledJobReclaimsLentGpusWithinItsSlo) {
  Workload w = testing::make_workload(2, 1);
  w.tenants[1].checkpoint_interval = seconds(600);
  testing::add_job(w, 1, 8, 0, 100000);
  testing::add_job(w, 1, 8, 0, 100000);  // borrows tenant 0's node
  testing::add_job(w, 0, 4, 2000, 500);  // tenant 0 wants its quota back
  w.finalize();
  auto r = run(w, {{"reserve_min", "0"}});
  // Checkpoint-aware: the borrower's next checkpoint (2400 s) comes after the deadline
  // (2000 + 300 - 30 s), so it is preempted at the deadline.
  EXPECT_EQ(r.jobs[2].first_start, seconds(2270));
  EXPECT_TRUE(r.jobs[2].entitled);
  EXPECT_EQ(r.jobs[1].preemptions, 1);
  EXPECT_EQ(r.jobs[1].lost_work, seconds(2270 % 600));
  auto off = run(w, {{"reclaim", "off"}, {"reserve_min", "0"}});
  EXPECT_GT(off.jobs[2].first_start, seconds(2300));  // waits for the borrower to end
}

TEST(DeepShare, ReclaimWaitsForTheBorrowersCheckpointWithinTheSlo) {
  Workload w = testing::make_workload(2, 1);
  w.tenants[1].checkpoint_interval = seconds(600);
  testing::add_job(w, 1, 8, 0, 100000);
  testing::add_job(w, 1, 8, 0, 100000);  // borrows tenant 0's node
  testing::add_job(w, 0, 4, 2300, 500);  // the borrower checkpoints at 2400 s
  w.finalize();
  auto r = run(w, {{"reserve_min", "0"}});
  EXPECT_EQ(r.jobs[2].first_start, seconds(2400));  // within the SLO, nothing lost
  EXPECT_EQ(r.jobs[1].preemptions, 1);
  EXPECT_EQ(r.jobs[1].lost_work, 0);
}

// Reclaim by present need (reclaim_wait=off): the borrower is predicted to end long before
// the entitled job's deadline (no history: a short prior), but it runs on; the entitled job
// takes its GPUs at its checkpoint instead of waiting for an end that does not come.
TEST(DeepShare, ReclaimDoesNotWaitForPredictedEndsOfBorrowers) {
  Workload w = testing::make_workload(2, 1);
  w.tenants[1].checkpoint_interval = seconds(600);
  for (int k = 0; k < 4; ++k) testing::add_job(w, 1, 1, 0, 60);  // history: jobs of 60 s
  testing::add_job(w, 1, 8, 200, 100000);
  testing::add_job(w, 1, 8, 200, 100000);  // borrows tenant 0's node, predicted ~60 s
  testing::add_job(w, 0, 4, 2050, 500);    // the borrower checkpointed at 2000 s
  w.finalize();
  auto r = run(w, {{"reserve_min", "0"}, {"reclaim_wait", "off"}});
  EXPECT_EQ(r.jobs[6].first_start, seconds(2050));
  EXPECT_EQ(r.jobs[5].lost_work, seconds(50));
  // Waiting on the predicted end: the entitled job waits to its deadline and the borrower
  // loses the work since its checkpoint.
  auto wait = run(w, {{"reserve_min", "0"}});  // the default
  EXPECT_EQ(wait.jobs[6].first_start, seconds(2050 + 270));
  EXPECT_EQ(wait.jobs[5].lost_work, seconds(320));
}

// Tenant trees (model/tenant_tree.hpp): p 16 = a 8 + b 8, x 8, y 0 (best-effort), on three
// shared nodes. b borrows a's idle quota inside p (p stays within its 16); y borrows x's.
// x's reclaim may take only y's borrower: p's group is within its guarantee. Flat, the same
// quotas without the tree, the cheaper and later borrower (b's) is taken.
TEST(DeepShare, AReclaimLeavesBorrowingInsideAGroupWithinItsGuarantee) {
  for (const bool tree : {true, false}) {
    Workload w = testing::make_tree_workload(
        3, {{"p", -1, 16}, {"a", 0, 8}, {"b", 0, 8}, {"x", -1, 8}, {"y", -1, 0}}, tree);
    testing::add_job(w, 2, 8, 0, 100000);   // b, its own quota
    testing::add_job(w, 4, 8, 0, 100000);   // y borrows
    testing::add_job(w, 2, 8, 10, 100000);  // b borrows a's idle quota
    testing::add_job(w, 3, 8, 100, 500);    // x wants its quota back
    w.finalize();
    auto r = run(w, {{"reserve_min", "0"}});
    EXPECT_EQ(r.jobs[3].preemptions, 0);
    EXPECT_EQ(r.jobs[1].preemptions, tree ? 1 : 0) << (tree ? "tree" : "flat");
    EXPECT_EQ(r.jobs[2].preemptions, tree ? 0 : 1) << (tree ? "tree" : "flat");
    EXPECT_LE(r.jobs[3].first_start, seconds(400));  // within x's SLO either way
  }
}

// Idle quota is lent inside the subtree first: a's idle 8 GPUs go to its sibling b before
// x (which comes first without the tree: the lower tenant id, both borrowing nothing yet).
TEST(DeepShare, IdleQuotaIsLentInsideTheSubtreeFirst) {
  for (const bool tree : {true, false}) {
    Workload w = testing::make_tree_workload(
        3, {{"x", -1, 8}, {"p", -1, 16}, {"a", 1, 8}, {"b", 1, 8}}, tree);
    testing::add_job(w, 0, 8, 0, 100000);  // x, its own quota
    testing::add_job(w, 3, 8, 0, 100000);  // b, its own quota
    testing::add_job(w, 3, 8, 5, 1000);    // b wants to borrow ...
    testing::add_job(w, 0, 8, 5, 1000);    // ... and x too: a's 8 idle GPUs for one of them
    w.finalize();
    auto r = run(w, {{"reserve_min", "0"}});
    EXPECT_EQ(r.jobs[2].first_start, tree ? seconds(5) : seconds(1005)) << tree;
    EXPECT_EQ(r.jobs[3].first_start, tree ? seconds(1005) : seconds(5)) << tree;
  }
}

// Quota aging is for jobs that need at most half of their tenant's quota: a job as large as
// the quota that waited past quota_aging_s does not hold the quota back from short jobs.
TEST(DeepShare, QuotaAgingOnlyForJobsOfAtMostHalfTheQuota) {
  Workload w = testing::make_workload(2, 1);
  testing::add_job(w, 1, 8, 0, 100000);  // tenant 1 busy: nothing to lend
  testing::add_job(w, 0, 4, 0, 100000);  // tenant 0: half its quota, long ...
  testing::add_job(w, 0, 4, 0, 5000);    // ... and half until 5,000 s
  testing::add_job(w, 0, 8, 10, 1000);   // does not fit beside them; waits past the aging
  // Short jobs submitted while the quota is full (not entitled), before half of it frees.
  for (int k = 0; k < 5; ++k) testing::add_job(w, 0, 2, 4000 + 200 * k, 100);
  w.finalize();
  // Without borrowing (they could borrow their own tenant's idle quota) and time slicing.
  const std::map<std::string, std::string> o = {{"time_slicing", "off"}, {"borrowing", "off"}};
  auto r = run(w, o);
  for (std::size_t k = 4; k < w.jobs.size(); ++k) {
    EXPECT_FALSE(r.jobs[k].entitled) << k;
    EXPECT_LE(r.jobs[k].first_start, seconds(5300)) << k;
  }
  // Aging every job: the large one holds its tenant's quota back until the long job ends.
  auto all_o = o;
  all_o["aging_max_share"] = "1";
  auto all = run(w, all_o);
  for (std::size_t k = 4; k < w.jobs.size(); ++k)
    EXPECT_GE(all.jobs[k].first_start, seconds(100000)) << k;
}

// A job of a named user on make_workload(1, 1)'s one 8-GPU node (times in seconds).
struct UserJob {
  const char* user;
  int gpus;
  std::int64_t submit_s, duration_s;
};

// `jobs` run without and with the switch `option` (time slicing off); the jobs from the third
// on are not entitled in either run.
std::pair<RunRecord, RunRecord> run_off_on(std::initializer_list<UserJob> jobs,
                                           const char* option) {
  Workload w = testing::make_workload(1, 1);
  for (const UserJob& j : jobs) {
    testing::add_job(w, 0, j.gpus, j.submit_s, j.duration_s);
    w.jobs.back().user = w.intern_user(j.user);
  }
  w.finalize();
  std::map<std::string, std::string> o = {{"time_slicing", "off"}};
  RunRecord off = run(w, o);
  o[option] = "on";
  RunRecord on = run(w, o);
  for (const RunRecord* r : {&off, &on})
    for (std::size_t k = 2; k < w.jobs.size(); ++k)
      EXPECT_FALSE(r->jobs[k].entitled) << option << " job " << k;
  return {std::move(off), std::move(on)};
}

std::vector<Time> last_three_starts(const RunRecord& r) {
  return {r.jobs[2].first_start, r.jobs[3].first_start, r.jobs[4].first_start};
}

// repredict: a job queued before any job of its user finished ("blind", predicted from its
// tenant's and the cluster's history) is predicted again at the user's first finish, so the
// user's later jobs of the same size, predicted from that finish, do not pass it.
TEST(DeepShare, ABlindPredictionIsRenewedAtTheUsersFirstFinish) {
  const auto [off, on] = run_off_on({{"a", 7, 0, 1000},  // the node stays full until 1,000 s ...
                                     {"u", 1, 0, 50},    // ... but for u's first job (ends at 50 s)
                                     {"u", 4, 10, 100},  // B: queued blind (nothing ended yet)
                                     {"u", 4, 60, 100},  // C and D: queued after u's first
                                     {"u", 4, 70, 100}},  // finish, predicted from it
                                    "repredict");
  // At 1,000 s two of the three fit. Without a second prediction B's key is the blind one
  // (the prior, far above u's 50 s): C and D go first. Predicted again at 50 s, B ties with
  // C and D and goes first by its submit time.
  EXPECT_EQ(last_three_starts(off),
            (std::vector<Time>{seconds(1100), seconds(1000), seconds(1000)}));
  EXPECT_EQ(last_three_starts(on),
            (std::vector<Time>{seconds(1000), seconds(1000), seconds(1100)}));
}

// twins: jobs alike to the predictor wait in submit order. The estimate for u's 4-GPU jobs
// falls when b's short job ends (at 100 s) between the first twin's arrival and the others'.
TEST(DeepShare, TwinsWaitInSubmitOrderWhenTheEstimateMoves) {
  const auto [off, on] = run_off_on({{"a", 6, 0, 2000},    // the node stays full until 2,000 s ...
                                     {"b", 2, 0, 100},     // ... but for b's job (ends at 100 s)
                                     {"u", 4, 10, 100},    // T1: predicted before anything ended
                                     {"u", 4, 200, 100},   // T2 and T3: predicted shorter,
                                     {"u", 4, 300, 100}},  // after b's job ended
                                    "twins");
  // At 2,000 s two of the three fit: without twins the later two, predicted shorter; with
  // twins T1 took T2's prediction when T2 arrived: submit order.
  EXPECT_EQ(last_three_starts(off),
            (std::vector<Time>{seconds(2100), seconds(2000), seconds(2000)}));
  EXPECT_EQ(last_three_starts(on),
            (std::vector<Time>{seconds(2000), seconds(2000), seconds(2100)}));
}

// Twins::earlier: the twins queued before a job, oldest first; entries of jobs that no longer
// wait or whose id another job took are dropped; other classes are not.
TEST(Twins, EarlierTwinsOldestFirstAndPruned) {
  Twins tw;
  std::vector<JobSpec> jobs;
  auto add = [&](int gpus, std::int64_t submit_s) {
    JobSpec j;
    j.id = JobId(static_cast<std::uint32_t>(jobs.size()));
    j.tenant = TenantId(0);
    j.user = UserId(0);
    j.gpus = gpus;
    j.submit = seconds(submit_s);
    jobs.push_back(j);
    tw.arrived(j);
  };
  for (int k = 0; k < 100; ++k) add(4, k);  // ids 0..99, twins
  add(2, 50);                               // id 100: another class
  std::set<std::uint32_t> gone = {0, 1, 5};
  auto waiting = [&](JobId id) { return !gone.contains(id.value); };
  auto submit_of = [&](JobId id) { return jobs[id.index()].submit; };
  // Job 70's earlier twins: 2..69 but 5.
  auto e = tw.earlier(jobs[70], waiting, submit_of);
  ASSERT_EQ(e.size(), 67u);
  EXPECT_EQ(e.front(), JobId(2));
  EXPECT_EQ(e[3], JobId(6));
  EXPECT_EQ(e.back(), JobId(69));
  gone.clear();  // dropped for good: they stay out even waiting again
  e = tw.earlier(jobs[4], waiting, submit_of);
  EXPECT_EQ(e, (std::vector<JobId>{JobId(2), JobId(3)}));
  jobs[2].submit = seconds(500);  // id 2 taken by another job
  e = tw.earlier(jobs[4], waiting, submit_of);
  EXPECT_EQ(e, (std::vector<JobId>{JobId(3)}));
  EXPECT_TRUE(tw.earlier(jobs[100], waiting, submit_of).empty());
}

// Sharing probation and split pairs, with a ground truth twice as slow shared as the model
// predicts (the simulator's --truth-error 1).
struct Mispredicted {
  Workload w = testing::make_workload(2, 1);
  InterferenceFit fit = fit_interference(nullptr);
  Mispredicted() {
    // Tenant 0: 8 entitled jobs fill its quota; the rest borrow tenant 1's node or share.
    for (int k = 0; k < 40; ++k) testing::add_job(w, 0, 1, 10 * k, 3000, 30 + k % 3 * 10, 2000);
    w.finalize();
  }
  RunRecord run(std::map<std::string, std::string> options, double error = 1.0) {
    PolicyOptions o(std::move(options));
    auto p = make_deepshare(PolicyContext{w.cluster, w.tenants, o});
    SimConfig cfg;
    cfg.speed_model = worse_than_predicted(model_speed_model(w, *fit.model), error);
    return simulate(w, *p, cfg);
  }
  // Entitled jobs that ran beyond their tenant's sharing bound (QoS violations).
  int violations(const RunRecord& r) const {
    int n = 0;
    for (std::size_t k = 0; k < r.jobs.size(); ++k)
      n += r.jobs[k].entitled && r.jobs[k].max_slowdown > w.tenants[0].max_slowdown + 1e-9;
    return n;
  }
};

TEST(DeepShare, ProbationKeepsEntitledJobsFromSharingWithAWrongModel) {
  Mispredicted m;
  const std::map<std::string, std::string> base = {{"learn_sharing", "off"},
                                                   {"split_pairs", "off"}};
  auto r = m.run(base);
  EXPECT_EQ(m.violations(r), 0);
  EXPECT_EQ(r.policy_summary.at("sharing_failed_tenants"), 2);  // the model failed: all
  EXPECT_GT(r.policy_summary.at("shared_starts"), 0);           // its other jobs were observed
  auto off = base;
  off["probation"] = "off";
  EXPECT_GT(m.violations(m.run(off)), 0);
  // A right model passes probation: entitled jobs share then.
  auto right = m.run(base, 0.0);
  EXPECT_EQ(right.policy_summary.at("sharing_failed_tenants"), 0);
  int shared_entitled = 0;
  for (const auto& j : right.jobs) shared_entitled += j.entitled && j.max_slowdown > 1;
  EXPECT_GT(shared_entitled, 0);
}

TEST(DeepShare, PairsBeyondTheBoundAreSplitAtTheJoinersCheckpoint) {
  Mispredicted m;
  std::map<std::string, std::string> o = {{"learn_sharing", "off"}, {"probation", "off"}};
  auto r = m.run(o);
  const double splits = r.policy_summary.at("pair_splits");
  EXPECT_GT(splits, 0);
  int preempted = 0;
  for (const auto& j : r.jobs) {
    EXPECT_EQ(j.status, JobStatus::Done);
    preempted += j.preemptions;
    EXPECT_LE(j.lost_work, seconds(60));  // split as it joined: nothing to lose
  }
  EXPECT_EQ(preempted, static_cast<int>(splits));  // split joiners never share again
  o["split_pairs"] = "off";
  auto kept = m.run(o);
  EXPECT_EQ(kept.policy_summary.at("pair_splits"), 0);
  double slow = 0, slow_kept = 0;  // shared time beyond the bound
  for (std::size_t k = 0; k < r.jobs.size(); ++k) {
    slow += to_seconds(r.jobs[k].end - r.jobs[k].first_start);
    slow_kept += to_seconds(kept.jobs[k].end - kept.jobs[k].first_start);
  }
  EXPECT_LT(slow, slow_kept);  // split pairs run at full speed again
}

// The pair_victims tests: DeepShare with an interference model that is right, probation off
// (the hosts are entitled: they share from the first pair).
RunRecord run_pairs(const Workload& w, std::map<std::string, std::string> o) {
  const InterferenceFit fit = fit_interference(nullptr);
  o["probation"] = "off";
  PolicyOptions po(std::move(o));
  auto p = make_deepshare(PolicyContext{w.cluster, w.tenants, po});
  SimConfig cfg;
  cfg.speed_model = model_speed_model(w, *fit.model);
  return simulate(w, *p, cfg);
}

// pair_victims: time slicing takes a sharing pair of long-running work at its host's
// checkpoint for a fresh job (the joiner goes with it, losing at most pair_lost of its
// interval), but not while the joiner is fresh itself; without the rule nothing takes the pair,
// whose members almost never reach a checkpoint at once. The fresh job needs less than a node: no
// drain.
TEST(DeepShare, TimeSlicingTakesPairsOfLongRunningWorkAtTheHostsCheckpoint) {
  auto go = [](std::int64_t join_s, std::map<std::string, std::string> o) {
    Workload w = testing::make_workload(2, 1);
    testing::add_job(w, 1, 8, 0, 100000);                // tenant 1's node: nothing to lend
    testing::add_job(w, 0, 8, 0, 20000, 50, 2000);       // the host, guaranteed
    testing::add_job(w, 0, 8, join_s, 20000, 50, 2000);  // joins it (tenant 0's quota is full)
    testing::add_job(w, 0, 4, 5000, 100);                // fresh and short; never shares
    w.finalize();
    return run_pairs(w, std::move(o));
  };
  auto r = go(1000, {});
  ASSERT_GT(r.jobs[2].max_slowdown, 1.0);  // the pair formed (slowdown 1.06)
  EXPECT_EQ(r.jobs[1].preemptions, 1);
  EXPECT_EQ(r.jobs[2].preemptions, 1);
  EXPECT_LE(r.jobs[1].lost_work, seconds(60));   // the host right after its checkpoint
  EXPECT_LE(r.jobs[2].lost_work, seconds(900));  // the joiner: at most pair_lost (0.5) x 1,800 s
  EXPECT_LE(r.jobs[3].first_start, seconds(5000 + 2 * 1800 + 60));  // a host checkpoint
  EXPECT_EQ(r.jobs[0].preemptions, 0);                              // the other tenant's guarantee
  // A fresh joiner (8 GPUs x 2,250 s is the fresh limit) keeps the pair until it is not.
  auto fresh = go(4800, {});
  ASSERT_GT(fresh.jobs[2].max_slowdown, 1.0);
  EXPECT_GE(fresh.jobs[3].first_start, seconds(4800 + 2250));
  EXPECT_LT(fresh.jobs[3].first_start, seconds(20000));
  // A joiner that would lose more than pair_lost of its interval keeps the pair until the
  // host's next checkpoint finds it earlier in its own interval (never, when none may).
  auto none = go(1000, {{"pair_lost", "0"}});
  EXPECT_EQ(none.jobs[1].preemptions, 0);
  EXPECT_GT(none.jobs[3].first_start, seconds(20000));
  auto off = go(1000, {{"pair_victims", "off"}});
  EXPECT_EQ(off.jobs[1].preemptions, 0);
  EXPECT_GT(off.jobs[3].first_start, seconds(20000));  // behind the pair
}

// pair_victims in drains: a pair whose joiner is far from its checkpoint whenever its host
// reaches one is taken member by member, each at its own checkpoint (the joiner first: it
// holds no GPUs), and no job joins the host meanwhile; without the rule the wide job waits
// for the pair to end.
TEST(DeepShare, DrainsTakePairsMemberByMemberAtTheirCheckpoints) {
  auto go = [](std::map<std::string, std::string> o) {
    Workload w = testing::make_workload(2, 2);        // 16 GPUs each
    testing::add_job(w, 0, 8, 0, 50000, 50, 2000);    // the host, guaranteed
    testing::add_job(w, 0, 8, 0, 50000);              // tenant 0's quota is full
    testing::add_job(w, 1, 16, 0, 100000);            // tenant 1's nodes: nothing to lend
    testing::add_job(w, 0, 8, 200, 50000, 50, 2000);  // joins the host
    testing::add_job(w, 0, 16, 5000, 100);            // wide, fresh, not entitled
    w.finalize();
    return run_pairs(w, std::move(o));
  };
  auto r = go({});
  ASSERT_GT(r.jobs[3].max_slowdown, 1.0);  // the pair formed
  EXPECT_FALSE(r.jobs[4].entitled);
  // The joiner is 1,600 s into its interval at each of the host's checkpoints (> pair_lost
  // x 1,800 s): it goes at its own, the host then at its own, each losing about nothing.
  EXPECT_EQ(r.jobs[3].preemptions, 1);
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_LE(r.jobs[3].lost_work, seconds(60));
  EXPECT_LE(r.jobs[0].lost_work, seconds(60));
  EXPECT_LE(r.jobs[4].first_start, seconds(5000 + 3 * 1800));
  EXPECT_EQ(r.jobs[2].preemptions, 0);  // the other tenant's guarantee
  auto off = go({{"pair_victims", "off"}});
  EXPECT_EQ(off.jobs[3].preemptions, 0);
  EXPECT_GT(off.jobs[4].first_start, seconds(40000));  // behind the pair
}

TEST(DeepShare, YoungBorrowersAreReclaimedOnlyAtTheDeadline) {
  Workload w = testing::make_workload(2, 1);
  testing::add_job(w, 1, 8, 0, 100000);
  testing::add_job(w, 1, 8, 100, 100000);  // borrows at 100 s
  testing::add_job(w, 0, 8, 200, 500);     // its borrower is younger than min_runtime
  w.finalize();
  auto r = run(w, {{"prediction", "off"}, {"reserve_min", "0"}});
  // Deadline = submit + SLO (300 s) - margin (30 s).
  EXPECT_EQ(r.jobs[2].first_start, seconds(200 + 270));
  EXPECT_EQ(r.jobs[1].preemptions, 1);
}

// GPUs freed in one instant behind a deep queue are all used at once: the bound on the jobs a
// cycle examines per tenant (kScan, 64) counts jobs that could not start, not starts. 256
// jobs fill the tenant's 256 GPUs; 600 more queue beyond its quota's use (not entitled at
// submission); when the 256 end together, 256 of them start then. Counting starts, 64
// started within the quota and 64 more as borrowers (none for jobs that cannot be
// preempted, such as bare Kubernetes pods), and the rest of the freed GPUs stayed idle until
// the next change, 1,000 s later.
TEST(DeepShare, GpusFreedAtOnceBehindADeepQueueAreAllUsed) {
  for (const bool preemptible : {true, false}) {
    Workload w = testing::make_workload(1, 32);  // one tenant, 32 nodes x 8 GPUs
    for (int i = 0; i < 256; ++i) testing::add_job(w, 0, 1, 0, 100);
    for (int i = 0; i < 600; ++i) testing::add_job(w, 0, 1, 1, 1000);
    w.finalize();
    for (auto& j : w.jobs) j.preemptible = preemptible;
    auto r = run(w, {{"prediction", "off"}});
    int at_100 = 0;
    for (std::size_t i = 256; i < r.jobs.size(); ++i)
      at_100 += r.jobs[i].first_start == seconds(100);
    EXPECT_EQ(at_100, 256) << "preemptible: " << preemptible;
  }
}

TEST(DeepShare, FractionalBorrowersUseLentCapacityByTheirShare) {
  Workload w = testing::make_workload(2, 1);
  testing::add_job(w, 1, 8, 0, 1000);  // tenant 1's whole quota
  for (int i = 0; i < 4; ++i) testing::add_job(w, 1, 1, 0, 1000);
  w.finalize();
  for (std::size_t i = 1; i < 5; ++i) w.jobs[i].gpu_milli = 500;  // 4 x 0.5 GPU, borrowed
  auto r = run(w);
  for (std::size_t i = 1; i < 5; ++i) EXPECT_EQ(r.jobs[i].first_start, 0) << i;
  // Packed two per GPU: 2 of tenant 0's GPUs busy, besides tenant 1's 8.
  EXPECT_EQ(r.steps.front().busy_gpus, 10);
}

TEST(DeepShare, NoTenantPreemptsAnothersGuaranteedJobs) {
  Workload w = testing::make_workload(2, 1);
  testing::add_job(w, 0, 8, 0, 10000);
  testing::add_job(w, 1, 8, 0, 10000);
  testing::add_job(w, 1, 8, 10, 100);  // beyond quota, nothing lent: waits
  w.finalize();
  auto r = run(w);
  EXPECT_EQ(r.jobs[0].preemptions, 0);
  EXPECT_GT(r.jobs[2].first_start, seconds(10));  // at most its own tenant's job makes room
}

// Time slicing: a fresh job of the tenant takes its own long-running job's GPUs right
// after that job's checkpoint; the long job resumes from its checkpoint afterwards.
TEST(DeepShare, TimeSlicingTakesOwnLongRunningWorkAtItsCheckpoint) {
  Workload w = testing::make_workload(2, 1);
  testing::add_job(w, 0, 8, 0, 20000);  // long: 8 GPUs x 2,250 s = the fresh limit
  testing::add_job(w, 1, 8, 0, 20000);
  testing::add_job(w, 0, 8, 3000, 100);  // fresh, short
  w.finalize();
  auto r = run(w);
  EXPECT_EQ(r.jobs[1].preemptions, 0);  // the other tenant's guarantee
  EXPECT_EQ(r.jobs[0].preemptions, 1);
  EXPECT_EQ(r.jobs[2].first_start, seconds(3600));  // job 0's checkpoint (30 min)
  EXPECT_EQ(r.jobs[0].lost_work, 0);
  auto off = run(w, {{"time_slicing", "off"}});
  EXPECT_EQ(off.jobs[0].preemptions, 0);
  EXPECT_EQ(off.jobs[2].first_start, seconds(20000));
}

// A job that cannot be preempted (on Slurm: --no-requeue) never borrows and is never a
// victim: not of a reclaim, not of time slicing.
TEST(DeepShare, NonPreemptibleJobsNeverBorrowAndAreNeverPreempted) {
  Workload w = testing::make_workload(2, 1);
  testing::add_job(w, 1, 8, 0, 100000);
  testing::add_job(w, 1, 8, 0, 1000);    // beyond tenant 1's quota: would borrow
  testing::add_job(w, 0, 8, 0, 20000);   // long, guaranteed: would be time-sliced ...
  testing::add_job(w, 0, 8, 3000, 100);  // ... for this fresh job of its own tenant
  w.finalize();
  for (std::size_t k : {0, 1, 2}) w.jobs[k].preemptible = false;
  auto r = run(w);
  EXPECT_EQ(r.jobs[1].first_start, seconds(100000));  // waits for its quota, never borrows
  EXPECT_EQ(r.jobs[2].preemptions, 0);
  EXPECT_GE(r.jobs[3].first_start, seconds(20000));
  for (const auto& j : r.jobs) EXPECT_EQ(j.preemptions, 0);
}

// Neither side of a colocation may be a job that cannot be colocated.
TEST(DeepShare, NonColocatableJobsNeverShare) {
  Workload w = testing::make_workload(1, 1);
  testing::add_job(w, 0, 8, 0, 1000, 20, 2000);
  testing::add_job(w, 0, 8, 10, 1000, 20, 2000);  // would share job 0's GPUs
  w.finalize();
  const std::map<std::string, std::string> o = {{"probation", "off"}};  // entitled jobs share
  EXPECT_LT(run(w, o).jobs[1].first_start, seconds(1000));              // it shares when both may
  for (std::size_t k = 0; k < 2; ++k) {
    Workload v = w;
    v.jobs[k].colocatable = false;
    auto r = run(v, o);
    EXPECT_EQ(r.jobs[1].first_start, seconds(1000)) << k;
  }
}

TEST(DeepShare, ReportsPredictorAccuracyAndAssurance) {
  Workload w = testing::make_workload(2, 1);
  for (int i = 0; i < 20; ++i) testing::add_job(w, i % 2, 2, i * 100, 300);
  w.finalize();
  PolicyOptions o;
  auto p = make_deepshare(PolicyContext{w.cluster, w.tenants, o});
  SimConfig cfg;
  cfg.sample_interval = seconds(60);
  auto r = simulate(w, *p, cfg);
  EXPECT_GT(r.policy_summary.at("predictor_scored_jobs"), 0);
  ASSERT_FALSE(r.tenant_samples.empty());
  for (const auto& ts : r.tenant_samples) {
    EXPECT_GE(ts.assurance, 0.0);
    EXPECT_LE(ts.assurance, 1.0);
  }
}

TEST(DeepShare, BadOptionValuesAreReported) {
  PolicyOptions o(std::map<std::string, std::string>{{"borrowing", "maybe"}});
  Workload w = testing::make_workload(1, 1);
  w.finalize();
  EXPECT_THROW(make_deepshare(PolicyContext{w.cluster, w.tenants, o}), InputError);
}

}  // namespace
}  // namespace ds::deepshare
