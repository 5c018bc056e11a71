// A thin C++ wrapper over libslurm (Slurm 22.05, Debian libslurm-dev).
//
// Why libslurm and not the CLIs: one in-process RPC per call (no fork of squeue/scontrol
// every 100 ms), typed fields (gres_detail_str, restart_cnt, comment), and change-only
// loads (slurm_load_jobs with the last update time). Measured in
// ../shared/research/slurm-on-one-machine.md §5.
// Assumptions: slurm_init() reads $SLURM_CONF; the state-to-string helpers are exported by
// libslurm.so.38 but not declared in its headers, so they are declared in api.cpp.
// Not thread-safe: one SlurmApi per thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ds::slurm {

enum class JobState : std::uint8_t {
  Pending,
  Running,
  Suspended,
  Completing,
  Completed,
  Failed,
  Cancelled,
  Other
};

struct JobInfo {
  std::uint32_t id = 0;
  std::string name;
  std::string account;  // lower case (Slurm folds account names)
  std::string user;
  std::string partition;
  JobState state = JobState::Other;
  std::string reason;
  bool held = false;  // priority 0 (held by user or admin)
  std::uint32_t priority = 0;
  std::uint32_t restarts = 0;
  std::int64_t submit_s = 0, start_s = 0, end_s = 0;
  std::vector<std::string> nodes;                // allocated nodes, expanded
  std::map<std::string, std::uint64_t> gpu_idx;  // node -> Slurm's GPU index mask
  std::string tres_per_node;                     // e.g. "gres:gpu:2"
  std::string comment;
  std::uint32_t num_nodes = 1;
  [[nodiscard]] bool terminal() const {
    return state == JobState::Completed || state == JobState::Failed ||
           state == JobState::Cancelled || state == JobState::Other;
  }
};

struct NodeInfo {
  std::string name;
  int gpus = 0;
  bool usable = true;  // not down, drained or unresponsive
  std::string state;
  std::vector<std::string> partitions;
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
  bool hold = true;
  bool requeue = true;
};

struct Update {
  std::uint32_t job = 0;
  std::optional<std::string> req_nodes;
  std::optional<std::string> tres_per_node;
  std::optional<std::string> comment;
  std::optional<std::uint32_t> priority;  // 0 hold, INFINITE release, else the value
  bool start_now = false;                 // begin_time = now (skips the requeue wait)
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
  std::optional<std::uint32_t> submit(const SubmitRequest& r);
  bool update(const Update& u);
  bool release(std::uint32_t job);
  bool hold(std::uint32_t job);
  bool requeue_hold(std::uint32_t job);
  bool cancel(std::uint32_t job);
  [[nodiscard]] const std::string& last_error() const { return error_; }
  [[nodiscard]] int last_errno() const { return errno_; }

 private:
  bool fail(const char* what);
  std::string error_;
  int errno_ = 0;
};

// "gpu:2(IDX:0-1)" -> mask 0b11; "mps:50(IDX:2)" -> 0b100; 0 when absent.
std::uint64_t parse_gpu_idx(const std::string& gres_detail);
// "gpu:4,mps:400" or "gpu:tesla:4(S:0)" -> 4.
int parse_gpu_count(const std::string& gres);
// "gres:gpu:2" or "gres/gpu:2" or "gpu:2" -> 2; 0 when no gpu.
int parse_tres_gpus(const std::string& tres_per_node);

}  // namespace ds::slurm
