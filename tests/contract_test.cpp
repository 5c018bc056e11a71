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
//  6. give every pending job a typed waiting reason from the first cycle that saw it;
//  7. honour GPU models (issue #28): on clusters of 2-3 models, with jobs that name a model,
//     alternatives, a model no node has or none, no job ever runs (alone or shared) on a GPU
//     of another model, a job of a model no node has is rejected, a job rejected for its model
//     alone (the same job without one runs) is told so in its reason, and (by 4) a job that
//     fits starts when the cluster is idle;
//  8. honour node masks (issue #24: Slurm's node lists, exclusions, memory, CPUs): with
//     random masks, no job ever runs on a node its mask excludes, a job whose allowed nodes
//     hold no GPU is rejected, one rejected for its mask alone is told so ("node mask").
// DS_CONTRACT_DUMP=1 prints the (shrunk) scenario of a failure.
// The same contract holds online: every non-oracle policy also runs as the Slurm controller
// runs it, on the in-process fake Slurm, through restarts, lost replies and a leader failover
// (ContractOnFakeCluster below).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include <unistd.h>

#include <filesystem>
#include <limits>
#include <memory>
#include <random>

#include "driver/lease.hpp"
#include "model/testing.hpp"
#include "registered_policies.hpp"
#include "registry/registry.hpp"
#include "sim/simulator.hpp"
#include "slurm/fake_harness.hpp"

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
// With `models` (7): the nodes of 2 or 3 GPU models (each model its memory), and jobs that
// name a model, alternatives, a model no node has, or none.
Scenario random_scenario(bool models = false) {
  static const char* const kModels[] = {"A100", "T4", "V100"};
  static const int kGib[] = {80, 16, 32};
  Scenario sc;
  const int owners = *rc::gen::inRange(1, 4);
  Workload& w = sc.workload;
  w = testing::make_workload(owners, *rc::gen::inRange(1, 4), 8);
  const int kinds = models ? *rc::gen::inRange(2, 4) : 0;
  for (auto& n : w.cluster.nodes) {
    if (!models) break;
    const int m = *rc::gen::inRange(0, kinds);
    n.gpu_type = kModels[m];
    n.gpu_memory_mib = std::int64_t{kGib[m]} * 1024;
  }
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
    if (models)
      w.jobs.back().gpu_type = *rc::gen::element<std::string>("", "", "A100", "T4", "V100",
                                                              "A100|T4", "T4|V100", "H100");
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
  for (const auto& n : w.cluster.nodes)
    if (!n.gpu_type.empty())
      std::fprintf(stderr, "node %u owner %u model %s\n", n.id.index(), n.owner.index(),
                   n.gpu_type.c_str());
  for (std::size_t k = 0; k < w.jobs.size(); ++k) {
    const JobSpec& j = w.jobs[k];
    std::fprintf(stderr, "job %zu tenant %u gpus %d submit %llds work %llds util %g mem %g%s%s", k,
                 j.tenant.index(), j.gpus, static_cast<long long>(j.submit / kSecond),
                 static_cast<long long>(w.truth[k].work / kSecond), j.gpu_util, j.gpu_memory_mib,
                 j.gpu_type.empty() ? "" : " model ", j.gpu_type.c_str());
    if (!j.allowed_nodes.empty()) {
      std::fprintf(stderr, " nodes");
      for (std::size_t n = 0; n < j.allowed_nodes.size(); ++n)
        if (j.allowed_nodes[n]) std::fprintf(stderr, " %zu", n);
    }
    if (r)
      std::fprintf(stderr, " -> start %llds end %llds waited for %s",
                   static_cast<long long>(r->jobs[k].first_start / kSecond),
                   static_cast<long long>(r->jobs[k].end / kSecond),
                   to_string(r->jobs[k].wait_reason));
    if (r && !r->jobs[k].reject_reason.empty())
      std::fprintf(stderr, " rejected: %s", r->jobs[k].reject_reason.c_str());
    std::fprintf(stderr, "\n");
  }
  for (const auto& c : sc.config.cancellations)
    std::fprintf(stderr, "cancel job %u at %llds\n", c.job.index(),
                 static_cast<long long>(c.at / kSecond));
  for (Time t : sc.config.restart_policy_at)
    std::fprintf(stderr, "restart at %llds\n", static_cast<long long>(t / kSecond));
}

// 8. Whether the job's node mask allows node index `n` (no mask: any), apart from the
// product's accepts_node.
bool mask_allows(const JobSpec& j, std::size_t n) {
  return j.allowed_nodes.empty() || (n < j.allowed_nodes.size() && j.allowed_nodes[n] != 0);
}

