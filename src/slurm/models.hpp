// GPU models on the Slurm face (docs/slurm.md "GPU models"). The gate records the model a
// job asks for (gm= in its AdminComment: "a100" or "a100|v100"); the controller learns each
// node's model from its Slurm Features, matched against the models its YAML lists
// (gpu_models: {a100: 81920, ...}, with their GPU memory), because on DeepShare's nodes the
// GRES types name GPU indices (g0..gN) and cannot carry a model. A node without a listed
// feature stays untyped (any job without a model may run there; none with one).
// With no gpu_models configured, nodes are untyped and jobs' models are not enforced (a site
// of one model needs no configuration).
#pragma once

#include <cstdint>
#include <string>

#include "model/cluster.hpp"
#include "slurm/config.hpp"
#include "slurm/ports.hpp"

namespace ds::slurm {

// The model of `node`: the one of its Features that `cfg.gpu_models` lists ("" when none);
// throws InputError naming the node when its Features name two of them.
std::string node_model(const NodeInfo& node, const ControllerConfig& cfg);

// GPU memory per GPU of a node of `model` ("": cfg.gpu_memory_mib).
std::int64_t model_memory_mib(const std::string& model, const ControllerConfig& cfg);

// The largest GPU memory of any node (the bound of a record's mem= hint).
std::int64_t max_memory_mib(const ControllerConfig& cfg);

// Why a job of `gpus` GPUs on `nodes` nodes asking `models` ("A" or "A|B") can never run on
// `cluster` (no node of its model(s), or too few of their GPUs), naming the partition's
// models; "" when it can.
std::string model_refusal(const std::string& models, int gpus, int nodes, const Cluster& cluster,
                          const std::string& partition);

}  // namespace ds::slurm
