// Free-capacity scratch map and node-level placement rules shared by policies.
//
// A FreeMap is a policy's private copy of which GPU capacity is free in this
// cycle; taking a placement updates it so that several starts in one cycle never
// overlap, and giving it back undoes a what-if (preemption search).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/cluster.hpp"
#include "model/snapshot.hpp"

namespace ds {

class FreeMap {
 public:
  explicit FreeMap(const ClusterSnapshot& s);

  // GPUs of the node with no job on them.
  [[nodiscard]] int free_gpus(NodeId n) const { return free_whole_[n.index()]; }
  [[nodiscard]] int free_milli(int flat_gpu) const { return free_milli_[flat_gpu]; }
  [[nodiscard]] const Cluster& cluster() const { return *cluster_; }
  [[nodiscard]] int total_free_gpus(std::span<const NodeId> nodes) const;

  void take(const Placement& p, int milli_per_gpu);
  void give(const Placement& p, int milli_per_gpu);

 private:
  void adjust(const Placement& p, int delta_milli);
  const Cluster* cluster_;
  std::vector<std::int16_t> free_milli_;  // per flat GPU
  std::vector<std::int32_t> free_whole_;  // per node: GPUs with free_milli == 1000
};

// Lucid's "consolidate" placement (Lucid artifact, simulation/policy/placer/consolidate.py),
// over the candidate `nodes` in the given order:
//  1. Fail if the candidates' free GPUs are fewer than `gpus`.
//  2. gpus <= node size: best fit, the node with the fewest free GPUs that fits
//     (first in order among equals).
//  3. gpus > node size: floor(gpus / size) wholly free nodes (first in order), and
//     the remainder on one more node: the next wholly free node if there is one,
//     else the node with the most free GPUs, which must fit the remainder.
// Within a node the lowest-numbered free GPUs are used. Multi-node jobs assume the
// candidates have equal node sizes (the first candidate's size is used).
std::optional<Placement> place_consolidate(const FreeMap& free, std::span<const NodeId> nodes,
                                           int gpus);

// A fractional single-GPU request (gpu_milli < 1000): the GPU with the least free
// capacity that still fits (packs shares together), lowest index among equals.
std::optional<Placement> place_fraction(const FreeMap& free, std::span<const NodeId> nodes,
                                        int milli);

// Dispatches on the job's request.
std::optional<Placement> place_job(const FreeMap& free, std::span<const NodeId> nodes,
                                   const JobSpec& job);

}  // namespace ds
