// The cluster: nodes of GPUs. GPUs are addressed by a flat index (node.first_gpu + k)
// so that per-GPU state lives in one dense vector.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace ds {

constexpr int kMaxGpusPerNode = 64;  // placements use a 64-bit GPU mask per node
constexpr int kMilliPerGpu = 1000;   // a whole GPU, in the units of fractional requests
// The memory of a GPU when nothing says otherwise (an RTX 3090-class 24 GiB GPU, as Lucid
// assumes for Venus).
inline constexpr std::int64_t kDefaultGpuMemoryMib = 24 * 1024;

struct Node {
  NodeId id;
  std::string name;
  int gpus = 0;
  int first_gpu = 0;  // flat index of GPU 0 of this node
  std::int64_t gpu_memory_mib = kDefaultGpuMemoryMib;
  std::string gpu_type;
  // The tenant whose virtual cluster owns this node (policies that isolate tenants
  // place only there); invalid when the node belongs to the shared pool.
  TenantId owner;
};

struct Cluster {
  std::vector<Node> nodes;

  [[nodiscard]] int total_gpus() const {
    return nodes.empty() ? 0 : nodes.back().first_gpu + nodes.back().gpus;
  }
  // Appends `count` nodes; assigns ids, names (prefix + number) and flat GPU offsets.
  void add_nodes(int count, int gpus, std::int64_t gpu_memory_mib, const std::string& gpu_type,
                 TenantId owner, const std::string& name_prefix = "node");
};

}  // namespace ds
