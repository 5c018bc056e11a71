// Feasibility before placement on the fake cluster (feasible.hpp, reservations.hpp, issue
// #24): nodes of different CPUs and memory, jobs that exclude nodes (--exclude) or ask more
// memory or CPUs than some nodes have, a maintenance reservation. Every online policy places each
// job only where Slurm can start it (the fake counts a run pinned elsewhere: it would stay pending,
// and a real start be rolled back); a job no node can hold is refused with the reason in its
// record. Checked to fail: with spec_of's node mask left out (adapter.cpp), every case on the fake
// cluster fails for every policy (unstartable_pins > 0: runs pinned where Slurm cannot start
// them, e.g. the job excluding node1 pinned to node1).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "registry/registry.hpp"
#include "slurm/fake_harness.hpp"
#include "slurm/feasible.hpp"
#include "slurm/headroom.hpp"
#include "slurm/reservations.hpp"

namespace ds::slurm {
namespace {

// node1, node2: 8 CPUs, 16 GB, 50 GB of TmpDisk; node3, node4: 32 CPUs, 64 GB, 400 GB (4
// GPUs each).
FakeOptions two_sizes() {
  FakeOptions o;
  o.node_cpus = {8, 8, 32, 32};
  o.node_memory_mib = {16000, 16000, 64000, 64000};
  o.node_tmp_mib = {50000, 50000, 400000, 400000};
  return o;
}

// Two nodes of 4 GPUs, 64 GB and 16 CPUs (headroom.hpp's tests).
FakeOptions two_64gb_nodes() {
  FakeOptions o;
  o.nodes = 2;
  o.node_memory_mib = {64000, 64000};
  o.node_cpus = {16, 16};
  return o;
}

bool only_on(const std::vector<std::string>& ran, const std::vector<std::string>& allowed) {
  for (const auto& n : ran)
    if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) return false;
  return !ran.empty();
}

std::vector<std::string> online_policies() {
  std::vector<std::string> names;
  for (const auto& p : policy_registry())
    if (!p.oracle) names.push_back(p.name);
  return names;
}

class Feasible : public ::testing::TestWithParam<std::string> {};

using Placed = std::vector<std::pair<std::uint32_t, std::vector<std::string>>>;

// Runs the cluster until every job ends; each of `jobs` must have completed on its allowed
// nodes only, `any` (no requirement) completed, nothing pinned where Slurm cannot start it.
void run_and_check(FakeHarness& h, Controller& ctl, const Placed& jobs, std::uint32_t any) {
  h.run(ctl, 200000);
  for (const auto& [id, allowed] : jobs) {
    const FakeJobStats& s = h.fc.stats(id);
    EXPECT_TRUE(s.completed) << h.fc.describe(id);
    EXPECT_TRUE(only_on(s.ran_on, allowed)) << h.fc.describe(id);
  }
  EXPECT_TRUE(h.fc.stats(any).completed) << h.fc.describe(any);
  EXPECT_EQ(h.fc.unstartable_pins(), 0);
  for (const auto& why : h.unsound()) ADD_FAILURE() << why;
  EXPECT_EQ(ctl.counters().invalid_decisions, 0u);
}

// Six 2-GPU jobs of 32 GB want 12 GPUs where the big nodes hold 8: the last ones wait for a
// big node although node1 and node2 are idle but for the small jobs; jobs asking 16 CPUs or
// 100 GB of --tmp the same; jobs excluding node3 run elsewhere. Each job ends, where Slurm can
// start it.
TEST_P(Feasible, JobsRunOnlyWhereSlurmCanStartThem) {
  FakeHarness h(two_sizes());
  h.cfg = fake_config(GetParam());
  auto ctl = h.start();
  Placed jobs;
  const std::vector<std::string> big = {"node3", "node4"};
  for (int k = 0; k < 6; ++k) {
    const auto id = h.fc.submit("beta", 2, 8000);
    h.fc.require(id, {}, 0, 32000);
    jobs.emplace_back(id, big);
  }
  const auto cpus = h.fc.submit("alpha", 1, 8000);
  h.fc.require(cpus, {}, 16, 0);
  jobs.emplace_back(cpus, big);
  const auto tmp = h.fc.submit("alpha", 1, 8000);
  h.fc.require(tmp, {}, 0, 0, 100000);  // --tmp=100G
  jobs.emplace_back(tmp, big);
  for (int k = 0; k < 2; ++k) {
    const auto id = h.fc.submit("alpha", 2, 8000);
    h.fc.require(id, {"node3"}, 0, 0);
    jobs.emplace_back(id, std::vector<std::string>{"node1", "node2", "node4"});
  }
  const auto any = h.fc.submit("alpha", 1, 8000);
  run_and_check(h, *ctl, jobs, any);
}

// node1 "fast", node2 none, node3 "fast" and "bigmem", node4 "bigmem": jobs constrained to
// "fast" run on node1 or node3 only, "fast&bigmem" on node3, "fast|bigmem" anywhere but node2.
TEST_P(Feasible, JobsRunOnlyOnNodesWithTheirFeatures) {
  FakeOptions o = two_sizes();
  o.node_features = {"fast", "", "fast,bigmem", "bigmem"};
  FakeHarness h(o);
  h.cfg = fake_config(GetParam());
  auto ctl = h.start();
  const std::pair<std::string, std::vector<std::string>> kinds[] = {
      {"fast", {"node1", "node3"}},
      {"fast&bigmem", {"node3"}},
      {"fast|bigmem", {"node1", "node3", "node4"}}};
  Placed jobs;
  for (int k = 0; k < 2; ++k)
    for (const auto& [features, allowed] : kinds) {
      const auto id = h.fc.submit(k == 0 ? "alpha" : "beta", 2, 6000);
      h.fc.constrain(id, features);
      jobs.emplace_back(id, allowed);
    }
  const auto any = h.fc.submit("alpha", 4, 6000);
  run_and_check(h, *ctl, jobs, any);
}

// What other jobs hold on a node (headroom.hpp): two nodes of 4 GPUs, 64 GB and 16 CPUs;
// jobs of 2 GPUs fit a node's GPUs two by two, but those of 40 GB its memory one by one, and
// those of 10 CPUs its CPUs one by one. Every policy's starts go where Slurm has room (a start
// packed beside such a job moves to the other node, or waits): Slurm never leaves one pending
// for memory or CPUs, no start is rolled back, and the first two 40 GB jobs run side by side.
// Checked to fail: with SlurmAdapter::place's check left out, held_refusals > 0 and rollbacks
// > 0 for every policy.
TEST_P(Feasible, StartsLeaveRoomForWhatOtherJobsHold) {
  FakeHarness h(two_64gb_nodes());
  h.cfg = fake_config(GetParam());
  auto ctl = h.start();
  std::vector<std::uint32_t> ids;
  for (int k = 0; k < 3; ++k) {
    ids.push_back(h.fc.submit("alpha", 2, 20000));
    h.fc.require(ids.back(), {}, 0, 40000);  // --mem=40000
  }
  for (int k = 0; k < 3; ++k) {
    ids.push_back(h.fc.submit("beta", 2, 20000));
    h.fc.require(ids.back(), {}, 10, 0);  // --cpus-per-task=10
  }
  h.run(*ctl, 300000);
  for (auto id : ids) EXPECT_TRUE(h.fc.stats(id).completed) << h.fc.describe(id);
  EXPECT_EQ(h.fc.held_refusals(), 0) << "starts pinned beside jobs holding the node's share";
  EXPECT_EQ(ctl->counters().rollbacks, 0u);
  const auto gap = h.fc.stats(ids[0]).first_start_ms - h.fc.stats(ids[1]).first_start_ms;
  EXPECT_LE(std::abs(gap), 20000) << "the first two 40 GB jobs ran side by side";
  for (const auto& why : h.unsound()) ADD_FAILURE() << why;
  EXPECT_EQ(ctl->counters().invalid_decisions, 0u);
}

// Jobs Slurm runs on DeepShare's nodes that the model does not run hold CPUs and memory
// there too: here a CPU-only job of another partition holds 40 GB of node1's 64 GB for 200 s.
// Two 2-GPU jobs of --mem=40G must both run on node2 (one after the other), never
// be pinned to node1 beside it. Checked to fail with the other partition's share left out of
// SlurmAdapter::held_at: starts pinned to node1 and refused by Slurm (held_refusals > 0).
TEST_P(Feasible, StartsLeaveRoomForJobsOutsideThePartition) {
  FakeHarness h(two_64gb_nodes());
  h.cfg = fake_config(GetParam());
  auto ctl = h.start();
  h.fc.run_outside(0, 2, 40000, 200000);  // 200 s: both jobs are long done by then
  std::vector<std::uint32_t> ids;
  for (int k = 0; k < 2; ++k) {
    ids.push_back(h.fc.submit("alpha", 2, 20000));
    h.fc.require(ids.back(), {}, 0, 40000);
  }
  h.run(*ctl, 300000);
  for (auto id : ids) {
    EXPECT_TRUE(h.fc.stats(id).completed) << h.fc.describe(id);
    EXPECT_TRUE(only_on(h.fc.stats(id).ran_on, {"node2"})) << h.fc.describe(id);
  }
  EXPECT_EQ(h.fc.held_refusals(), 0) << "a start pinned beside the other partition's job";
  EXPECT_EQ(ctl->counters().rollbacks, 0u);
  for (const auto& why : h.unsound()) ADD_FAILURE() << why;
}

// A requirement DeepShare does not read keeps Slurm from starting a job on node1 only
// (hidden_requirement: reason BadConstraints). The start placed there is rolled back once;
// the adapter learns the node (take_back) and the next start goes to another node: the job
// runs, never on node1, after at most one rollback. Checked to fail:
// with refused_nodes never filled, the job waited out rollbacks and backoffs on node1 for
// every policy that places it there first (deepshare, fifo-isolated, fifo-pooled, kueue,
// lucid, qssf, tiresias).
TEST_P(Feasible, AStartSlurmRefusedOnANodeGoesElsewhereNext) {
  FakeHarness h;
  h.cfg = fake_config(GetParam());
  auto ctl = h.start();
  const auto id = h.fc.submit("alpha", 2, 10000);
  h.fc.hidden_requirement(id, {0});
  h.run(*ctl, 400000);
  EXPECT_TRUE(h.fc.stats(id).completed) << h.fc.describe(id);
  EXPECT_TRUE(only_on(h.fc.stats(id).ran_on, {"node2", "node3", "node4"})) << h.fc.describe(id);
  EXPECT_LE(ctl->counters().rollbacks, 1u);
  for (const auto& why : h.unsound()) ADD_FAILURE() << why;
}

INSTANTIATE_TEST_SUITE_P(EveryOnlinePolicy, Feasible, ::testing::ValuesIn(online_policies()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// A maintenance reservation on node1 and node2 from 30 s to 90 s: jobs without a time limit
// never start there before it ends (Slurm would refuse them); jobs with a 10 s limit may
// start there until 10 s + the margin before it. Every job ends, none pinned where Slurm
// cannot start it.
TEST_P(Feasible, ReservationsHoldTheirNodes) {
  FakeHarness h(two_sizes());
  h.cfg = fake_config(GetParam());
  const std::int64_t t0 = h.fc.now_ms();
  h.fc.reservations.push_back({"maint", {0, 1}, t0 + 30000, t0 + 90000});
  auto ctl = h.start();
  std::vector<std::uint32_t> open, limited;
  for (int k = 0; k < 4; ++k) open.push_back(h.fc.submit("alpha", 4, 8000));
  h.run(*ctl, 20000);
  for (int k = 0; k < 4; ++k) {
    limited.push_back(h.fc.submit("beta", 4, 5000));
    h.fc.time_limit(limited.back(), 10);
  }
  h.run(*ctl, 200000);
  for (auto id : open) {
    const FakeJobStats& s = h.fc.stats(id);
    EXPECT_TRUE(s.completed) << h.fc.describe(id);
    if (s.first_start_ms < t0 + 90000) {
      EXPECT_TRUE(only_on(s.ran_on, {"node3", "node4"})) << h.fc.describe(id);
    }
  }
  for (auto id : limited) EXPECT_TRUE(h.fc.stats(id).completed) << h.fc.describe(id);
  EXPECT_EQ(h.fc.unstartable_pins(), 0);
  for (const auto& why : h.unsound()) ADD_FAILURE() << why;
  EXPECT_EQ(ctl->counters().invalid_decisions, 0u);
}

// The window rule: a reservation holds a node while a job started now could reach it.
TEST(FeasibleNodes, ReservationWindow) {
  NodeInfo n;
  n.reservations.push_back({"maint", 1000, 2000});
  EXPECT_NE(blocking_reservation(n, 0, kNoTimeLimit), nullptr);     // no limit: until it ends
  EXPECT_EQ(blocking_reservation(n, 2000, kNoTimeLimit), nullptr);  // over
  EXPECT_EQ(blocking_reservation(n, 0, 600), nullptr);              // ends 340 s before the window
  EXPECT_NE(blocking_reservation(n, 400, 600), nullptr);            // within the margin
  EXPECT_NE(blocking_reservation(n, 1500, 10), nullptr);            // inside
  std::vector<JobInfo> jobs(2);
  jobs[0].partition = jobs[1].partition = "batch";
  jobs[0].state = jobs[1].state = JobState::Pending;
  jobs[0].time_limit_s = 60;
  jobs[1].time_limit_s = 600;
  EXPECT_EQ(start_lead_s(jobs, "batch"), 600);
  EXPECT_EQ(start_lead_s(jobs, "other"), kNoTimeLimit);  // none pending: unlimited
  jobs[1].time_limit_s = kNoTimeLimit;
  EXPECT_EQ(start_lead_s(jobs, "batch"), kNoTimeLimit);
}

// Each of `refused` cancelled with its reason in the record, never started; `ok` completed.
template <std::size_t N>
void expect_refused(FakeHarness& h, const std::pair<std::uint32_t, std::string> (&refused)[N],
                    std::uint32_t ok) {
  for (const auto& [id, why] : refused) {
    const FakeJobStats& s = h.fc.stats(id);
    EXPECT_TRUE(s.cancelled) << h.fc.describe(id);
    EXPECT_EQ(s.starts, 0) << h.fc.describe(id);
    EXPECT_NE(s.refusal.find(why), std::string::npos) << s.refusal;
  }
  EXPECT_TRUE(h.fc.stats(ok).completed) << h.fc.describe(ok);
  for (const auto& why : h.unsound(false, true)) ADD_FAILURE() << why;
}

// More memory, CPUs or --tmp than any node has, or every node excluded, or a 2-node job with
// one node left: cancelled at once with the reason (x=), never started.
TEST(FeasibleRefused, AJobNoNodeCanHoldIsRefusedWithTheReason) {
  FakeHarness h(two_sizes());
  h.cfg = fake_config("deepshare");
  auto ctl = h.start();
  const auto mem = h.fc.submit("alpha", 1, 1000);
  h.fc.require(mem, {}, 0, 128000);
  const auto cpus = h.fc.submit("alpha", 1, 1000);
  h.fc.require(cpus, {}, 64, 0);
  const auto excluded = h.fc.submit("alpha", 1, 1000);
  h.fc.require(excluded, {"node1", "node2", "node3", "node4"}, 0, 0);
  const auto tmp = h.fc.submit("alpha", 1, 1000);
  h.fc.require(tmp, {}, 0, 0, 1000000);
  const auto ok = h.fc.submit("alpha", 1, 1000);
  h.fc.require(ok, {"node1"}, 4, 8000);
  h.run(*ctl, 5000);
  const std::pair<std::uint32_t, std::string> refused[] = {
      {mem, "has 64000 MiB of memory, the job asks 128000"},
      {cpus, "has 32 CPUs, the job asks 64"},
      {excluded, "node1 excluded (--exclude)"},
      {tmp, "has 400000 MiB of TmpDisk, the job asks --tmp=1000000"}};
  expect_refused(h, refused, ok);
  for (const auto& [id, why] : refused)
    EXPECT_NE(h.fc.stats(id).refusal.find("on too few nodes (0 of 4)"), std::string::npos);
}

// A constraint no node meets (Slurm's BadConstraints: it would never start the job), and one
// in a form DeepShare does not read: cancelled at once with the reason, never started.
TEST(FeasibleRefused, AConstraintNoNodeMeetsOrThatDeepShareCannotReadIsRefused) {
  FakeOptions o = two_sizes();
  o.node_features = {"fast", "", "fast,bigmem", "bigmem"};
  FakeHarness h(o);
  h.cfg = fake_config("deepshare");
  auto ctl = h.start();
  const auto none = h.fc.submit("alpha", 1, 1000);
  h.fc.constrain(none, "slow&bigmem");
  const auto form = h.fc.submit("alpha", 1, 1000);
  h.fc.constrain(form, "[fast|bigmem]");
  const auto ok = h.fc.submit("alpha", 1, 1000);
  h.fc.constrain(ok, "bigmem");
  h.run(*ctl, 5000);
  const std::pair<std::uint32_t, std::string> refused[] = {
      {none, "node1 lacks the features of --constraint=slow&bigmem"},
      {form, "'[fast|bigmem]' is not one of these forms"}};
  expect_refused(h, refused, ok);
}

// The forms DeepShare reads, and the ones it refuses.
TEST(FeasibleNodes, Constraints) {
  std::string why;
  auto c = parse_constraint("fast", why);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->names, (std::vector<std::string>{"fast"}));
  EXPECT_TRUE(c->met_by({"bigmem", "fast"}));
  EXPECT_FALSE(c->met_by({}));
  c = parse_constraint("fast&bigmem", why);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->any);
  EXPECT_TRUE(c->met_by({"bigmem", "fast"}));
  EXPECT_FALSE(c->met_by({"fast"}));
  c = parse_constraint("fast|bigmem|a100", why);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->any);
  EXPECT_TRUE(c->met_by({"a100"}));
  EXPECT_FALSE(c->met_by({"v100"}));
  for (const char* odd : {"a&b|c", "[a|b]", "a*2", "(a&b)", "a,b", "a&", "|a", "a||b", "!a"}) {
    why.clear();
    EXPECT_FALSE(parse_constraint(odd, why)) << odd;
    EXPECT_FALSE(why.empty()) << odd;
  }
  Cluster cl;
  cl.add_nodes(3, 4, 24576, "", TenantId());
  std::vector<NodeLimits> limits(3);
  limits[1].features = {"fast"};
  JobInfo j;
  j.features = "fast";
  Feasibility f = feasible_nodes(j, 4, 1, cl, limits);
  EXPECT_EQ(f.allowed, (std::vector<std::uint8_t>{0, 1, 0}));
  EXPECT_EQ(f.refusal, "");
  j.features = "fast&big";
  f = feasible_nodes(j, 4, 1, cl, limits);
  EXPECT_NE(f.refusal.find("(0 of 3)"), std::string::npos) << f.refusal;
}

