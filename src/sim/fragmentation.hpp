// GPU fragmentation as FGD defines it (Weng et al., "Beware of Fragmentation",
// USENIX ATC'23, §3): the free GPU capacity that the typical task cannot use.
//
// Algorithm:
//  1. The task distribution: each distinct request (GPU count, milli-GPU per GPU) with its
//     share of all tasks.
//  2. For a node and a task class m: if m cannot be placed on the node at all, all of the
//     node's free capacity is fragmented for m; otherwise the free capacity of the GPUs
//     that m cannot use (partially free GPUs for whole-GPU tasks; GPUs with less free than
//     m asks for fractional tasks) is.
//  3. Node fragmentation = sum over classes of share x fragmented capacity; cluster
//     fragmentation = sum over nodes, in GPUs.
#pragma once

#include <span>
#include <vector>

#include "model/cluster.hpp"
#include "model/job.hpp"

namespace ds {

struct TaskClass {
  int gpus = 1;
  int milli = 1000;  // per GPU
  double share = 0;  // of all tasks
};

// The distribution of requests over `jobs` (deterministic order: by gpus, then milli).
std::vector<TaskClass> task_distribution(std::span<const JobSpec> jobs);

// Fragmented capacity in GPUs, given the free milli-GPU of every GPU (flat index).
double fragmented_gpus(const Cluster& cluster, std::span<const std::int16_t> free_milli,
                       std::span<const TaskClass> tasks);

}  // namespace ds
