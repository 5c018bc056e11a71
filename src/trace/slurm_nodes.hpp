// The cluster from `scontrol show nodes` (the default text, or --oneliner; docs/formats.md,
// "slurm").
//
// Assumptions:
//  1. A node is a block of Key=Value tokens that starts with NodeName=; a token without '='
//     continues the value before it (OS=Linux 6.1 #1 SMP). Read: NodeName, Gres, CfgTRES,
//     Partitions, State.
//  2. GPUs: the `gpu` entries of Gres ("gpu:a100:8(S:0-1)", "gpu:4"); when Gres names none,
//     CfgTRES' gres/gpu. Other GRES (gpushare, mps, shard) are not GPUs. Nodes without GPUs
//     are skipped and counted.
//  3. GPU model: the entries' type. DeepShare's per-index layout (types g0..gN-1, one GPU
//     each; docs/slurm.md §3) is one node without a model. A node with GPUs of several models
//     becomes one node per model (NAME:MODEL; noted): a DeepShare node holds one model.
//  4. GPU memory per model (GiB): the `gpu_memory` override MODEL=GIB, else the number before
//     "g"/"gb" in the model name (a100_80g, v100-32gb), else a table of common models
//     (slurm_nodes.cpp), else the override *=GIB, else 24 GiB, noted per model.
//  5. All nodes are in the shared pool (Slurm nodes have no owner account). With a partition,
//     only its nodes are read. Nodes DOWN or DRAINED when dumped are kept (capacity) and noted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/cluster.hpp"

namespace ds {

struct SlurmNodesOptions {
  std::string partition;                // empty: every node
  std::vector<std::string> gpu_memory;  // "MODEL=GIB" overrides, e.g. "a100=80"; "*=GIB": others
};

struct SlurmCluster {
  Cluster cluster;
  std::vector<std::string> notes;
};

SlurmCluster read_slurm_nodes(const std::string& path, const SlurmNodesOptions& options);

// GPU memory in MiB of a model name by assumption 4's first two rules; 0 when unknown.
std::int64_t slurm_gpu_memory_mib(std::string_view model);

// Assumption 4 whole, from the `--gpu-memory` overrides ("MODEL=GIB", "*=GIB"): one rule for
// the Slurm and the Kubernetes importers. Throws InputError for a malformed override.
class GpuMemoryRule {
 public:
  explicit GpuMemoryRule(const std::vector<std::string>& overrides);
  // The override MODEL=GIB of this model (names compared without case and punctuation).
  [[nodiscard]] std::optional<std::int64_t> named(std::string_view model) const;
  // named, else the name's or the table's (slurm_gpu_memory_mib), else *=GIB; 0: unknown.
  [[nodiscard]] std::int64_t mib(std::string_view model) const;

 private:
  std::unordered_map<std::string, std::int64_t> mib_;  // normalized model or "*" -> MiB
};

}  // namespace ds