// The rule itself: the mask lists the nodes that hold the job; a 2-node job with one such
// node is refused; nodes of unknown size (0) limit nothing.
// What the jobs on a node hold (headroom.hpp): memory counts only when Slurm makes it
// consumable, CPUs likewise; a limit of 0 is unknown (no limit); a job asking none fits.
TEST(FeasibleNodes, HeldShareOfANode) {
  const NodeLimits l{64, 64000, 0, {}};
  const Consumable both{true, true};
  EXPECT_EQ(held_refusal({40000, 1}, l, {24000, 1}, both), "");
  EXPECT_EQ(held_refusal({40000, 1}, l, {24001, 1}, both),
            "its jobs hold 24001 of its 64000 MiB of memory, the job asks 40000");
  EXPECT_EQ(held_refusal({40000, 1}, l, {24001, 1}, {false, true}), "") << "memory not consumable";
  EXPECT_EQ(held_refusal({100, 40}, l, {100, 40}, both),
            "its jobs hold 40 of its 64 CPUs, the job asks 40");
  EXPECT_EQ(held_refusal({100, 40}, l, {100, 40}, {true, false}), "");
  EXPECT_EQ(held_refusal({0, 0}, l, {64000, 64}, both), "") << "asks nothing";
  EXPECT_EQ(held_refusal({40000, 40}, NodeLimits{}, {64000, 64}, both), "") << "unknown limits";
}

