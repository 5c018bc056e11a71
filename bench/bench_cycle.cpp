// Online cycle latency (issue #14): one decide() of every registered policy on a cluster of
// 1,000 nodes x 8 GPUs with 10,000 pending and 5,000 running jobs, after a typical change
// (one arrival and one completion since the previous cycle).
//
// Setup (seeded, the same for every policy): 20 tenants of 50 nodes each (quota = their
// GPUs); 5,000 running jobs of 1-2 GPUs packed on their tenant's nodes (7,500 GPUs busy);
// 10,000 pending jobs of 1-8 GPUs (a few of 16 and 32) spread over the tenants. A fresh
// policy object learns them all in a first cycle (arrived + adopted, as after a controller
// restart), whose starts are applied; it is not timed. Each timed iteration then submits one
// job and finishes one running job (a ClusterState, as the drivers use), and times one
// decide() only; its decisions are applied before the next iteration.
// Reported per policy: the mean (the benchmark's time) and the p50 / p99 / max of the
// iterations (counters, milliseconds). DeepShare's target is p99 <= 10 ms.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "model/apply.hpp"
#include "model/cluster_state.hpp"
#include "model/testing.hpp"
#include "registry/registry.hpp"
#include "trace/aux_files.hpp"

namespace {

constexpr int kTenants = 20;
constexpr int kNodesPerTenant = 50;
constexpr int kRunning = 5000;
constexpr int kPending = 10000;
constexpr int kSpare = 20000;  // jobs that arrive during the timed iterations

struct Scenario {
  ds::Workload w;
  std::vector<ds::Time> oracle;
  std::vector<ds::Placement> placement;  // of the first kRunning jobs
};

const Scenario& scenario() {
  static const Scenario sc = [] {
    Scenario s;
    s.w = ds::testing::make_workload(kTenants, kNodesPerTenant, 8);
    ds::Rng rng(14);
    const int jobs = kRunning + kPending + kSpare;
    std::vector<int> next_node(kTenants, 0), next_gpu(kTenants, 0);
    for (int i = 0; i < jobs; ++i) {
      const int tenant = static_cast<int>(rng.below(kTenants));
      int gpus = 1;
      if (i < kRunning) {
        gpus = rng.below(2) == 0 ? 1 : 2;
      } else {
        static constexpr int kSizes[] = {1, 1, 1, 1, 2, 2, 4, 8, 8, 16, 32};
        gpus = kSizes[rng.below(std::size(kSizes))];
      }
      ds::testing::add_job(s.w, tenant, gpus, 0, 3600 + static_cast<std::int64_t>(rng.below(86400)),
                           static_cast<double>(5 + rng.below(90)),
                           static_cast<double>(1000 + rng.below(12000)));
    }
    // Running jobs: packed on their tenant's nodes in order (first fit, 8 GPUs per node).
    for (int i = 0; i < kRunning; ++i) {
      const auto t = s.w.jobs[static_cast<std::size_t>(i)].tenant.index();
      const int gpus = s.w.jobs[static_cast<std::size_t>(i)].gpus;
      if (next_gpu[t] + gpus > 8) {
        ++next_node[t];
        next_gpu[t] = 0;
      }
      if (next_node[t] >= kNodesPerTenant) {  // the tenant is full: it waits instead
        s.placement.emplace_back();
        continue;
      }
      const auto node = ds::NodeId(static_cast<std::uint32_t>(t * kNodesPerTenant + next_node[t]));
      const std::uint64_t mask = ((std::uint64_t{1} << gpus) - 1) << next_gpu[t];
      s.placement.push_back({ds::NodeAlloc{node, mask}});
      next_gpu[t] += gpus;
    }
    // Every job is submitted at 0 (finalize keeps the order); the arrivals of the timed
    // iterations are resubmitted later by the driver below, in id order.
    s.w.finalize();
    for (const auto& t : s.w.truth) s.oracle.push_back(t.work);
    return s;
  }();
  return sc;
}

// The drivers' one apply (model/apply.hpp); a refused decision is a policy bug here.
void apply_checked(ds::ClusterState& state, const ds::Decisions& d, ds::Time now) {
  const ds::ApplyReport r = ds::apply(state, d, now);
  if (!r.refused.empty()) throw ds::DecisionError(state.describe(r.refused.front()));
}

void BM_DecideAfterOneChange(benchmark::State& bm, const std::string& policy) {
  const Scenario& sc = scenario();
  static const ds::AuxData aux = ds::load_aux("");
  ds::PolicyOptions options;
  auto p = ds::make_policy(policy,
                           ds::PolicyContext{sc.w.cluster, sc.w.tenants, options, sc.oracle, &aux});
  ds::ClusterState state(sc.w.cluster, sc.w.tenants);
  state.set_jobs(sc.w.jobs, sc.w.profiles);
  ds::Time now = ds::seconds(1);
  for (int i = 0; i < kRunning + kPending; ++i) {
    const ds::JobId id(static_cast<std::uint32_t>(i));
    if (i < kRunning && !sc.placement[static_cast<std::size_t>(i)].empty())
      state.adopt(id, now, sc.placement[static_cast<std::size_t>(i)], false, false, now);
    else
      state.submit(id, now);
  }
  state.present_all();
  {  // the first cycle learns everything (not timed)
    const ds::Decisions d = p->decide(state.snapshot(now));
    state.clear_deltas();
    apply_checked(state, d, now);
  }
  std::uint32_t next = kRunning + kPending;
  ds::Rng rng(7);
  std::vector<double> ms;
  for (auto _ : bm) {
    now += ds::kSecond;
    if (next < sc.w.jobs.size()) state.submit(ds::JobId(next++), now);
    const auto running = state.running();
    if (!running.empty()) state.finish(running[rng.below(running.size())], now);
    const ds::ClusterSnapshot snap = state.snapshot(now);
    const auto t0 = std::chrono::steady_clock::now();
    ds::Decisions d = p->decide(snap);
    const auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(d);
    const double elapsed = std::chrono::duration<double>(t1 - t0).count();
    bm.SetIterationTime(elapsed);
    ms.push_back(elapsed * 1e3);
    state.clear_deltas();
    apply_checked(state, d, now);
  }
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1,
                       static_cast<std::size_t>(q * static_cast<double>(ms.size())))];
  };
  bm.counters["p50_ms"] = at(0.50);
  bm.counters["p99_ms"] = at(0.99);
  bm.counters["max_ms"] = ms.back();
  bm.counters["pending"] = static_cast<double>(state.pending().size());
  bm.counters["running"] = static_cast<double>(state.running().size());
}

// One benchmark per registered policy.
const int kRegistered = [] {
  for (const auto& info : ds::policy_registry())
    benchmark::RegisterBenchmark(("BM_DecideAfterOneChange/" + info.name).c_str(),
                                 BM_DecideAfterOneChange, info.name)
        ->UseManualTime()
        ->Iterations(1000)
        ->Unit(benchmark::kMillisecond);
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
