// DeepShare's GPU layout in Slurm's GRES (docs/slurm.md §2, "Slurm's allocation =
// DeepShare's decision").
//
// On DeepShare's nodes each GPU index k is its own gres/gpu type `gk` (gres.conf
// `Name=gpu Type=gk File=/dev/nvidiak`), so a request can name exactly the GPUs DeepShare
// chose: "gres:gpu:g0:1,gres:gpu:g2:1" holds GPUs 0 and 2 of every node of the job. A job
// colocated on another job's GPUs (MPS) holds the `gpushare` slot of those GPUs instead
// (`Name=gpushare Type=gk File=/dev/nvidiak`, one per GPU): a GRES Slurm does not tie to
// gres/gpu, so it is granted while the partner holds the GPU, and it is shown, accounted
// and (with ConstrainDevices) enforced like any device GRES. (A partner that holds only
// slots itself - it ran colocated before - is joined on the GPUs: `express_start`.)
//
// Slurm 22.05 cannot shrink a pending job's GRES request: an update merges the new types
// into the old ones (measured: gpu:g0 then gpu:g1 allocates both; a count of 0 still
// allocates one). So a job's request is written once, at its first start, and fixes its
// kind (whole GPUs or slots) and its GPU indices for good; later runs reuse them, on any
// node (`express_start`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ds::slurm {

enum class GresKind : std::uint8_t { None, Whole, Slot, Other };

struct GresRequest {
  GresKind kind = GresKind::None;
  std::uint64_t mask = 0;  // GPU indices (same on every node of the job)
  int untyped = 0;         // untyped gpu count (jobs DeepShare did not start)
};

// A job's tres_per_node, e.g. "gres:gpu:g0:1,gres:gpu:g2:1" or "gres:gpushare:g1:1".
GresRequest parse_gres_request(const std::string& tres_per_node);
// The request holding `mask` as whole GPUs or as slots.
std::string format_gres_request(GresKind kind, std::uint64_t mask);

// One node's allocation from a gres_detail entry: "gpu:g0:1(IDX:0),gpushare:g2:1(IDX:2)",
// "gpu:2(IDX:0-1)", "gpu:a100:2(IDX:1,3)".
struct GresAlloc {
  std::uint64_t gpus = 0;
  std::uint64_t slots = 0;
};
GresAlloc parse_gres_alloc(const std::string& detail);

// GPUs of a node from its Gres string: "gpu:g0:1,gpu:g1:1,gpushare:g0:1,..." -> 2,
// "gpu:4,mps:400" -> 4, "gpu:a100:4(S:0)" -> 4.
int parse_gpu_count(const std::string& gres);

// Occupancy of one node as Slurm holds it: GPUs held whole, GPUs whose slot is held.
struct NodeUse {
  std::uint64_t gpus = 0;
  std::uint64_t slots = 0;
};

// What the controller knows is free (its model of Slurm, this cycle's starts included).
struct Occupancy {
  std::function<bool(const std::string& node, std::uint64_t mask)> idle;  // no job at all
  std::function<bool(const std::string& node)> may_share;  // DeepShare-only node (slots safe)
};

// How a start decision is written into Slurm.
struct Expressed {
  std::map<std::string, std::uint64_t> gpus;  // node -> GPU indices
  GresKind kind = GresKind::Whole;
  bool write_request = false;  // the job has no GRES request yet: set it now
};

// Where a start can run, given the job's fixed request (if any). A colocated start takes
// the GRES of the partner's GPUs that the partner does not hold: their slots when the
// partner holds them whole (`partner` = Whole), the GPUs themselves when the partner holds
// only their slots (a job that ran colocated before and now runs alone).
//  - no request yet: the policy's placement as it is; its per-node masks must be equal
//    (one tres_per_node for all nodes);
//  - whole GPUs already requested: the same indices, on the policy's nodes if they are
//    idle there, else on the first `candidates` nodes where they are;
//  - slots already requested: alone on those indices of a DeepShare-only node;
//  - colocated again only with the same kind and indices.
// nullopt: Slurm cannot run it as decided (e.g. a job that ran whole next to a whole job).
std::optional<Expressed> express_start(const std::map<std::string, std::uint64_t>& placement,
                                       bool shared, const GresRequest& fixed,
                                       const std::vector<std::string>& candidates,
                                       const Occupancy& free, GresKind partner = GresKind::Whole);

// Expands an array task list ("0-5%2", "1,3-4", "0-9:3") into task ids (at most `limit`).
std::vector<std::uint32_t> expand_tasks(const std::string& tasks, std::size_t limit = 100000);

}  // namespace ds::slurm
