// A third engine in a page: the worked example of docs/architecture.md ("How an engine plugs
// in"). ToyEngine is an in-process cluster that knows nothing of Slurm: a job waits until the
// driver binds it, runs once its GPUs are free, ends after its run time, and an evicted job
// holds its GPUs for a grace period, then waits again. It implements only the driver's ports
// (ClusterSource::observe, Actuator); everything else - the model, the job book, the
// reconciler's rules, apply(), compaction - is driver::Core, unchanged. The tests run real
// policies on it, restart the core mid-run, and lose replies.
#include "driver/core.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "driver/clock.hpp"
#include "registry/registry.hpp"

namespace ds::driver {
namespace {

class ToyEngine final : public ClusterSource, public Actuator {
 public:
  struct Job {
    EngineJob seen;   // what observe() shows
    Time run_ms = 0;  // work left
    Time stop_at = 0;
    bool bound = false;  // the driver handed a start over
    int starts = 0;
    std::string rejected;  // why the driver refused it
  };

  void attach(Core& core) { core_ = &core; }

  std::string submit(int tenant, int gpus, Time run_ms) {
    Job j;
    j.seen.key = j.seen.ref = "toy-" + std::to_string(jobs_.size());
    j.seen.state = "waiting";
    j.seen.user = "u" + std::to_string(tenant);
    j.seen.spec.name = j.seen.ref;
    j.seen.spec.tenant = TenantId(static_cast<std::uint32_t>(tenant));
    j.seen.spec.gpus = gpus;
    j.seen.spec.submit = now_;
    j.run_ms = run_ms;
    jobs_[j.seen.key] = j;
    return j.seen.key;
  }

  // The engine's own transitions: bound starts run once their GPUs are free, runs end,
  // evicted jobs wait again after their grace period.
  void advance(Time ms) {
    now_ += ms;
    for (auto& [key, j] : jobs_) {
      EngineJob& e = j.seen;
      if (e.phase == Phase::Running && (j.run_ms -= ms) <= 0) e.phase = Phase::Ended;
      if (e.phase == Phase::Stopping && now_ >= j.stop_at) {
        e.phase = Phase::Waiting;
        e.placement.clear();
        e.decision.reset();
        j.bound = false;
        ++e.restarts;
      }
    }
    for (auto& [key, j] : jobs_)
      if (j.seen.phase == Phase::Waiting && j.bound && gpus_free(j.seen.decision->placement, key)) {
        j.seen.phase = Phase::Running;
        j.seen.placement = j.seen.decision->placement;
        j.seen.run_start = now_;
        ++j.starts;
      }
  }

  // --- ClusterSource ---
  std::optional<Observation> observe() override {
    Observation o;
    for (const auto& [key, j] : jobs_) {
      o.jobs.push_back(j.seen);
      o.jobs.back().handed_over = j.bound;
    }
    return o;
  }
  std::optional<std::vector<EngineNode>> nodes() override { return std::vector<EngineNode>{}; }
  [[nodiscard]] const std::string& last_error() const override { return error_; }

  // --- Actuator ---
  WaitReason eligible(JobId, const EngineJob&) override { return WaitReason::None; }
  void decided(const StartJob& s, Time, bool) override {
    job(s.job).seen.decision =
        EngineDecision{s.borrowed, s.shared, s.placement, now_};  // an annotation
  }
  Handover hand_over(JobId id) override {
    if (lose_reply_ && rng_() % 4 == 0) {  // bound, but the reply is lost
      job(id).bound = true;
      return Handover::Failed;
    }
    job(id).bound = true;
    return Handover::Sent;
  }
  void take_back(JobId id) override {
    Job& j = job(id);
    if (j.seen.phase == Phase::Waiting) {
      j.bound = false;
      j.seen.decision.reset();
    }
  }
  Preemption preempt(JobId id, const EngineJob&) override {
    Job& j = job(id);
    j.seen.phase = Phase::Stopping;  // evicted: holds its GPUs for the grace period
    j.stop_at = now_ + 500;
    j.bound = false;
    return Preemption::Sent;
  }
  void repeat_preempt(JobId) override {}
  bool reject(JobId id, const std::string& why) override {
    job(id).seen.phase = Phase::Ended;
    job(id).rejected = why;
    return true;
  }

  [[nodiscard]] const std::map<std::string, Job>& jobs() const { return jobs_; }
  [[nodiscard]] int double_bookings() const { return double_bookings_; }
  void lose_replies() { lose_reply_ = true; }
  [[nodiscard]] Time now() const { return now_; }

 private:
  Job& job(JobId id) { return jobs_.at(core_->book()[id].key); }
  bool gpus_free(const Placement& p, const std::string& self) {
    for (const auto& [key, j] : jobs_) {
      if (key == self || j.seen.phase == Phase::Waiting || j.seen.phase == Phase::Ended) continue;
      for (const auto& a : j.seen.placement)
        for (const auto& b : p)
          if (a.node == b.node && (a.gpu_mask & b.gpu_mask)) {
            // A victim being evicted may hold them a while; a job that runs on means the
            // driver bound two jobs to the same GPUs.
            if (j.seen.phase == Phase::Running) ++double_bookings_;
            return false;
          }
    }
    return true;
  }

