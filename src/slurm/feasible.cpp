#include "slurm/feasible.hpp"

#include <algorithm>
#include <optional>

namespace ds::slurm {

bool FeatureConstraint::met_by(const std::vector<std::string>& features) const {
  const auto has = [&](const std::string& f) {
    return std::find(features.begin(), features.end(), f) != features.end();
  };
  return any ? std::any_of(names.begin(), names.end(), has)
             : std::all_of(names.begin(), names.end(), has);
}

std::optional<FeatureConstraint> parse_constraint(const std::string& text, std::string& why) {
  FeatureConstraint c;
  const bool all = text.find('&') != std::string::npos;
  c.any = text.find('|') != std::string::npos;
  const std::size_t odd = text.find_first_of("[]()*,!:; \t");
  if ((all && c.any) || odd != std::string::npos) {
    why =
        "DeepShare reads a --constraint of one feature, of features joined by '&' (all of "
        "them) or by '|' (any of them); '" +
        text + "' is not one of these forms: write one of them";
    return std::nullopt;
  }
  const char sep = c.any ? '|' : '&';
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t to = std::min(text.find(sep, from), text.size());
    if (to == from) {
      why = "--constraint '" + text + "': an empty feature name";
      return std::nullopt;
    }
    c.names.push_back(text.substr(from, to - from));
    from = to + 1;
  }
  return c;
}

namespace {

// Why Slurm cannot start `j` (whose constraint is `c`, or none) on node `n` ("" when it can).
std::string node_refusal(const JobInfo& j, const std::optional<FeatureConstraint>& c, const Node& n,
                         const NodeLimits& l) {
  if (std::find(j.excluded_nodes.begin(), j.excluded_nodes.end(), n.name) != j.excluded_nodes.end())
    return "excluded (--exclude)";
  if (c && !c->met_by(l.features)) return "lacks the features of --constraint=" + j.features;
  if (l.cpus != 0 && j.cpus_per_node > l.cpus)
    return "has " + std::to_string(l.cpus) + " CPUs, the job asks " +
           std::to_string(j.cpus_per_node);
  if (l.memory_mib != 0 && j.mem_per_node_mib > l.memory_mib)
    return "has " + std::to_string(l.memory_mib) + " MiB of memory, the job asks " +
           std::to_string(j.mem_per_node_mib);
  if (l.tmp_disk_mib != 0 && j.tmp_per_node_mib > l.tmp_disk_mib)
    return "has " + std::to_string(l.tmp_disk_mib) +
           " MiB of TmpDisk, the job asks --tmp=" + std::to_string(j.tmp_per_node_mib);
  return "";
}

}  // namespace

Feasibility feasible_nodes(const JobInfo& j, int gpus, int nodes, const Cluster& cluster,
                           const std::vector<NodeLimits>& limits) {
  Feasibility out;
  std::optional<FeatureConstraint> c;
  if (!j.features.empty()) {
    c = parse_constraint(j.features, out.refusal);
    if (!c) {
      out.allowed.assign(cluster.nodes.size(), 0);
      return out;
    }
  }
  std::vector<std::uint8_t> allowed(cluster.nodes.size(), 0);
  std::string why;  // the first reasons, for the message
  int fit_nodes = 0, fit_gpus = 0, widest = 0, listed = 0;
  bool all = true;
  for (const Node& n : cluster.nodes) {
    static const NodeLimits kUnknown;
    const NodeLimits& l = n.id.index() < limits.size() ? limits[n.id.index()] : kUnknown;
    const std::string no = node_refusal(j, c, n, l);
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
    out.refusal =
        "Slurm can start this job of " + std::to_string(gpus) + " GPUs on " +
        std::to_string(std::max(nodes, 1)) + " node(s) on too few nodes (" +
        std::to_string(fit_nodes) + " of " + std::to_string(cluster.nodes.size()) + "): " + why +
        ". Ask for less memory, temporary disk or fewer CPUs, exclude fewer nodes, or constrain to "
        "features more nodes have";
  return out;
}

}  // namespace ds::slurm
