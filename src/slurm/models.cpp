#include "slurm/models.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "model/job.hpp"

namespace ds::slurm {

std::string node_model(const NodeInfo& node, const ControllerConfig& cfg) {
  std::string model;
  for (const auto& f : node.features) {
    if (!cfg.gpu_models.count(f) || f == model) continue;
    if (!model.empty())
      throw InputError("node " + node.name + ": its Features name two GPU models of gpu_models (" +
                       model + ", " + f + "); a node holds GPUs of one model");
    model = f;
  }
  return model;
}

std::int64_t model_memory_mib(const std::string& model, const ControllerConfig& cfg) {
  const auto it = cfg.gpu_models.find(model);
  return it == cfg.gpu_models.end() ? cfg.gpu_memory_mib : it->second;
}

std::int64_t max_memory_mib(const ControllerConfig& cfg) {
  std::int64_t most = cfg.gpu_memory_mib;
  for (const auto& [name, mib] : cfg.gpu_models) most = std::max(most, mib);
  return most;
}

std::string model_refusal(const std::string& models, int gpus, int nodes, const Cluster& cluster,
                          const std::string& partition) {
  JobSpec want;
  want.gpu_type = models;
  std::map<std::string, int> per_model;  // the partition's models -> nodes (for the message)
  int fit_gpus = 0, fit_nodes = 0, widest = 0;
  for (const Node& n : cluster.nodes) {
    if (!n.gpu_type.empty()) ++per_model[n.gpu_type];
    if (!accepts_gpu_model(want, n.gpu_type)) continue;
    fit_gpus += n.gpus;
    ++fit_nodes;
    widest = std::max(widest, n.gpus);
  }
  // A job fits one node, or takes whole nodes (the gate's shapes).
  const bool fits = nodes <= 1 ? widest >= gpus : fit_nodes >= nodes && fit_gpus >= gpus;
  if (fits) return "";
  std::string list;
  for (const auto& [m, count] : per_model)
    list += (list.empty() ? "" : ", ") + m + " (" + std::to_string(count) + " nodes)";
  const std::string theirs =
      "partition '" + partition + "' has GPU models: " + (list.empty() ? "none" : list);
  if (fit_nodes == 0)
    return "no node has GPU model '" + models + "': " + theirs +
           ". Submit with --gres=gpu:MODEL:N of one of them";
  return "the job asks for " + std::to_string(gpus) + " GPUs of model '" + models +
         "' but its nodes hold " + std::to_string(fit_gpus) + " on " + std::to_string(fit_nodes) +
         " nodes (" + std::to_string(widest) + " on the largest): " + theirs;
}

}  // namespace ds::slurm
