// The policy contract (docs/architecture.md), checked for every entry of policy_registry():
// a new policy gets these tests for free. On random multi-tenant workloads (rapidcheck;
// with and without GPU profiles, with best-effort tenants), each policy must:
//  1. learn jobs online: it is built from a PolicyContext that lists no job;
//  2. handle what online drivers do: a restart mid-run (a fresh policy object sees every
//     pending job arrive and every running job adopted) and jobs cancelled while they
//     wait (withdrawn);
//  3. make only valid decisions (the simulator's ClusterState checks each one: free GPUs
//     or fitting memory, one start per pending job, preempt only running jobs), so that
//     every record adds up (a job at full speed ends at submit + queue + work + lost work
//     + restart overhead);
//  4. let no job starve: every job ends (completed, rejected with a reason, or cancelled),
//     and no job that fits the cluster waits through an idle stretch of the whole cluster
//     longer than kIdleTolerance;
//  5. be deterministic: the same inputs give the same record;
//  6. give every pending job a typed waiting reason from the first cycle that saw it.
// DS_CONTRACT_DUMP=1 prints the (shrunk) scenario of a failure.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "model/testing.hpp"
#include "registered_policies.hpp"
#include "registry/registry.hpp"
#include "sim/simulator.hpp"

namespace ds {
namespace {

// Rounds: Tiresias decides every 60 s; a policy may wait for its next wake-up.
constexpr Time kIdleTolerance = 10 * kMinute;

struct Scenario {
  Workload workload;
  SimConfig config;
};

// 1..3 tenants with 1..3 8-GPU nodes each, sometimes a best-effort tenant without nodes
// or quota, jobs of 1..24 GPUs (some larger than a tenant's nodes), GPU profiles on
// about half the workloads (so that sharing policies share), checkpoints at 0, 5 or 30
// minutes; a restart at one or two random times and ~10 % of jobs cancelled.
Scenario random_scenario() {
  Scenario sc;
  const int owners = *rc::gen::inRange(1, 4);
  Workload& w = sc.workload;
  w = testing::make_workload(owners, *rc::gen::inRange(1, 4), 8);
  if (*rc::gen::arbitrary<bool>()) {
    Tenant be;
    be.id = TenantId(static_cast<std::uint32_t>(w.tenants.size()));
    be.name = "best-effort";
    be.cls = TenantClass::BestEffort;
    w.tenants.push_back(be);
  }
  for (auto& t : w.tenants) t.checkpoint_interval = seconds(*rc::gen::element(0, 300, 1800));
  const bool profiles = *rc::gen::arbitrary<bool>();
  const int tenants = static_cast<int>(w.tenants.size());
  const int jobs = *rc::gen::inRange(1, 60);
  for (int i = 0; i < jobs; ++i) {
    const int gpus = *rc::gen::element(1, 1, 1, 2, 4, 8, 8, 12, 16, 24);
    testing::add_job(w, *rc::gen::inRange(0, tenants), gpus, *rc::gen::inRange(0, 3000),
                     *rc::gen::inRange(1, 2000), profiles ? *rc::gen::inRange(5, 100) : -1,
                     profiles ? *rc::gen::inRange(500, 16000) : 0);
  }
  w.finalize();
  const Time last = w.jobs.back().submit;
  const int restarts = *rc::gen::inRange(0, 3);
  for (int k = 0; k < restarts; ++k)
    sc.config.restart_policy_at.push_back(seconds(*rc::gen::inRange(1, 3000)) + last / 2);
  for (const auto& j : w.jobs)
    if (*rc::gen::inRange(0, 10) == 0)
      sc.config.cancellations.push_back({j.id, j.submit + seconds(*rc::gen::inRange(0, 1000))});
  return sc;
}

// With DS_CONTRACT_DUMP set, a failing scenario is printed (rapidcheck shrinks it first).
void dump(const Scenario& sc, const RunRecord* r) {
  if (!std::getenv("DS_CONTRACT_DUMP")) return;
  const Workload& w = sc.workload;
  for (const auto& t : w.tenants)
    std::fprintf(stderr, "tenant %s quota %d checkpoint %llds\n", t.name.c_str(), t.quota_gpus,
                 static_cast<long long>(t.checkpoint_interval / kSecond));
  for (std::size_t k = 0; k < w.jobs.size(); ++k) {
    const JobSpec& j = w.jobs[k];
    std::fprintf(stderr, "job %zu tenant %u gpus %d submit %llds work %llds util %g mem %g", k,
                 j.tenant.index(), j.gpus, static_cast<long long>(j.submit / kSecond),
                 static_cast<long long>(w.truth[k].work / kSecond), j.gpu_util, j.gpu_memory_mib);
    if (r)
      std::fprintf(stderr, " -> start %llds end %llds waited for %s",
                   static_cast<long long>(r->jobs[k].first_start / kSecond),
                   static_cast<long long>(r->jobs[k].end / kSecond),
                   to_string(r->jobs[k].wait_reason));
    std::fprintf(stderr, "\n");
  }
  for (const auto& c : sc.config.cancellations)
    std::fprintf(stderr, "cancel job %u at %llds\n", c.job.index(),
                 static_cast<long long>(c.at / kSecond));
  for (Time t : sc.config.restart_policy_at)
    std::fprintf(stderr, "restart at %llds\n", static_cast<long long>(t / kSecond));
}

// What the contract checks on each snapshot, across restarts of the policy object.
struct Observer {
  const Workload* w = nullptr;
  std::set<JobId> seen;  // jobs some snapshot showed pending after their first cycle
  std::size_t cycles = 0;

