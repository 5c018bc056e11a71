// Google Benchmark targets: trace import and whole-trace simulation on Venus, and on Venus
// tiled K times (issue #14).
// Skips (with a message) when ../shared/traces is absent.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "registry/registry.hpp"
#include "report/metrics.hpp"
#include "sim/simulator.hpp"
#include "trace/aux_files.hpp"
#include "trace/load.hpp"
#include "trace/tile.hpp"

namespace {

const std::string kTrace =
    std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept/venus_sept_23859_jobs.csv";

const ds::Workload* venus() {
  static const ds::Workload* w = [] {
    if (!std::filesystem::exists(kTrace)) return static_cast<ds::Workload*>(nullptr);
    ds::LoadOptions lo;
    lo.format = "venus";
    return new ds::Workload(ds::load_trace(kTrace, lo));
  }();
  return w;
}

void BM_LoadVenus(benchmark::State& state) {
  if (!venus()) return state.SkipWithError("Venus trace not found in ../shared/traces");
  ds::LoadOptions lo;
  lo.format = "venus";
  for (auto _ : state) benchmark::DoNotOptimize(ds::load_trace(kTrace, lo));
}
BENCHMARK(BM_LoadVenus)->Unit(benchmark::kMillisecond);

void BM_SimulateVenus(benchmark::State& state, const char* policy) {
  const ds::Workload* w = venus();
  if (!w) return state.SkipWithError("Venus trace not found in ../shared/traces");
  for (auto _ : state) {
    ds::PolicyOptions o;
    auto p = ds::make_policy(policy, ds::PolicyContext{w->cluster, w->tenants, o});
    auto r = ds::simulate(*w, *p);
    benchmark::DoNotOptimize(r);
  }
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(w->jobs.size()),
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_SimulateVenus, fifo_isolated, "fifo-isolated")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SimulateVenus, fifo_pooled, "fifo-pooled")->Unit(benchmark::kMillisecond);

// Venus tiled K times (trace/tile.hpp: own tenants, nodes and users per copy, arrival jitter
// 0-600 s, seed 1), simulation + metrics only (what summary.json's wall_seconds times, less
// the interference fit): one iteration per policy and K. bench/scale.sh runs the same
// workloads through the CLI.
const ds::Workload* tiled(int copies) {
  static std::map<int, std::unique_ptr<ds::Workload>> cache;
  auto& w = cache[copies];
  if (!w && venus()) {
    ds::TileOptions o;
    o.copies = copies;
    w = std::make_unique<ds::Workload>(ds::tile_workload(*venus(), o));
  }
  return w.get();
}

void BM_SimulateTiled(benchmark::State& state, const std::string& policy) {
  const ds::Workload* w = tiled(static_cast<int>(state.range(0)));
  if (!w) return state.SkipWithError("Venus trace not found in ../shared/traces");
  static const ds::AuxData aux = ds::load_aux(w->aux_dir);
  std::vector<ds::Time> oracle;
  for (const auto& t : w->truth) oracle.push_back(t.work);
  for (auto _ : state) {
    ds::PolicyOptions o;
    auto p = ds::make_policy(policy, ds::PolicyContext{w->cluster, w->tenants, o, oracle, &aux});
    auto r = ds::simulate(*w, *p);
    benchmark::DoNotOptimize(ds::compute_metrics(*w, r));
  }
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(w->jobs.size()),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

const int kTiledRegistered = [] {
  for (const auto& info : ds::policy_registry())
    benchmark::RegisterBenchmark(("BM_SimulateTiled/" + info.name).c_str(), BM_SimulateTiled,
                                 info.name)
        ->Arg(4)
        ->Arg(15)
        ->Arg(42)
        ->Iterations(1)
        ->Unit(benchmark::kSecond);
  return 0;
}();

void BM_MetricsVenus(benchmark::State& state) {
  const ds::Workload* w = venus();
  if (!w) return state.SkipWithError("Venus trace not found in ../shared/traces");
  ds::PolicyOptions o;
  auto p = ds::make_policy("fifo-isolated", ds::PolicyContext{w->cluster, w->tenants, o});
  auto r = ds::simulate(*w, *p);
  for (auto _ : state) benchmark::DoNotOptimize(ds::compute_metrics(*w, r));
}
BENCHMARK(BM_MetricsVenus)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