TEST(FeasibleNodes, MaskAndRefusal) {
  Cluster c;
  c.add_nodes(3, 4, 24576, "", TenantId());
  const std::vector<NodeLimits> limits = {
      {8, 16000, 0, {}}, {32, 64000, 100000, {}}, {0, 0, 0, {}}};
  JobInfo j;
  Feasibility f = feasible_nodes(j, 1, 1, c, limits);
  EXPECT_TRUE(f.allowed.empty());  // nothing asked: every node
  EXPECT_EQ(f.refusal, "");
  j.mem_per_node_mib = 32000;
  f = feasible_nodes(j, 4, 1, c, limits);
  EXPECT_EQ(f.allowed, (std::vector<std::uint8_t>{0, 1, 1}));
  EXPECT_EQ(f.refusal, "");
  j.excluded_nodes = {"node1", "node2"};  // add_nodes names node0..node2
  f = feasible_nodes(j, 8, 2, c, limits);
  EXPECT_EQ(f.allowed, (std::vector<std::uint8_t>{0, 0, 0}));
  EXPECT_NE(f.refusal.find("(0 of 3)"), std::string::npos) << f.refusal;
  j.excluded_nodes = {"node2"};
  f = feasible_nodes(j, 8, 2, c, limits);  // one node left for two
  EXPECT_EQ(f.allowed, (std::vector<std::uint8_t>{0, 1, 0}));
  EXPECT_NE(f.refusal.find("(1 of 3)"), std::string::npos) << f.refusal;
  // --tmp: node1's TmpDisk (100000 MiB) is too small for 200000; node0's is unknown (0)
  JobInfo t;
  t.tmp_per_node_mib = 200000;
  f = feasible_nodes(t, 4, 1, c, limits);
  EXPECT_EQ(f.allowed, (std::vector<std::uint8_t>{1, 0, 1}));
  EXPECT_EQ(f.refusal, "");
  t.excluded_nodes = {"node0", "node2"};
  f = feasible_nodes(t, 4, 1, c, limits);
  EXPECT_NE(f.refusal.find("node1 has 100000 MiB of TmpDisk, the job asks --tmp=200000"),
            std::string::npos)
      << f.refusal;
}

}  // namespace
}  // namespace ds::slurm

