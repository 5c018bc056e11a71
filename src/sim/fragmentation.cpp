#include "sim/fragmentation.hpp"

#include <map>

namespace ds {

std::vector<TaskClass> task_distribution(std::span<const JobSpec> jobs) {
  std::map<std::pair<int, int>, std::size_t> counts;
  for (const auto& j : jobs) ++counts[{j.gpus, j.gpu_milli}];
  std::vector<TaskClass> out;
  for (const auto& [k, n] : counts)
    out.push_back({k.first, k.second, static_cast<double>(n) / static_cast<double>(jobs.size())});
  return out;
}

double fragmented_gpus(const Cluster& cluster, std::span<const std::int16_t> free_milli,
                       std::span<const TaskClass> tasks) {
  double total = 0;
  for (const auto& n : cluster.nodes) {
    int node_free = 0, whole = 0;
    for (int g = n.first_gpu; g < n.first_gpu + n.gpus; ++g) {
      node_free += free_milli[static_cast<std::size_t>(g)];
      if (free_milli[static_cast<std::size_t>(g)] == kMilliPerGpu) ++whole;
    }
    if (node_free == 0) continue;
    for (const auto& t : tasks) {
      int unusable = 0;  // milli the task class cannot use on this node
      bool fits = false;
      if (t.milli < kMilliPerGpu) {
        for (int g = n.first_gpu; g < n.first_gpu + n.gpus; ++g) {
          const int f = free_milli[static_cast<std::size_t>(g)];
          if (f >= t.milli)
            fits = true;
          else
            unusable += f;
        }
      } else {
        fits = whole >= t.gpus;
        unusable = node_free - whole * kMilliPerGpu;
      }
      total += t.share * (fits ? unusable : node_free);
    }
  }
  return total / kMilliPerGpu;
}

}  // namespace ds
