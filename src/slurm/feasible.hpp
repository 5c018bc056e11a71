// Feasibility before placement on the Slurm face (issue #24, docs/slurm.md "What Slurm must
// also find on a node"). Slurm starts a job only on nodes it does not exclude (--exclude)
// and whose CPUs and memory can hold what it asks (--cpus-per-task, --mem, --mem-per-cpu).
// DeepShare writes the job's node list itself, so a placement on a node Slurm cannot use
// never starts: Slurm leaves the job pending on GPUs DeepShare counts as its own (a real-Slurm
// run with the mask disabled saw such starts stay in flight, docs/slurm.md §2). Instead the
// controller turns these requirements into the job's node mask (JobSpec::allowed_nodes),
// which every policy's placement honours like a GPU model, and refuses a job no set of
// allowed nodes can ever hold, with the reason in its AdminComment.
// What is read from Slurm: the job record's ExcNodeList, CPUs and memory per node, and the
// nodes' CPUs and RealMemory (ports.hpp). Memory other jobs use on a node is not counted:
// the mask is what a node can hold when empty (DeepShare's jobs are its GPU jobs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.hpp"
#include "slurm/ports.hpp"

namespace ds::slurm {

// What a node of the partition offers besides GPUs (0: unknown, no limit).
struct NodeLimits {
  std::uint32_t cpus = 0;
  std::uint64_t memory_mib = 0;
};

struct Feasibility {
  std::vector<std::uint8_t> allowed;  // JobSpec::allowed_nodes: empty when every node may serve
  std::string refusal;                // why no allowed nodes can ever hold the job; "" if some can
};

// The nodes of `cluster` (whose limits are `limits`, by node index) where Slurm can start
// job `j` of `gpus` GPUs on `nodes` nodes, and why none can.
Feasibility feasible_nodes(const JobInfo& j, int gpus, int nodes, const Cluster& cluster,
                           const std::vector<NodeLimits>& limits);

}  // namespace ds::slurm
