// The workload a time-scaled replay submits, and that `deepshare fidelity` simulates:
// the same function builds it on both sides, so they compare the same jobs.
//
// Assumptions:
//  - Tenants and quotas come from the controller config; each config tenant replays the
//    trace tenant named by its `trace:` key (tenants without one are not replayed).
//  - The cluster is the real Slurm partition's nodes (recorded in replay.json).
//  - Jobs that need more GPUs than one node has are skipped (multi-node pinning with
//    uneven per-node GPU counts is not supported by Slurm's per-node GRES); noted.
//  - Time stays in trace units: the replay's controller clock runs at time_scale trace
//    seconds per wall second. Run times are clamped to [min_wall_s, max_wall_s] x scale so
//    that each stand-in lasts several wall seconds (Slurm schedules on a ~1 s tick).
//  - Inter-arrival times are divided by `load` (more contention in a short excerpt).
#pragma once

#include <string>
#include <vector>

#include "model/workload.hpp"
#include "slurm/config.hpp"

namespace ds::slurm {

struct ExcerptSpec {
  std::string trace;
  std::string format = "venus";
  std::size_t from = 0;    // first job (among the replayed tenants' jobs, by submit time)
  std::size_t jobs = 200;  // how many
  double load = 1.0;
  double time_scale = 60.0;  // trace seconds per wall second
  double min_wall_s = 5.0;
  double max_wall_s = 0.0;  // 0: no cap
};

struct NodeShape {
  std::string name;
  int gpus = 0;
};

// "from=1000,jobs=200,load=2,min=5,max=120" (any subset) into `spec`; throws InputError.
void parse_excerpt(const std::string& text, ExcerptSpec& spec);
std::string format_excerpt(const ExcerptSpec& spec);

// Builds the excerpt workload: submit times start at 0, truth = clamped run times.
Workload make_excerpt(const ExcerptSpec& spec, const ControllerConfig& config,
                      const std::vector<NodeShape>& nodes);

}  // namespace ds::slurm