  Core* core_ = nullptr;
  std::map<std::string, Job> jobs_;
  Time now_ = 1'000'000;
  std::string error_;
  int double_bookings_ = 0;
  bool lose_reply_ = false;
  std::mt19937 rng_{7};
};

// What a policy learns from the snapshots' deltas (policy contract 2) must match the
// snapshot: every job it was told arrived or was adopted, and not told left, is pending or
// running.
class Tracking final : public Policy {
 public:
  Tracking(std::unique_ptr<Policy> p, int& mismatches)
      : p_(std::move(p)), mismatches_(mismatches) {}
  Decisions decide(const ClusterSnapshot& s) override {
    for (JobId id : s.arrived) active_.insert(id);
    for (JobId id : s.adopted) active_.insert(id);
    for (const auto& f : s.finished) active_.erase(f.job);
    for (JobId id : s.withdrawn) active_.erase(id);
    for (JobId id : active_) {
      const JobStatus st = s.runtime[id.index()].status;
      mismatches_ += st != JobStatus::Pending && st != JobStatus::Running;
    }
    return p_->decide(s);
  }
  void telemetry(std::span<TenantTelemetry> t) const override { p_->telemetry(t); }

 private:
  std::unique_ptr<Policy> p_;
  int& mismatches_;
  std::set<JobId> active_;
};

struct Harness {
  // Two tenants owning two 4-GPU nodes each (a virtual cluster each, as on Venus).
  Harness() {
    for (int t = 0; t < 2; ++t) {
      Tenant x;
      x.id = TenantId(static_cast<std::uint32_t>(t));
      x.name = "t" + std::to_string(t);
      x.quota_gpus = 8;
      tenants.push_back(x);
      cluster.add_nodes(2, 4, 24 * 1024, "", x.id);
    }
  }
  std::unique_ptr<Core> start(const std::string& policy) {
    auto core = std::make_unique<Core>(cluster, tenants, engine, log, journal, Timing{5000, 1000});
    engine.attach(*core);
    const PolicyContext ctx{cluster, tenants, options};
    core->set_policy(std::make_unique<Tracking>(make_policy(policy, ctx), mismatches), false);
    return core;
  }
  // One controller cycle, as a controller's loop runs it.
  void cycle(Core& core) {
    engine.advance(100);
    // A policy with rounds (Tiresias) sees its round's instant (driver/clock.hpp).
    now = cycle_time(now, engine.now(), core.wake_at_ref());
    core.set_time(now, engine.now());
    obs = *engine.observe();
    core.fold(obs);
    const Decisions d = core.decide();
    core.apply(d);
    core.compact();
  }

  Cluster cluster;
  std::vector<Tenant> tenants;
  PolicyOptions options;
  ToyEngine engine;
  Journal journal;
  std::FILE* null = std::fopen("/dev/null", "w");
  Log log{null, true};
  Observation obs;
  Time now = 0;
  int mismatches = 0;  // Tracking
};

void expect_all_ran_soundly(const Harness& h) {
  const ToyEngine& e = h.engine;
  EXPECT_EQ(h.mismatches, 0) << "a job left without the policy being told";
  for (const auto& [key, j] : e.jobs()) {
    EXPECT_EQ(j.seen.phase, Phase::Ended) << key;
    // A job the policy rejects never runs; one that runs starts once per run.
    EXPECT_EQ(j.starts, j.rejected.empty() ? static_cast<int>(j.seen.restarts) + 1 : 0)
        << key << (j.rejected.empty() ? " started twice" : " rejected: " + j.rejected);
  }
  EXPECT_EQ(e.double_bookings(), 0);
}

class ToyEngineRuns : public ::testing::TestWithParam<std::string> {};

// Every non-oracle policy on the toy engine: borrowing, reclaim by eviction, completion.
TEST_P(ToyEngineRuns, EveryJobRunsOnceEachRun) {
  Harness h;
  auto core = h.start(GetParam());
  for (int i = 0; i < 8; ++i) h.engine.submit(1, 2, 3000);  // t1 fills the cluster
  for (int k = 0; k < 20; ++k) h.cycle(*core);
  for (int i = 0; i < 4; ++i) h.engine.submit(0, 2, 2000);  // t0 comes back for its node
  for (int k = 0; k < 3000; ++k) h.cycle(*core);
  expect_all_ran_soundly(h);
  EXPECT_GT(core->counters().starts, 9u);
  EXPECT_TRUE(core->reconciler().drift().empty());
}

// A restarted core (a new controller process) rebuilds everything from the engine: running
// jobs are adopted with the flags of their recorded decision, none is started twice.
TEST_P(ToyEngineRuns, RestartsAndLostRepliesLoseNothing) {
  Harness h;
  h.engine.lose_replies();
  auto core = h.start(GetParam());
  std::mt19937 rng(3);
  for (int wave = 0; wave < 5; ++wave) {
    for (int i = 0; i < 4; ++i)
      h.engine.submit(static_cast<int>(rng() % 2), 1 + static_cast<int>(rng() % 4), 1500);
    for (int k = 0; k < 1 + static_cast<int>(rng() % 15); ++k) h.cycle(*core);
    core = h.start(GetParam());  // kill -9 and restart
  }
  for (int k = 0; k < 3000; ++k) h.cycle(*core);
  expect_all_ran_soundly(h);
}

std::vector<std::string> online_policies() {
  std::vector<std::string> out;
  for (const auto& p : policy_registry())
    if (!p.oracle) out.push_back(p.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(NonOraclePolicies, ToyEngineRuns, ::testing::ValuesIn(online_policies()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace ds::driver