namespace ds::slurm {
namespace {

// A requirement DeepShare does not read (fake_cluster.hpp hidden_requirement: Slurm's reason
// BadConstraints) keeps Slurm from starting a job wherever DeepShare places it. Each start
// is rolled back after KillWait + start_margin_s (7 s here); from the second timeout in a row
// the job waits a backoff that doubles (driver/start_backoff.hpp), so over 10 minutes it
// holds its GPUs idle 8 times, not 84, and the other jobs run meanwhile. Once the
// requirement is lifted it starts after its backoff. Checked to fail: with the backoff
// left out (every timeout rolled back only) the job was rolled back 84 times in the 10 minutes.
TEST(StartBackoff, AStartSlurmRefusesForAReasonDeepShareCannotSeeBacksOff) {
  FakeHarness h;
  h.cfg = fake_config("deepshare");
  auto ctl = h.start();
  const auto blocked = h.fc.submit("alpha", 4, 5000);
  h.fc.hidden_requirement(blocked, {0, 1, 2, 3});
  std::vector<std::uint32_t> others;
  for (int k = 0; k < 20; ++k) {
    others.push_back(h.fc.submit(k % 2 ? "alpha" : "beta", 4, 20000));
    h.run(*ctl, 30000);
  }
  const std::uint64_t rollbacks = ctl->counters().rollbacks;
  EXPECT_GE(rollbacks, 3u);
  EXPECT_LE(rollbacks, 10u);
  EXPECT_EQ(h.fc.stats(blocked).starts, 0) << h.fc.describe(blocked);
  for (auto id : others) EXPECT_TRUE(h.fc.stats(id).completed) << h.fc.describe(id);
  h.fc.hidden_requirement(blocked, {});
  h.run(*ctl, 30 * 60 * 1000 + 60000, 1000);  // at most the longest backoff, then a start
  EXPECT_TRUE(h.fc.stats(blocked).completed) << h.fc.describe(blocked);
  EXPECT_EQ(h.fc.unstartable_pins(), 0);
  for (const auto& why : h.unsound()) ADD_FAILURE() << why;
}

}  // namespace
}  // namespace ds::slurm
