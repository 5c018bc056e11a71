// Google Benchmark targets: trace import and whole-trace simulation on Venus.
// Skips (with a message) when ../shared/traces is absent.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "registry/registry.hpp"
#include "report/metrics.hpp"
#include "sim/simulator.hpp"
#include "trace/load.hpp"

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