// 7. Whether a GPU of model `node` serves a job naming `want` ("" any, "A|B" one of them):
// written apart from the product's accepts_gpu_model, so that the check is independent.
bool serves(const std::string& want, const std::string& node) {
  if (want.empty()) return true;
  std::size_t at = 0;
  for (;;) {
    const std::size_t bar = want.find('|', at);
    if (want.compare(at, bar == std::string::npos ? std::string::npos : bar - at, node) == 0)
      return true;
    if (bar == std::string::npos) return false;
    at = bar + 1;
  }
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
    for (JobId id : s.running)  // 7. only on GPUs of an accepted model
      for (const auto& a : s.runtime[id.index()].placement)
        RC_ASSERT(serves(w->jobs[id.index()].gpu_type, w->cluster.nodes[a.node.index()].gpu_type));
    for (JobId id : s.running)  // 8. only on nodes its node mask allows
      for (const auto& a : s.runtime[id.index()].placement)
        RC_ASSERT(mask_allows(w->jobs[id.index()], a.node.index()));
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

// GPUs on the nodes the job's node mask allows (issue #24).
int mask_gpus(const Workload& w, const JobSpec& j) {
  int gpus = 0;
  for (const auto& n : w.cluster.nodes)
    if (mask_allows(j, n.id.index())) gpus += n.gpus;
  return gpus;
}

// 8. Node masks (JobSpec::allowed_nodes, issue #24: Slurm's node lists, exclusions, memory
// and CPUs): random masks on random workloads; no start outside its mask (the observer), a
// job no allowed node set can hold is rejected with the reason, the others all run.
void check_masks(const std::string& name) {
  Scenario sc = random_scenario();
  Workload& w = sc.workload;
  const std::size_t nodes = w.cluster.nodes.size();
  for (auto& j : w.jobs) {
    if (*rc::gen::inRange(0, 3) == 0) continue;  // a third name no mask
    j.allowed_nodes.assign(nodes, 0);
    for (std::size_t n = 0; n < nodes; ++n) j.allowed_nodes[n] = *rc::gen::inRange(0, 3) != 0;
  }
  Observer obs;
  obs.w = &w;
  RunRecord r;
  try {
    r = run(name, sc, &obs);  // a start outside the mask is also a DecisionError
  } catch (...) {
    dump(sc, nullptr);
    throw;
  }
  Scenario open = sc;  // the same jobs with no mask
  for (auto& j : open.workload.jobs) j.allowed_nodes.clear();
  const RunRecord plain = run(name, open, nullptr);
  std::set<JobId> cancelled;
  for (const auto& c : sc.config.cancellations) cancelled.insert(c.job);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobSpec& j = w.jobs[i];
    const JobOutcome& o = r.jobs[i];
    RC_ASSERT(o.status == JobStatus::Done || o.status == JobStatus::Rejected);
    if (mask_gpus(w, j) == 0) RC_ASSERT(o.status == JobStatus::Rejected);
    if (o.status != JobStatus::Rejected || cancelled.count(j.id)) continue;
    RC_ASSERT(!o.reject_reason.empty());
    if (plain.jobs[i].status == JobStatus::Rejected) continue;
    if (o.reject_reason.find("node mask") == std::string::npos) dump(sc, &r);
    RC_ASSERT(o.reject_reason.find("node mask") != std::string::npos);
  }
  check_no_idle_starvation(sc, r);
}

// GPUs of the job's model(s) in the cluster.
int model_gpus(const Workload& w, const JobSpec& j) {
  int gpus = 0;
  for (const auto& n : w.cluster.nodes)
    if (serves(j.gpu_type, n.gpu_type)) gpus += n.gpus;
  return gpus;
}

