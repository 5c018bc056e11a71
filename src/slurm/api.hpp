// A thin C++ wrapper over libslurm (Slurm 22.05, Debian libslurm-dev).
//
// Why libslurm and not the CLIs: one in-process RPC per call (no fork of squeue/scontrol
// every 100 ms) and typed fields (gres_detail_str, restart_cnt, admin_comment). Measured
// in ../shared/research/slurm-on-one-machine.md §5.
// Assumptions: slurm_init() reads $SLURM_CONF; the state-to-string helpers are exported by
// libslurm.so.38 but not declared in its headers, so they are declared in api.cpp.
// Jobs are named by their id string ("123", or "123_4" for task 4 of array 123, split off
// or not), which every call here accepts. Not thread-safe: one SlurmApi per thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/gres.hpp"

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

struct NodeInfo {
  std::string name;
  int gpus = 0;
  bool usable = true;  // not down, drained or unresponsive
  std::string state;
  std::vector<std::string> partitions;
};

struct SlurmConfig {
  int kill_wait_s = 30;
  bool accounting = false;  // AccountingStorageType is slurmdbd
  bool enforce_associations = false;
  bool enforce_limits = false;
  std::string job_submit_plugins;
  std::string cluster;
};

// An association as slurmctld holds it (kept in sync with slurmdbd).
struct Association {
  std::string account;  // lower case
  std::string user;     // empty: the account's own association
  std::string partition;
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
};

struct Update {
  std::string job;  // id string
  std::optional<std::string> req_nodes;
  std::optional<std::string> tres_per_node;
  std::optional<std::string> admin_comment;
  std::optional<std::uint32_t> priority;  // 0 hold, INFINITE release, else the value
  std::optional<std::int64_t> begin_s;    // BeginTime (Unix seconds)
};

class SlurmApi {
 public:
  SlurmApi();
  ~SlurmApi();
  SlurmApi(const SlurmApi&) = delete;
  SlurmApi& operator=(const SlurmApi&) = delete;

  // Every job Slurm still lists; nullopt (and last_error) on an RPC failure.
  std::optional<std::vector<JobInfo>> jobs();
  std::optional<std::vector<NodeInfo>> nodes();
  std::optional<SlurmConfig> config();
  // Associations of this cluster with the value of `tres` (e.g. "gres/gpu") in GrpTRES.
  std::optional<std::vector<Association>> associations(const std::string& tres);
  std::optional<std::uint32_t> submit(const SubmitRequest& r);
  bool update(const Update& u);
  bool release(const std::string& job);
  // Requeue a job that is RUNNING (JOB_RUNNING: a job already ending, e.g. cancelled by its
  // user, is left alone), held until DeepShare places it again.
  bool requeue_hold(const std::string& job);
  bool cancel(const std::string& job);
  [[nodiscard]] const std::string& last_error() const { return error_; }
  [[nodiscard]] int last_errno() const { return errno_; }

 private:
  bool fail(const char* what);
  std::string error_;
  int errno_ = 0;
};

}  // namespace ds::slurm
