// A cluster file with node groups of any sizes, then placement on it (policy/placement.hpp,
// issue #26 item 1): an input is the YAML, then after a NUL byte a script of job sizes.
// What must hold, beyond "bad input is only an InputError":
//  1. on the idle cluster, every job of 1..(all GPUs) places, on distinct nodes, on free GPUs
//     only, with exactly its GPUs;
//  2. through the script's takes and gives (a byte: a job of 1 + byte % (GPUs) GPUs, placed
//     and taken when it fits; every fourth byte gives the oldest job back) the indexed set
//     and the span rule agree, and every placement is valid.
// A violation is a trap: libFuzzer reports it as a crash.
#include <deque>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "policy/placement.hpp"
#include "trace/cluster_file.hpp"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

ds::ClusterSnapshot idle_snapshot(const ds::Cluster& c, std::vector<ds::GpuState>& gpus,
                                  std::vector<std::int16_t>& milli,
                                  std::vector<std::int32_t>& node_free) {
  gpus.assign(static_cast<std::size_t>(c.total_gpus()), ds::GpuState{});
  milli.assign(gpus.size(), ds::kMilliPerGpu);
  node_free.clear();
  for (const auto& n : c.nodes) node_free.push_back(n.gpus);
  ds::ClusterSnapshot s;
  s.cluster = &c;
  s.gpus = gpus;
  s.gpu_free_milli = milli;
  s.node_free_gpus = node_free;
  return s;
}

// A placement of exactly `gpus` GPUs, free in `free`, each node once.
void check(const ds::FreeMap& free, const ds::Placement& p, int gpus) {
  int total = 0;
  std::vector<bool> seen(free.cluster().nodes.size(), false);
  for (const auto& a : p) {
    require(a.node.index() < seen.size() && !seen[a.node.index()]);
    seen[a.node.index()] = true;
    const ds::Node& n = free.cluster().nodes[a.node.index()];
    for (int k = 0; k < 64; ++k)
      if (a.gpu_mask >> k & 1) {
        require(k < n.gpus && free.free_milli(n.first_gpu + k) == ds::kMilliPerGpu);
        ++total;
      }
  }
  require(total == gpus);
}

}  // namespace

DEEPSHARE_FUZZ_TARGET(cluster_placement) {
  const ds::fuzz::Parts in = ds::fuzz::split(data, size);
  ds::ClusterSpec spec;
  try {
    spec = ds::parse_cluster_yaml("fuzz.yaml", std::string(in.trace));
  } catch (const ds::InputError&) {
    ds::fuzz::expected_error();
    return 0;
  }
  const ds::Cluster& c = spec.cluster;
  if (c.total_gpus() > 4096) return 0;  // a bound on the work per input
  std::vector<ds::GpuState> gpus;
  std::vector<std::int16_t> milli;
  std::vector<std::int32_t> node_free;
  ds::FreeMap free(idle_snapshot(c, gpus, milli, node_free));
  std::vector<ds::NodeId> all;
  for (const auto& n : c.nodes) all.push_back(n.id);
  const auto set = free.add_set(all);
  for (int want = 1; want <= c.total_gpus(); ++want) {  // 1
    const auto p = ds::place_consolidate(free, all, want);
    require(p.has_value());
    check(free, *p, want);
    require(ds::place_consolidate(free, set, want) == p);
  }
  require(!ds::place_consolidate(free, all, c.total_gpus() + 1));
  std::deque<ds::Placement> held;  // 2
  for (std::size_t i = 0; i < in.side.size(); ++i) {
    const auto byte = static_cast<unsigned char>(in.side[i]);
    if (i % 4 == 3 && !held.empty()) {
      free.give(held.front(), ds::kMilliPerGpu);
      held.pop_front();
      continue;
    }
    const int want = 1 + static_cast<int>(byte) % c.total_gpus();
    const auto a = ds::place_consolidate(free, all, want);
    require(a == ds::place_consolidate(free, set, want));
    if (!a) continue;
    check(free, *a, want);
    free.take(*a, ds::kMilliPerGpu);
    held.push_back(*a);
  }
  return 0;
}
