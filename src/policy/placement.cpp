#include "policy/placement.hpp"

#include <bit>

namespace ds {

FreeMap::FreeMap(const ClusterSnapshot& s)
    : cluster_(s.cluster),
      free_milli_(s.gpu_free_milli.begin(), s.gpu_free_milli.end()),
      free_whole_(s.node_free_gpus.begin(), s.node_free_gpus.end()) {}

int FreeMap::total_free_gpus(std::span<const NodeId> nodes) const {
  int total = 0;
  for (NodeId n : nodes) total += free_whole_[n.index()];
  return total;
}

void FreeMap::adjust(const Placement& p, int delta_milli) {
  for (const auto& a : p) {
    const Node& n = cluster_->nodes[a.node.index()];
    for (std::uint64_t m = a.gpu_mask; m != 0; m &= m - 1) {
      auto g = static_cast<std::size_t>(n.first_gpu + std::countr_zero(m));
      const bool was_whole = free_milli_[g] == kMilliPerGpu;
      free_milli_[g] = static_cast<std::int16_t>(free_milli_[g] + delta_milli);
      const bool is_whole = free_milli_[g] == kMilliPerGpu;
      free_whole_[a.node.index()] += static_cast<int>(is_whole) - static_cast<int>(was_whole);
    }
  }
}

void FreeMap::take(const Placement& p, int milli_per_gpu) {
  adjust(p, -milli_per_gpu);
}
void FreeMap::give(const Placement& p, int milli_per_gpu) {
  adjust(p, milli_per_gpu);
}

namespace {

// The lowest-numbered `count` wholly free GPUs of a node.
NodeAlloc take_lowest(const FreeMap& free, NodeId id, int count) {
  const Node& n = free.cluster().nodes[id.index()];
  NodeAlloc a{id, 0};
  for (int k = 0; k < n.gpus && count > 0; ++k) {
    if (free.free_milli(n.first_gpu + k) == kMilliPerGpu) {
      a.gpu_mask |= std::uint64_t{1} << k;
      --count;
    }
  }
  return a;
}

}  // namespace

std::optional<Placement> place_consolidate(const FreeMap& free, std::span<const NodeId> nodes,
                                           int gpus) {
  if (nodes.empty() || gpus <= 0 || free.total_free_gpus(nodes) < gpus) return std::nullopt;
  const int size = free.cluster().nodes[nodes.front().index()].gpus;
  if (gpus <= size) {
    // Best fit: fewest free GPUs that still fit; the first such node in order.
    std::optional<NodeId> best;
    int best_free = 0;
    for (NodeId n : nodes) {
      const int f = free.free_gpus(n);
      if (f >= gpus && (!best || f < best_free)) {
        best = n;
        best_free = f;
      }
    }
    if (!best) return std::nullopt;
    return Placement{take_lowest(free, *best, gpus)};
  }
  if (size <= 0) return std::nullopt;
  int whole_needed = gpus / size;
  const int rest = gpus % size;
  Placement p;
  std::optional<NodeId> spare_whole;  // first wholly free node beyond those taken
  for (NodeId n : nodes) {
    const Node& node = free.cluster().nodes[n.index()];
    if (free.free_gpus(n) != node.gpus || node.gpus != size) continue;
    if (whole_needed > 0) {
      p.push_back(take_lowest(free, n, size));
      --whole_needed;
    } else if (!spare_whole) {
      spare_whole = n;
    }
  }
  if (whole_needed > 0) return std::nullopt;
  if (rest == 0) return p;
  if (spare_whole) {
    p.push_back(take_lowest(free, *spare_whole, rest));
    return p;
  }
  // The partially free node with the most free GPUs (first in order among equals).
  std::optional<NodeId> best;
  int best_free = -1;
  for (NodeId n : nodes) {
    const Node& node = free.cluster().nodes[n.index()];
    const int f = free.free_gpus(n);
    if (f == node.gpus) continue;  // wholly free nodes are all taken
    if (f > best_free) {
      best = n;
      best_free = f;
    }
  }
  if (!best || best_free < rest) return std::nullopt;
  p.push_back(take_lowest(free, *best, rest));
  return p;
}

std::optional<Placement> place_fraction(const FreeMap& free, std::span<const NodeId> nodes,
                                        int milli) {
  std::optional<NodeAlloc> best;
  int best_left = kMilliPerGpu + 1;
  for (NodeId id : nodes) {
    const Node& n = free.cluster().nodes[id.index()];
    for (int k = 0; k < n.gpus; ++k) {
      const int left = free.free_milli(n.first_gpu + k);
      if (left >= milli && left < best_left) {
        best = NodeAlloc{id, std::uint64_t{1} << k};
        best_left = left;
      }
    }
  }
  if (!best) return std::nullopt;
  return Placement{*best};
}

std::optional<Placement> place_job(const FreeMap& free, std::span<const NodeId> nodes,
                                   const JobSpec& job) {
  if (job.gpu_milli < kMilliPerGpu) return place_fraction(free, nodes, job.gpu_milli);
  return place_consolidate(free, nodes, job.gpus);
}

}  // namespace ds
