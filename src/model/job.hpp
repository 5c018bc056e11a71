// A job as the scheduler sees it at submission. What only the simulator may know
// (the true run time, the trace's final state) lives in JobTruth, never here, so a
// policy cannot peek at the future.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"

namespace ds {

// Workload profile of a DL training job (Lucid's profiled job types), when known.
struct Profile {
  std::string model;
  std::string dataset;
  int batch_size = 0;
  bool amp = false;
  bool operator==(const Profile&) const = default;
};

enum class Qos : std::uint8_t { Unspecified, LatencySensitive, BestEffort, Burstable, Guaranteed };

struct JobSpec {
  JobId id;
  std::string name;  // the trace's job id
  TenantId tenant;
  UserId user;
  int gpus = 1;
  int gpu_milli = 1000;  // per-GPU share requested; < 1000 only for 1-GPU sharing requests
  Time submit = 0;
  int profile = -1;           // index into Workload::profiles, -1 when unknown
  double gpu_util = -1;       // percent of SMs busy when running alone; -1 when unknown
  double gpu_memory_mib = 0;  // memory per GPU when known, 0 when unknown
  Qos qos = Qos::Unspecified;
  // The GPU model(s) the job may run on: empty = any; "A100" = only A100 nodes (Node::gpu_type);
  // "V100M16|V100M32" = one of them (openb's gpu_spec, alternatives separated by '|').
  std::string gpu_type;
  // False for a job the driver cannot preempt (a Slurm job submitted with --no-requeue):
  // a policy must never run it on borrowed (reclaimable) capacity.
  bool preemptible = true;
  // False for a job the driver cannot colocate on a partner's GPUs (on Slurm: a job whose
  // GRES request was written at an earlier start and can no longer change kind).
  bool colocatable = true;
  // The nodes the job may run on, by node index: empty = any node; else nonzero at [i] when
  // node i may serve it. Slurm-side requirements DeepShare does not model itself (node lists
  // and exclusions, memory and CPUs per node: issue #24) reach every policy as this mask,
  // beside the GPU model, so that no policy places a job where Slurm cannot start it.
  std::vector<std::uint8_t> allowed_nodes;
};

enum class FinalState : std::uint8_t { Completed, Cancelled, Failed, Other };

// Ground truth for the simulator only.
struct JobTruth {
  Time work = 0;  // run time when running alone at full speed
  FinalState state = FinalState::Completed;
};

// True when a GPU of model `node_model` may serve the job: it names no model, or the model
// is one of its '|'-separated alternatives (exact names). The one rule every policy's
// placement (policy/placement.hpp) and the start validation (ClusterState) apply.
bool accepts_gpu_model(const JobSpec& job, std::string_view node_model);
// True when node `node` (of GPU model `node_model`) may serve the job: its model is accepted
// and the job's node mask (JobSpec::allowed_nodes) allows it. The rule of every placement.
bool accepts_node(const JobSpec& job, NodeId node, std::string_view node_model);
// True when the job restricts its nodes (GPU models or a node mask): size shortcuts (free
// GPUs, largest fit) are then necessary conditions for it, never sufficient.
bool constrained(const JobSpec& job);

const char* to_string(Qos q);
const char* to_string(FinalState s);

}  // namespace ds
