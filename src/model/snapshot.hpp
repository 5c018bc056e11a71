// What a policy sees in one scheduling cycle, and what it may decide.
//
// The snapshot is a read-only view: static facts (cluster, tenants, job specs)
// plus the observable state of every job and GPU. It carries the changes since
// the previous cycle (arrivals, completions, requeues) so that a policy keeps its
// own queues in O(changes) instead of rescanning every pending job.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/cluster.hpp"
#include "model/job.hpp"
#include "model/tenant.hpp"

namespace ds {

// GPUs of one node used by a job, as a bit mask over the node's GPUs.
struct NodeAlloc {
  NodeId node;
  std::uint64_t gpu_mask = 0;
  [[nodiscard]] int gpus() const { return __builtin_popcountll(gpu_mask); }
  bool operator==(const NodeAlloc&) const = default;
};
using Placement = std::vector<NodeAlloc>;

// Why a pending job is not running (the policy contract: every pending job has one).
// A policy states the reason of each job it examined and left pending, and of each job
// that arrived or was requeued in the cycle; a job keeps its last stated reason until
// the policy states another. Drivers add their own (starting, held, dependency).
enum class WaitReason : std::uint8_t {
  None,        // no reason stated yet (a contract violation after the job's first cycle)
  Priority,    // queued behind jobs the policy orders first
  Quota,       // its tenant's quota (or borrowing limit) is used up
  Reserved,    // free capacity is held back for entitled jobs or reserves
  NoFit,       // not enough free GPUs where it may run
  Fragmented,  // enough free GPUs in total, but not on nodes where it fits
  Reclaim,     // waiting for lent capacity to come back (borrowers ending or preempted)
  Round,       // waiting for the policy's next scheduling round
  Profiling,   // in a profiling stage (Lucid's profiler queue)
  Starting,    // driver: decided, the engine has not started it yet
  Held,        // driver: held by a user or an administrator
  Dependency,  // driver: a dependency or begin time is not met yet
};
inline constexpr int kWaitReasons = 12;
const char* to_string(WaitReason r);

enum class JobStatus : std::uint8_t { Future, Pending, Running, Done, Rejected };

// Observable state of one job (indexed by JobId).
struct JobRuntime {
  JobStatus status = JobStatus::Future;
  bool borrowed = false;  // running on capacity lent by other tenants (preemptible)
  bool shared = false;    // placed on GPUs already in use (MPS colocation)
  std::uint16_t preemptions = 0;
  Time first_start = kNever;
  Time last_start = kNever;  // start of the current (or last) run
  Time queued_since = 0;     // when it last entered the pending queue
  Time end = kNever;
  Time attained = 0;                   // wall time spent running so far, over all runs
  double speed = 1.0;                  // current progress rate (1 = exclusive speed)
  Placement placement;                 // current placement while running
  bool entitled = false;               // within its tenant's quota at submit (model/execution.hpp)
  WaitReason wait = WaitReason::None;  // while pending: the reason last stated
  Time wait_since = 0;                 // since when that reason holds
};

// Per-GPU usage.
struct GpuState {
  std::uint16_t jobs = 0;       // jobs placed on this GPU (+1 while it is blocked)
  std::int16_t milli_used = 0;  // sum of gpu_milli of those jobs (may exceed 1000 when shared)
  std::int64_t memory_used_mib = 0;
};

struct FinishedJob {
  JobId job;
  Time runtime = 0;  // wall time of the completed run(s): observable once the job has ended
};

struct ClusterSnapshot {
  Time now = 0;
  const Cluster* cluster = nullptr;
  std::span<const Tenant> tenants;
  std::span<const JobSpec> jobs;
  std::span<const Profile> profiles;             // JobSpec::profile indexes this
  std::span<const JobRuntime> runtime;           // indexed by JobId
  std::span<const GpuState> gpus;                // flat GPU index (Node::first_gpu + k)
  std::span<const std::int16_t> gpu_free_milli;  // per flat GPU: 1000 - shares in use (>= 0)
  std::span<const std::int32_t> node_free_gpus;  // per node: GPUs with no job
  std::span<const JobId> pending;                // every pending job, unordered
  std::span<const JobId> running;                // every running job, unordered
  // Changes since the previous cycle.
  std::span<const JobId> arrived;         // newly submitted, in arrival order
  std::span<const JobId> requeued;        // preempted and pending again
  std::span<const FinishedJob> finished;  // completed
  // Only from drivers of real clusters (the simulator leaves them empty):
  std::span<const JobId> adopted;    // found running, not started by this policy object (e.g.
                                     // after a controller restart); runtime holds its flags
  std::span<const JobId> withdrawn;  // left the queue without running (cancelled while pending)
  // Nodes whose GPU usage (gpus, gpu_free_milli, node_free_gpus) changed since the previous
  // cycle, each once, so that a policy's persistent free map (policy/placement.hpp,
  // FreeMap::sync) follows the cluster in O(changes). Valid only when `gpu_epoch` != 0: the
  // driver's ClusterState (`gpu_source`) counts cycles, and a snapshot of epoch e lists the
  // changes since the snapshot of epoch e - 1 (hand-made snapshots leave it 0: no deltas).
  std::span<const NodeId> changed_nodes;
  std::uint64_t gpu_source = 0;
  std::uint64_t gpu_epoch = 0;
};

struct StartJob {
  JobId job;
  Placement placement;
  bool borrowed = false;
  bool shared = false;                    // may land on GPUs already in use (memory must fit)
  int mps_thread_percent = 100;           // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for this client
  std::int64_t mps_memory_limit_mib = 0;  // 0: no limit
};

struct PreemptJob {
  JobId job;
};

struct RejectJob {
  JobId job;
  std::string reason;  // e.g. "needs 32 GPUs; the tenant's virtual cluster has 16"
};

struct WaitNote {
  JobId job;
  WaitReason reason = WaitReason::None;
};

struct Decisions {
  std::vector<PreemptJob> preempt;  // applied first
  std::vector<StartJob> start;      // then these, in order
  std::vector<RejectJob> reject;    // jobs that can never run under this policy
  std::vector<WaitNote> waiting;    // why jobs stay pending (changes only need be stated)
  Time wake_at = kNever;            // ask for another cycle at this time even if nothing happens
};

}  // namespace ds