void check_models(const std::string& name) {
  const Scenario sc = random_scenario(true);
  const Workload& w = sc.workload;
  Observer obs;
  obs.w = &w;
  RunRecord r;
  try {
    r = run(name, sc, &obs);  // a start on another model is also a DecisionError
  } catch (...) {
    dump(sc, nullptr);
    throw;
  }
  Scenario untyped = sc;  // the same jobs naming no model
  for (auto& j : untyped.workload.jobs) j.gpu_type.clear();
  const RunRecord plain = run(name, untyped, nullptr);
  std::set<JobId> cancelled;
  for (const auto& c : sc.config.cancellations) cancelled.insert(c.job);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobSpec& j = w.jobs[i];
    const JobOutcome& o = r.jobs[i];
    if (o.status != JobStatus::Done && o.status != JobStatus::Rejected) dump(sc, &r);
    RC_ASSERT(o.status == JobStatus::Done || o.status == JobStatus::Rejected);
    if (model_gpus(w, j) == 0) RC_ASSERT(o.status == JobStatus::Rejected);
    if (o.status != JobStatus::Rejected || cancelled.count(j.id)) continue;
    RC_ASSERT(!o.reject_reason.empty());
    // Rejected for its model only (the same job without one runs): the reason says so (a
    // policy's partition may hold fewer nodes than the tenant owns, e.g. Lucid's profiler's).
    if (plain.jobs[i].status == JobStatus::Rejected) continue;
    if (o.reject_reason.find("of model " + j.gpu_type) == std::string::npos) dump(sc, &r);
    RC_ASSERT(o.reject_reason.find("of model " + j.gpu_type) != std::string::npos);
  }
  check_no_idle_starvation(sc, r);
  const RunRecord again = run(name, sc, nullptr);
  for (std::size_t i = 0; i < w.jobs.size(); ++i)
    RC_ASSERT(r.jobs[i].first_start == again.jobs[i].first_start);
}

// 7, one case by hand: an A100 job waits for the busy A100 node while the T4 node is idle,
// and then starts on the A100 node (the observer checks every snapshot's placements).
void check_waits_for_its_model(const std::string& name) {
  Scenario sc;
  Workload& w = sc.workload;
  w = testing::make_workload(1, 2, 8);
  w.cluster.nodes[0].gpu_type = "T4";
  w.cluster.nodes[1].gpu_type = "A100";
  testing::add_job(w, 0, 8, 0, 100);  // takes the whole A100 node
  testing::add_job(w, 0, 4, 1, 10);   // must wait for it, though the T4 node is idle
  testing::add_job(w, 0, 2, 2, 10);   // any model
  w.jobs[0].gpu_type = "A100";
  w.jobs[1].gpu_type = "A100|H100";
  w.finalize();
  Observer obs;
  obs.w = &w;
  const RunRecord r = run(name, sc, &obs);
  for (const JobOutcome& o : r.jobs) EXPECT_EQ(o.status, JobStatus::Done) << o.reject_reason;
  EXPECT_EQ(r.jobs[0].first_start, 0);
  EXPECT_GE(r.jobs[1].first_start, r.jobs[0].end);
}

class Contract : public ::testing::TestWithParam<std::string> {};

TEST_P(Contract, HoldsOnRandomWorkloads) {
  const std::string name = GetParam();
  EXPECT_TRUE(rc::check("policy contract: " + name, [&] { check_contract(name); }));
}

TEST_P(Contract, HonoursGpuModels) {
  const std::string name = GetParam();
  EXPECT_TRUE(rc::check("GPU models: " + name, [&] { check_models(name); }));
}

TEST_P(Contract, HonoursNodeMasks) {
  const std::string name = GetParam();
  EXPECT_TRUE(rc::check("node masks: " + name, [&] { check_masks(name); }));
}

TEST_P(Contract, ATypedJobWaitsForItsModel) {
  const std::string name = GetParam();
  EXPECT_NO_THROW(check_waits_for_its_model(name));
}

INSTANTIATE_TEST_SUITE_P(EveryRegisteredPolicy, Contract,
                         ::testing::ValuesIn(testing::registered_policies()),
                         testing::policy_test_name);

