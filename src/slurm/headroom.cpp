// What other jobs hold on a node (headroom.hpp).
#include "slurm/headroom.hpp"

#include <algorithm>

namespace ds::slurm {

std::string held_refusal(NodeShare need, const NodeLimits& l, NodeShare held, Consumable c) {
  if (c.memory && l.memory_mib != 0 && need.memory_mib > 0 &&
      held.memory_mib + need.memory_mib > l.memory_mib)
    return "its jobs hold " + std::to_string(held.memory_mib) + " of its " +
           std::to_string(l.memory_mib) + " MiB of memory, the job asks " +
           std::to_string(need.memory_mib);
  if (c.cpus && l.cpus != 0 && need.cpus > 0 && held.cpus + need.cpus > l.cpus)
    return "its jobs hold " + std::to_string(held.cpus) + " of its " + std::to_string(l.cpus) +
           " CPUs, the job asks " + std::to_string(need.cpus);
  return "";
}

NodeShare held_on(const ClusterState& state, const Node& n,
                  const std::function<NodeShare(JobId)>& share) {
  std::vector<JobId> seen;
  NodeShare sum;
  for (int g = 0; g < n.gpus; ++g)
    for (JobId id : state.jobs_on_gpu(static_cast<std::size_t>(n.first_gpu + g))) {
      if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(id);
      const NodeShare s = share(id);
      sum.memory_mib += s.memory_mib;
      sum.cpus += s.cpus;
    }
  return sum;
}

std::optional<Placement> another_node(const ClusterState& state, JobId job, int gpus,
                                      std::uint64_t fixed,
                                      const std::function<bool(const Node&)>& avoid, NodeShare need,
                                      const std::vector<NodeLimits>& limits, Consumable c,
                                      const std::function<NodeShare(const Node&)>& held) {
  const JobSpec& spec = state.spec(job);
  std::optional<Placement> best;
  int best_free = 0;
  for (const Node& n : state.cluster().nodes) {
    if (avoid(n) || !state.node_usable(n.id) || !accepts_node(spec, n.id, n.gpu_type)) continue;
    std::uint64_t mask = 0;
    int free = 0;
    for (int g = 0; g < n.gpus; ++g) {
      const auto flat = static_cast<std::size_t>(n.first_gpu + g);
      if (!state.gpu_available(flat) || !state.jobs_on_gpu(flat).empty()) continue;
      if (free++ < gpus) mask |= std::uint64_t{1} << g;
    }
    if (fixed != 0) {  // exactly those indices, each free
      std::uint64_t idle = 0;
      for (int g = 0; g < n.gpus; ++g) {
        const auto flat = static_cast<std::size_t>(n.first_gpu + g);
        if (state.gpu_available(flat) && state.jobs_on_gpu(flat).empty())
          idle |= std::uint64_t{1} << g;
      }
      if ((idle & fixed) != fixed) continue;
      mask = fixed;
    }
    if (free < gpus || (best && free >= best_free)) continue;
    static const NodeLimits kUnknown;
    const NodeLimits& l = n.id.index() < limits.size() ? limits[n.id.index()] : kUnknown;
    if (!held_refusal(need, l, held(n), c).empty()) continue;
    best = Placement{NodeAlloc{n.id, mask}};
    best_free = free;
  }
  return best;
}

}  // namespace ds::slurm
