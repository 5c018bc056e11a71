// The Kubernetes scheduler's cycle without a server (issue #25 item 4; docs/kubernetes.md
// §14): what `deepshare k8s run` does per 100 ms cycle with the churn phase of
// bench/k8s_scale.sh in its caches, 1,000 KWOK-like nodes x 8 GPUs, 8,000 bound 1-GPU pods
// (with DeepShare's decision annotations) and 10,000 pending ones, one namespace that is the
// only tenant, the deepshare policy.
//
// A first cycle (not timed) adopts the bound pods and queues the pending ones. Each timed
// iteration then changes what the churn changes between two cycles: a running pod is
// deleted (gone from the cache) and a new pending pod appears, as new objects beside the
// unchanged ones (the informer's snapshot: shared pointers, a new object per change), and
// runs one cycle up to the policy's decisions: set_cycle (the caches into pod and node views
// and jobs), observe + fold (the jobs into the core), sync_held, decide. Decisions are not
// applied (that would call the API), so the same pods wait in every iteration, as in a
// churn where every freed GPU is refilled.
// Reported: the mean cycle (the benchmark's time) and each phase's mean (counters, ms).
// Build: cmake --build build --target bench_k8s_cycle; run: taskset -c 0 build/bin/bench_k8s_cycle
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "driver/core.hpp"
#include "k8s/adapter.hpp"
#include "registry/registry.hpp"

namespace {

using nlohmann::json;
using Objects = std::vector<std::shared_ptr<const json>>;

constexpr int kNodes = 1000;
constexpr int kGpus = 8;
constexpr int kPending = 10000;

json node(int i) {
  const std::string name = "gpu-node-" + std::to_string(i);
  return {{"metadata", {{"name", name}, {"uid", "node-" + name}}},
          {"spec", json::object()},
          {"status",
           {{"allocatable", {{"nvidia.com/gpu", std::to_string(kGpus)}, {"cpu", "32"}}},
            {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

// A bare 1-GPU pod as the benchmark creates it; bound ones carry DeepShare's decision.
json pod(int i, int node_index) {
  char uid[40];
  std::snprintf(uid, sizeof uid, "6b1f0c2e-0000-4000-8000-%012d", i);
  json p = {
      {"metadata",
       {{"uid", uid},
        {"namespace", "bench"},
        {"name", "p-" + std::to_string(i)},
        {"creationTimestamp", "2026-12-06T10:00:00Z"},
        {"labels", {{"app", "bench"}}},
        {"annotations", {{"deepshare.io/run-for", "30s"}}}}},
      {"spec",
       {{"schedulerName", "deepshare"},
        {"terminationGracePeriodSeconds", 0},
        {"containers", json::array({{{"name", "c"},
                                     {"image", "registry.invalid/x:1"},
                                     {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}},
      {"status", {{"phase", "Pending"}}}};
  if (node_index >= 0) {
    const std::string name = "gpu-node-" + std::to_string(node_index / kGpus);
    p["spec"]["nodeName"] = name;
    p["status"]["phase"] = "Running";
    p["status"]["startTime"] = "2026-12-06T10:00:01Z";
    p["metadata"]["annotations"][ds::k8s::kGpusAnnotation] =
        name + ":" + std::to_string(node_index % kGpus);
    p["metadata"]["annotations"][ds::k8s::kDecisionAnnotation] =
        ds::k8s::decision_annotation(false, false, 1000, 0);
  }
  return p;
}

void BM_K8sCycleInChurn(benchmark::State& bm) {
  ds::k8s::Kubeconfig k;
  k.server = "https://127.0.0.1:9";  // never called: decisions are not applied
  ds::k8s::Client client(k);
  std::FILE* null = std::fopen("/dev/null", "w");
  ds::driver::Log log{null, true};
  ds::driver::Journal journal;
  ds::driver::Fence fence{log, journal};
  std::vector<ds::Tenant> tenants(1);
  tenants[0].id = ds::TenantId(0);
  tenants[0].name = "bench";
  tenants[0].quota_gpus = kNodes * kGpus;
  ds::k8s::K8sAdapter adapter(client, log, journal, fence, {{"bench", tenants[0].id}});
  std::vector<json> nodes;
  for (int i = 0; i < kNodes; ++i) nodes.push_back(node(i));
  adapter.load_nodes(ds::k8s::node_views(nodes), ds::kDefaultGpuMemoryMib);
  Objects node_objects;  // as the informer hands them over; read once (NodeReader)
  for (const auto& n : nodes) node_objects.push_back(std::make_shared<const json>(n));
  ds::k8s::NodeReader node_reader;
  ds::driver::Core core(adapter.cluster(), tenants, adapter, log, journal, ds::driver::Timing{});
  ds::PolicyOptions options;
  core.set_policy(ds::make_policy("deepshare", {adapter.cluster(), tenants, options}), false);
  adapter.attach(core);
  ds::driver::DriverClock clock;
  Objects pods;
  const int bound = kNodes * kGpus;
  for (int i = 0; i < bound + kPending; ++i)
    pods.push_back(std::make_shared<const json>(pod(i, i < bound ? i : -1)));
  std::int64_t wall = 1'796'378'400'000 + 60'000;
  auto cycle = [&](double* t) {
    const auto t0 = std::chrono::steady_clock::now();
    wall += 100;
    core.set_time(wall, wall);
    adapter.set_cycle(pods, node_reader.read(node_objects), wall, wall, clock);
    const auto t1 = std::chrono::steady_clock::now();
    core.observe_nodes(*adapter.nodes());
    core.fold(*adapter.observe());
    const auto t2 = std::chrono::steady_clock::now();
    adapter.sync_held();
    const auto t3 = std::chrono::steady_clock::now();
    const ds::Decisions d = core.decide();
    benchmark::DoNotOptimize(d);
    const auto t4 = std::chrono::steady_clock::now();
    if (t) {
      const auto s = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
      t[0] += s(t0, t1);
      t[1] += s(t1, t2);
      t[2] += s(t2, t3);
      t[3] += s(t3, t4);
      bm.SetIterationTime(s(t0, t4));
    }
  };
  cycle(nullptr);  // adopt and queue everything (not timed)
  double t[4] = {};
  int next = bound + kPending;
  for (auto _ : bm) {
    // A running pod deleted, a new pending one created: two changed objects per cycle, the
    // snapshot in UID order as the informer's (the new UID is the largest).
    pods.erase(pods.begin());
    pods.push_back(std::make_shared<const json>(pod(next++, -1)));
    cycle(t);
  }
  const double n = static_cast<double>(bm.iterations());
  bm.counters["set_cycle_ms"] = t[0] / n * 1e3;
  bm.counters["observe_fold_ms"] = t[1] / n * 1e3;
  bm.counters["sync_held_ms"] = t[2] / n * 1e3;
  bm.counters["decide_ms"] = t[3] / n * 1e3;
  std::fclose(null);
}
BENCHMARK(BM_K8sCycleInChurn)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(50);

}  // namespace

BENCHMARK_MAIN();
