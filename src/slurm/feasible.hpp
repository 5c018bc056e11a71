// Feasibility before placement on the Slurm face (issue #24, docs/slurm.md "What Slurm must
// also find on a node"). Slurm starts a job only on nodes it does not exclude (--exclude)
// whose CPUs, memory and temporary disk can hold what it asks (--cpus-per-task, --mem,
// --mem-per-cpu, --tmp) and whose Features meet its --constraint.
// DeepShare writes the job's node list itself, so a placement on a node Slurm cannot use
// never starts: Slurm leaves the job pending on GPUs DeepShare counts as its own (a real-Slurm
// run with the mask disabled saw such starts stay in flight, docs/slurm.md §2). Instead the
// controller turns these requirements into the job's node mask (JobSpec::allowed_nodes),
// which every policy's placement honours like a GPU model, and refuses a job no set of
// allowed nodes can ever hold, with the reason in its AdminComment.
// What is read from Slurm: the job record's ExcNodeList, CPUs, memory and TmpDisk per node and
// Features (its --constraint), and the nodes' CPUs, RealMemory, TmpDisk and active Features
// (ports.hpp). The mask is what a node can hold when empty; what the jobs already on a node
// hold is checked at each start (headroom.hpp). Of Slurm's constraint syntax DeepShare
// reads one feature, features joined by '&' (all) or by '|' (any); a job with another form
// (brackets, counts, parentheses, '&' and '|' mixed) is refused with what to write instead,
// since DeepShare could not tell which nodes Slurm would start it on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/cluster.hpp"
#include "slurm/ports.hpp"

namespace ds::slurm {

// What a node of the partition offers besides GPUs (0: unknown, no limit).
struct NodeLimits {
  std::uint32_t cpus = 0;
  std::uint64_t memory_mib = 0;
  std::uint64_t tmp_disk_mib = 0;
  std::vector<std::string> features;  // Slurm Features (active ones)
};

// A job's --constraint as DeepShare reads it: `names` all required (`any` false) or at least
// one of them (`any` true); none: no constraint.
struct FeatureConstraint {
  std::vector<std::string> names;
  bool any = false;
  [[nodiscard]] bool met_by(const std::vector<std::string>& features) const;
};

// `text` (Slurm's Features field of the job) read as a FeatureConstraint; nullopt, with
// `why` set, for a form DeepShare does not read.
std::optional<FeatureConstraint> parse_constraint(const std::string& text, std::string& why);

struct Feasibility {
  std::vector<std::uint8_t> allowed;  // JobSpec::allowed_nodes: empty when every node may serve
  std::string refusal;                // why no allowed nodes can ever hold the job; "" if some can
};

// The nodes of `cluster` (whose limits are `limits`, by node index) where Slurm can start
// job `j` of `gpus` GPUs on `nodes` nodes, and why none can.
Feasibility feasible_nodes(const JobInfo& j, int gpus, int nodes, const Cluster& cluster,
                           const std::vector<NodeLimits>& limits);

}  // namespace ds::slurm
