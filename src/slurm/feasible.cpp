#include "slurm/feasible.hpp"

#include <algorithm>

namespace ds::slurm {

namespace {

// Why Slurm cannot start `j` on node `n` ("" when it can).
std::string node_refusal(const JobInfo& j, const Node& n, const NodeLimits& l) {
  if (std::find(j.excluded_nodes.begin(), j.excluded_nodes.end(), n.name) != j.excluded_nodes.end())
    return "excluded (--exclude)";
  if (l.cpus != 0 && j.cpus_per_node > l.cpus)
    return "has " + std::to_string(l.cpus) + " CPUs, the job asks " +
           std::to_string(j.cpus_per_node);
  if (l.memory_mib != 0 && j.mem_per_node_mib > l.memory_mib)
    return "has " + std::to_string(l.memory_mib) + " MiB of memory, the job asks " +
           std::to_string(j.mem_per_node_mib);
  return "";
}

}  // namespace

Feasibility feasible_nodes(const JobInfo& j, int gpus, int nodes, const Cluster& cluster,
                           const std::vector<NodeLimits>& limits) {
  Feasibility out;
  std::vector<std::uint8_t> allowed(cluster.nodes.size(), 0);
  std::string why;  // the first reasons, for the message
  int fit_nodes = 0, fit_gpus = 0, widest = 0, listed = 0;
  bool all = true;
  for (const Node& n : cluster.nodes) {
    const NodeLimits l = n.id.index() < limits.size() ? limits[n.id.index()] : NodeLimits{};
    const std::string no = node_refusal(j, n, l);
    if (no.empty()) {
      allowed[n.id.index()] = 1;
      ++fit_nodes;
      fit_gpus += n.gpus;
      widest = std::max(widest, n.gpus);
      continue;
    }
    all = false;
    if (listed++ < 3) why += (why.empty() ? "" : "; ") + n.name + " " + no;
  }
  if (listed > 3) why += "; and " + std::to_string(listed - 3) + " more";
  if (!all) out.allowed = std::move(allowed);
  // A job fits one node, or takes whole nodes (the gate's shapes).
  const bool fits = nodes <= 1 ? widest >= gpus : fit_nodes >= nodes && fit_gpus >= gpus;
  if (!fits)
    out.refusal = "Slurm can start this job of " + std::to_string(gpus) + " GPUs on " +
                  std::to_string(std::max(nodes, 1)) + " node(s) on too few nodes (" +
                  std::to_string(fit_nodes) + " of " + std::to_string(cluster.nodes.size()) +
                  "): " + why + ". Ask for less memory or fewer CPUs, or exclude fewer nodes";
  return out;
}

}  // namespace ds::slurm