  void check(const ClusterSnapshot& s) {
    ++cycles;
    RC_ASSERT(s.jobs.size() == w->jobs.size());
    std::set<JobId> fresh(s.arrived.begin(), s.arrived.end());
    fresh.insert(s.requeued.begin(), s.requeued.end());
    for (JobId id : s.pending) {
      if (fresh.count(id)) continue;
      // 6. It was pending after an earlier cycle: that cycle stated why.
      RC_ASSERT(s.runtime[id.index()].wait != WaitReason::None);
    }
    for (const Node& n : w->cluster.nodes)
      for (int k = 0; k < n.gpus; ++k) {
        const GpuState& g = s.gpus[static_cast<std::size_t>(n.first_gpu + k)];
        RC_ASSERT(g.milli_used >= 0);
        if (g.jobs >= 2) RC_ASSERT(g.memory_used_mib <= n.gpu_memory_mib);  // shared: fits
      }
    for (std::size_t n = 0; n < s.node_free_gpus.size(); ++n)
      RC_ASSERT(s.node_free_gpus[n] >= 0 && s.node_free_gpus[n] <= w->cluster.nodes[n].gpus);
  }
};

class Checked final : public Policy {
 public:
  Checked(std::unique_ptr<Policy> inner, Observer& obs) : inner_(std::move(inner)), obs_(obs) {}
  Decisions decide(const ClusterSnapshot& s) override {
    obs_.check(s);
    Decisions d = inner_->decide(s);
    for (const auto& n : d.waiting) RC_ASSERT(n.reason != WaitReason::None);
    return d;
  }
  void telemetry(std::span<TenantTelemetry> t) const override { inner_->telemetry(t); }
  void summarize(std::map<std::string, double>& out) const override { inner_->summarize(out); }

 private:
  std::unique_ptr<Policy> inner_;
  Observer& obs_;
};

RunRecord run(const std::string& name, const Scenario& sc, Observer* obs) {
  const Workload& w = sc.workload;
  std::vector<Time> oracle;
  for (const auto& t : w.truth) oracle.push_back(t.work);
  const PolicyOptions options;
  PolicyFactory make = [&]() -> std::unique_ptr<Policy> {
    auto p = make_policy(name, PolicyContext{w.cluster, w.tenants, options, oracle});
    if (!obs) return p;
    return std::make_unique<Checked>(std::move(p), *obs);
  };
  return simulate(w, make, sc.config);
}

// 4. Idle stretches of the whole cluster (from the record's change points).
void check_no_idle_starvation(const Scenario& sc, const RunRecord& r) {
  const Workload& w = sc.workload;
  std::vector<std::pair<Time, Time>> idle;  // [from, to) with no busy GPU
  for (std::size_t k = 0; k < r.steps.size(); ++k) {
    if (r.steps[k].busy_gpus != 0) continue;
    const Time to = k + 1 < r.steps.size() ? r.steps[k + 1].t : r.end;
    idle.emplace_back(r.steps[k].t, to);
  }
  std::set<JobId> cancelled;
  for (const auto& c : sc.config.cancellations) cancelled.insert(c.job);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobOutcome& o = r.jobs[i];
    if (o.status != JobStatus::Done || cancelled.count(w.jobs[i].id)) continue;
    for (const auto& [from, to] : idle) {
      const Time a = std::max(from, w.jobs[i].submit), b = std::min(to, o.first_start);
      if (b - a > kIdleTolerance) dump(sc, &r);
      RC_ASSERT(b - a <= kIdleTolerance);
    }
  }
}

void check_contract(const std::string& name) {
  const Scenario sc = random_scenario();
  const Workload& w = sc.workload;
  Observer obs;
  obs.w = &w;
  RunRecord r;
  try {
    r = run(name, sc, &obs);  // 3: a bad decision throws DecisionError
  } catch (...) {
    dump(sc, nullptr);
    throw;
  }
  RC_ASSERT(obs.cycles > 0);
  // 4. Every job ended.
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobOutcome& o = r.jobs[i];
    RC_ASSERT(o.status == JobStatus::Done || o.status == JobStatus::Rejected);
    if (o.status == JobStatus::Rejected) RC_ASSERT(!o.reject_reason.empty());
    if (o.status != JobStatus::Done) continue;
    RC_ASSERT(o.first_start >= w.jobs[i].submit);
    // Exact accounting at full speed: waiting + work + work redone + restart overheads.
    if (o.max_slowdown == 1.0)
      RC_ASSERT(o.end == w.jobs[i].submit + o.queue + w.truth[i].work + o.lost_work + o.overhead);
  }
  check_no_idle_starvation(sc, r);
  // 6. No queueing time without a stated reason.
  RC_ASSERT(r.wait_ms_by_reason[static_cast<std::size_t>(WaitReason::None)] == 0.0);
  // 5. Determinism.
  const RunRecord again = run(name, sc, nullptr);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    RC_ASSERT(r.jobs[i].status == again.jobs[i].status);
    RC_ASSERT(r.jobs[i].first_start == again.jobs[i].first_start);
    RC_ASSERT(r.jobs[i].end == again.jobs[i].end);
    RC_ASSERT(r.jobs[i].wait_reason == again.jobs[i].wait_reason);
  }
  RC_ASSERT(r.steps.size() == again.steps.size());
}

class Contract : public ::testing::TestWithParam<std::string> {};

TEST_P(Contract, HoldsOnRandomWorkloads) {
  const std::string name = GetParam();
  EXPECT_TRUE(rc::check("policy contract: " + name, [&] { check_contract(name); }));
}

INSTANTIATE_TEST_SUITE_P(EveryRegisteredPolicy, Contract,
                         ::testing::ValuesIn(testing::registered_policies()),
                         testing::policy_test_name);

}  // namespace
}  // namespace ds
