// Turns what a real replay observed (per job: submit time and its runs, in controller
// time) into the simulator's RunRecord, so that compute_metrics and write_outputs give
// the same summary.json / jobs.csv / tenants.csv as a simulation.
//
// Assumptions: GPU sharing slows nothing down on fake GPUs (speed 1, max_slowdown 1);
// lost work and restart overhead of a preempted run follow the stand-in's checkpoint
// model (progress kept at multiples of the tenant's checkpoint interval, 40 s / 60 s
// overhead), the same rule the simulator applies; entitlement at submit is computed from
// the observed runs exactly as the simulator defines it (DESIGN §4).
#pragma once

#include <vector>

#include "model/run_record.hpp"
#include "model/snapshot.hpp"
#include "model/workload.hpp"

namespace ds::slurm {

struct ObservedRun {
  Time start = 0;
  Time end = kNever;  // kNever: still running when the replay stopped
  bool borrowed = false;
  bool shared = false;
  bool preempted = false;  // ended by a requeue, not by completion
  Placement placement;
  Time decided = kNever;  // controller time of the start decision (the pin's t), if known
};

struct ObservedJob {
  Time submit = 0;
  bool completed = false;
  std::vector<ObservedRun> runs;
};

RunRecord result_from_observation(const Workload& w, const std::vector<ObservedJob>& jobs);

}  // namespace ds::slurm
