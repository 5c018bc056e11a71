// The controller's ports (DESIGN §2: ClusterSource, Actuator, Clock): what it reads from
// the cluster, how it acts on it, and its time. The controller depends only on these;
// libslurm is one implementation (SlurmApi, api.hpp), the in-process fake cluster
// (fake_cluster.hpp) another, which lets the reconciler, actuator and controller be tested
// without root, with Slurm-like lag, failed RPCs, lost replies, restarts and node failures.
//
// The types are Slurm's vocabulary (a job record, a node, an update of a pending job):
// the ports are at the level of the few RPCs the controller needs, so that the fake cannot
// drift from what libslurm really offers.
//  - ClusterSource: the job table (change-only: Slurm answers "no change since T" or the
//    whole table; it has no per-record delta), nodes, configuration, associations.
//  - Actuator: update a job (AdminComment record/pin, node list, GRES, BeginTime, priority:
//    hold/release), requeue-and-hold a running job (preempt), cancel (refuse).
//  - Clock: wall time in Unix ms (driver/clock.hpp).
// Assumption: one thread uses a port object at a time (as SlurmApi).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/gres.hpp"

namespace ds::driver {
class Clock;  // driver/clock.hpp
}

namespace ds::slurm {

enum class JobState : std::uint8_t {
  Pending,
  Running,
  Suspended,
  Completed,
  Failed,
  Cancelled,
  Other
};

constexpr std::uint32_t kNoTask = 0xfffffffe;  // Slurm's NO_VAL: not an array task

struct JobInfo {
  std::uint32_t id = 0;
  std::uint32_t array_job = 0;  // 0: not an array job
  std::uint32_t array_task = kNoTask;
  std::string array_tasks;              // pending tasks a meta record stands for, e.g. "0-5%2"
  std::uint32_t array_max_running = 0;  // %N throttle (0: none)
  std::string name;
  std::string account;  // lower case (Slurm folds account names)
  std::string user;
  std::uint32_t uid = 0;
  std::string partition;
  JobState state = JobState::Other;  // the base state
  bool completing = false;           // processes still being ended (cancel, requeue, end)
  std::string reason;
  bool held = false;  // priority 0 (held by user or admin)
  std::uint32_t priority = 0;
  std::uint32_t restarts = 0;
  bool requeue = true;  // Slurm may requeue it (--no-requeue: false)
  bool batch = true;
  std::int64_t submit_s = 0, start_s = 0, end_s = 0, eligible_s = 0;
  std::string dependency;                  // unsatisfied dependencies ("" when none)
  std::vector<std::string> nodes;          // allocated nodes, expanded
  std::map<std::string, GresAlloc> alloc;  // node -> GPUs / slots Slurm allocated
  std::string tres_per_node;               // e.g. "gres:gpu:g0:1,gres:gpu:g2:1"
  std::string comment;                     // user-writable: never trusted
  std::string admin_comment;               // operators only: DeepShare's record
  std::uint32_t num_nodes = 1;
  // What Slurm must also find on a node to start the job (issue #24, feasible.hpp): the
  // nodes it excludes (--exclude, expanded; DeepShare never writes them), its CPUs per node
  // (--cpus-per-task x tasks), memory per node in MiB (--mem, or --mem-per-cpu x CPUs) and
  // temporary disk per node (--tmp); 0: none asked.
  std::vector<std::string> excluded_nodes;
  std::uint32_t cpus_per_node = 0;
  std::uint64_t mem_per_node_mib = 0;
  std::uint64_t tmp_per_node_mib = 0;  // --tmp: disk in the node's TmpFS, MiB
  std::string features;                // --constraint as Slurm keeps it ("" when none)
  std::int64_t time_limit_s = -1;      // --time in seconds; -1: none (INFINITE)
  [[nodiscard]] bool terminal() const {
    return state == JobState::Completed || state == JobState::Failed ||
           state == JobState::Cancelled || state == JobState::Other;
  }
  [[nodiscard]] bool running() const {
    return (state == JobState::Running || state == JobState::Suspended) && !completing;
  }
  // The id string of this record ("123" or "123_4").
  [[nodiscard]] std::string ref() const;
};

// A Slurm reservation's window on a node (reservations.hpp).
struct ReservedWindow {
  std::string name;
  std::int64_t start_s = 0, end_s = 0;  // Unix seconds
};

struct NodeInfo {
  std::string name;
  int gpus = 0;
  bool usable = true;  // not down, drained or unresponsive
  std::string state;
  std::vector<std::string> partitions;
  std::vector<std::string> features;         // Slurm Features (active ones where Slurm has them)
  std::uint32_t cpus = 0;                    // CPUs (0: unknown, no limit)
  std::uint64_t memory_mib = 0;              // RealMemory (0: unknown, no limit)
  std::uint64_t tmp_disk_mib = 0;            // TmpDisk, MiB (0: unknown, no limit)
  std::vector<ReservedWindow> reservations;  // reservations that hold it, not yet over
};

struct SlurmConfig {
  int kill_wait_s = 30;
  bool accounting = false;  // AccountingStorageType is slurmdbd
  bool enforce_associations = false;
  bool enforce_limits = false;
  std::string job_submit_plugins;
  std::string cluster;
  // SelectTypeParameters: what jobs on a node hold from others (headroom.hpp)
  bool memory_consumable = false;  // CR_*_Memory
  bool cpus_consumable = false;    // CR_CPU, CR_Core, CR_Socket
};

// An association as slurmctld holds it (kept in sync with slurmdbd).
struct Association {
  std::string account;  // lower case
  std::string user;     // empty: the account's own association
  std::string partition;
  std::string parent;           // the account's parent account, lower case ("root" at the top)
  std::int64_t grp_quota = -1;  // GrpTRES of the requested TRES; -1: none set
  std::uint32_t shares = 1;
};

struct SubmitRequest {
  std::string name;
  std::string account;
  std::string partition;
  std::string script;  // full batch script text
  std::string work_dir = "/tmp";
  std::string std_out;        // may contain %j
  std::string tres_per_node;  // e.g. "gres:gpu:2"; empty: none
  std::string comment;
  std::uint32_t nodes = 1;
  bool hold = false;
  bool requeue = true;
  // Native Slurm scheduling (`slurm replay --native`): what the user asks Slurm itself for.
  std::string qos;                   // empty: the association's default QOS
  std::uint32_t time_limit_min = 0;  // --time, in minutes; 0: the partition's default
  std::uint16_t cpus = 0;            // --cpus-per-task of its one task; 0: Slurm's default
};

struct Update {
  std::string job;  // id string
  std::optional<std::string> req_nodes;
  std::optional<std::string> tres_per_node;
  std::optional<std::string> admin_comment;
  std::optional<std::uint32_t> priority;  // 0 hold, INFINITE release, else the value
  std::optional<std::int64_t> begin_s;    // BeginTime (Unix seconds)
};

// One read of the job table. Slurm's update-time API (slurm_load_jobs(update_time)) answers
// either "nothing changed since then" or the whole table, never a partial one.
struct JobTable {
  bool unchanged = false;     // nothing changed since `since`: `jobs` is empty, keep the last
  std::int64_t update_s = 0;  // pass it as `since` next time (Unix seconds)
  std::vector<JobInfo> jobs;
};

class ClusterSource {
 public:
  virtual ~ClusterSource() = default;
  // The job table, or unchanged when nothing changed since `since` (0: always the table);
  // nullopt (and last_error) on an RPC failure.
  virtual std::optional<JobTable> read_jobs(std::int64_t since) = 0;
  virtual std::optional<std::vector<NodeInfo>> nodes() = 0;
  virtual std::optional<SlurmConfig> config() = 0;
  // Associations of this cluster with the value of `tres` (e.g. "gres/gpu") in GrpTRES.
  virtual std::optional<std::vector<Association>> associations(const std::string& tres) = 0;
  [[nodiscard]] virtual const std::string& last_error() const = 0;
};

class Actuator {
 public:
  virtual ~Actuator() = default;
  virtual bool update(const Update& u) = 0;
  // Requeue a job that is RUNNING (a job already ending is left alone), held until
  // DeepShare places it again.
  virtual bool requeue_hold(const std::string& job) = 0;
  virtual bool cancel(const std::string& job) = 0;
  [[nodiscard]] virtual const std::string& last_error() const = 0;
  // Whether the last failed call failed because the job had already finished (Slurm's
  // ESLURM_ALREADY_DONE "Job has already finished", ESLURM_JOB_FINISHED "Job/step already
  // completing or completed"): an action that lost the race with the job's own end.
  [[nodiscard]] virtual bool last_failure_done() const { return false; }
};

// What a controller is given (not owned: they outlive it).
struct Ports {
  ClusterSource* source = nullptr;
  Actuator* actuator = nullptr;
  driver::Clock* clock = nullptr;
};

}  // namespace ds::slurm
