// What other jobs hold on a node (issue #24, docs/slurm.md "What Slurm must also find on a
// node"). The node mask (feasible.hpp) says where a job fits an empty node. With
// select/cons_tres Slurm also counts what the jobs already there hold: CPUs always, memory
// when SelectTypeParameters makes it consumable (CR_Core_Memory, CR_CPU_Memory, ...). Two
// 2-GPU jobs of --mem=40G fit a 4-GPU, 64 GB node's GPUs together but not its memory: Slurm
// starts the first and leaves the second pending ("Resources") on GPUs DeepShare counts as
// its own, until the start times out and is rolled back.
// So before a start is handed over the controller checks each of its nodes against what the
// jobs there ask (the model's, and those it does not run: other partitions' and CPU-only
// jobs on the same nodes, DeepShare's own ending ones) (their --mem and CPUs per node, starts of
// the same cycle included; a victim being preempted frees its share with its GPUs). A start that
// does not fit moves to another node where its GPUs are free and Slurm can start it (one-node
// starts that are not colocated and whose GRES request is not fixed), or is deferred to a later
// cycle. Pure functions of the model and the jobs' requirements; no I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/cluster_state.hpp"
#include "slurm/feasible.hpp"
#include "slurm/ports.hpp"

namespace ds::slurm {

// What Slurm counts as held on a node (SelectTypeParameters; none: the mask alone).
struct Consumable {
  bool memory = false;  // CR_*_Memory
  bool cpus = false;    // CR_CPU, CR_Core, CR_Socket
};

// CPUs and memory per node, of a job or summed over jobs.
struct NodeShare {
  std::uint64_t memory_mib = 0;
  std::uint32_t cpus = 0;
};

inline NodeShare operator+(NodeShare a, NodeShare b) {
  return {a.memory_mib + b.memory_mib, a.cpus + b.cpus};
}

// A job's share on each node it runs on.
inline NodeShare share_of(const JobInfo& j) {
  return {j.mem_per_node_mib, j.cpus_per_node};
}

// Why a job asking `need` per node cannot start on a node of limits `l` beside `held` there
// ("" when it can; a limit of 0 is unknown: no limit).
std::string held_refusal(NodeShare need, const NodeLimits& l, NodeShare held, Consumable c);

// What the model's jobs on node `n` hold there: the sum of `share(job)` over the distinct
// jobs on its GPUs.
NodeShare held_on(const ClusterState& state, const Node& n,
                  const std::function<NodeShare(JobId)>& share);

// A node for a start of `job` (`gpus` whole GPUs on one node) that `avoid` does not name:
// one its spec accepts, usable, with `gpus` GPUs no job uses, and whose limits hold `need`
// beside what `held` says is held there; the fullest such node (best fit), its lowest free
// GPUs, or the GPUs of `fixed` when not 0 (a job whose GRES request names its GPU indices for
// good). nullopt: none.
std::optional<Placement> another_node(const ClusterState& state, JobId job, int gpus,
                                      std::uint64_t fixed,
                                      const std::function<bool(const Node&)>& avoid, NodeShare need,
                                      const std::vector<NodeLimits>& limits, Consumable c,
                                      const std::function<NodeShare(const Node&)>& held);

}  // namespace ds::slurm