// --- online: the fake cluster ----------------------------------------------------------
// Every non-oracle policy as the Slurm controller runs it on the in-process fake Slurm
// (src/slurm/fake_harness.hpp), through what an online driver meets: kill -9 and restart of
// the controller at random points, failed RPCs and lost replies, a leader failover to a
// standby. The contract online:
//  3. no decision the cluster state refuses (deepshare_decisions_invalid_total stays 0);
//  4. every job ends (completed, or cancelled by DeepShare with its reason), none is started
//     without DeepShare's pin for that run or on other GPUs, no GRES request is rewritten,
//     no two jobs are pinned to the same GPUs (the fake's checks);
//  6. a job pending through a whole cycle has a typed reason;
// and after every cycle the model runs what Slurm runs, where it runs it (the drift check).
class OnlineContract {
 public:
  OnlineContract(const std::string& policy, std::uint64_t seed) : h_(options(seed)), rng_(seed) {
    h_.cfg = slurm::fake_config(policy);
    dir_ =
        (std::filesystem::temp_directory_path() /
         ("ds-contract-" + policy + "-" + std::to_string(seed) + "-" + std::to_string(::getpid())))
            .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~OnlineContract() { std::filesystem::remove_all(dir_); }

  void run() {
    take_lease();
    ctl_ = h_.start(lease_.get());
    for (int wave = 0; wave < 6; ++wave) {
      h_.submit_wave(rng_, 8);
      const int cycles = 20 + static_cast<int>(rng_() % 40);
      for (int k = 0; k < cycles; ++k) cycle();
      if (wave == 1 || wave == 4) restart();  // kill -9, the same host restarts it
      if (wave == 2) failover();              // the leader dies, the standby takes over
    }
    slurm::FakeOptions& o = h_.fc.options();
    o.p_read_fail = o.p_write_fail = o.p_reply_lost = 0;
    // Drain: every job ends within 20 minutes (a policy with 60 s rounds, Tiresias, starts a
    // few jobs per round).
    for (int k = 0; k < 12000 && !all_ended(); ++k) cycle();
    invalid_ += ctl_->counters().invalid_decisions;
  }

  std::vector<std::string> violations() const {
    std::vector<std::string> out = h_.unsound(false, true);
    // Where the model has the jobs Slurm still lists (the lost ones, for the report).
    const driver::Core& core = ctl_->core();
    for (std::uint32_t id = 1; id <= h_.fc.submitted(); ++id) {
      if (h_.fc.stats(id).completed || h_.fc.stats(id).cancelled) continue;
      const auto job = core.book().find(std::to_string(id));
      out.push_back("  job " + std::to_string(id) + " in the model: " +
                    (job ? std::string("status ") +
                               std::to_string(static_cast<int>(core.state().runtime(*job).status)) +
                               ", waits for " + to_string(core.state().runtime(*job).wait)
                         : std::string("unknown")));
    }
    if (invalid_ != 0) out.push_back(std::to_string(invalid_) + " decisions the state refused");
    out.insert(out.end(), drift_.begin(), drift_.end());
    out.insert(out.end(), unreasoned_.begin(), unreasoned_.end());
    return out;
  }

 private:
  static slurm::FakeOptions options(std::uint64_t seed) {
    slurm::FakeOptions o;
    o.p_read_fail = 0.05;
    o.p_write_fail = 0.05;
    o.p_reply_lost = 0.1;
    o.seed = seed;
    return o;
  }
  bool all_ended() const {
    for (std::uint32_t id = 1; id <= h_.fc.submitted(); ++id)
      if (!h_.fc.stats(id).completed && !h_.fc.stats(id).cancelled) return false;
    return true;
  }
  void take_lease() {
    lease_ = std::make_unique<driver::Lease>(dir_);
    ASSERT_TRUE(lease_->try_acquire());
  }
  void restart() {
    invalid_ += ctl_->counters().invalid_decisions;
    ctl_.reset();
    ctl_ = h_.start(lease_.get());
  }
  void failover() {
    invalid_ += ctl_->counters().invalid_decisions;
    ctl_.reset();
    lease_.reset();  // the kernel drops the dead leader's lock
    take_lease();
    ctl_ = h_.start(lease_.get());
  }
  void cycle() {
    h_.fc.advance(100);
    if (!ctl_->step()) return;
    // Each kind is checked after every cycle; the first ten of a kind are enough to report.
    for (const auto& d : ctl_->core().reconciler().drift())
      if (drift_.size() < 10) drift_.push_back("drift: " + d);
    const ClusterState& state = ctl_->core().state();
    for (JobId id : state.pending()) {
      const JobRuntime& r = state.runtime(id);
      if (r.queued_since < last_cycle_ && r.wait == WaitReason::None)
        if (unreasoned_.size() < 10)
          unreasoned_.push_back("job " + state.spec(id).name + " pending without a reason");
    }
    last_cycle_ = ctl_->core().now();
  }

  slurm::FakeHarness h_;
  std::mt19937_64 rng_;
  std::string dir_;
  std::unique_ptr<driver::Lease> lease_;
  std::unique_ptr<slurm::Controller> ctl_;
  std::uint64_t invalid_ = 0;
  Time last_cycle_ = std::numeric_limits<Time>::min();
  std::vector<std::string> drift_, unreasoned_;
};

class ContractOnFakeCluster : public ::testing::TestWithParam<std::string> {};

TEST_P(ContractOnFakeCluster, HoldsThroughRestartsLostRepliesAndFailover) {
  for (std::uint64_t seed : {1, 2}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    OnlineContract c(GetParam(), seed);
    c.run();
    for (const auto& v : c.violations()) ADD_FAILURE() << v;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOnlinePolicy, ContractOnFakeCluster,
                         ::testing::ValuesIn(testing::online_policies()),
                         testing::policy_test_name);

}  // namespace
}  // namespace ds
