// The DeepShare controller for a real Slurm cluster: observe -> snapshot -> policy -> act.
//
// Ports (DESIGN §2): ClusterSource = SlurmApi::jobs/nodes turned into a ClusterSnapshot
// exactly like the simulator's (same JobSpec/JobRuntime/GpuState arrays); Actuator =
// apply() through SlurmApi; Clock = wall time x time_scale (persisted in the journal).
//
// Reconciler (assume / confirm / forget):
//  - assume: a decision takes effect in the model at once (a started job is Running, a
//    preempted one Pending) and is recorded as an intent on the job;
//  - confirm: the intent is cleared when Slurm shows its effect (RUNNING / requeued PENDING);
//  - forget: an intent Slurm does not honour within start_timeout is rolled back (the job
//    is held again and handed back to the policy as requeued).
// Every Slurm action is idempotent: the pin (placement, flags, restart count) is written to
// the job's Comment before the release, and re-issued until confirmed. A restarted
// controller rebuilds its whole state from Slurm (pins in comments, held/released state),
// so it loses no job and starts none twice.
//
// Assumptions: DeepShare owns one partition; every job there waits held (priority 0)
// until DeepShare releases it (jobs submitted without --hold are held at first sight);
// tenants are Slurm accounts; a job's GPUs = GPUs per node (tres_per_node) x nodes; GPUs
// of jobs outside the partition (or not mapped to a tenant) are treated as occupied.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/snapshot.hpp"
#include "model/workload.hpp"
#include "policy/policy.hpp"
#include "slurm/api.hpp"
#include "slurm/config.hpp"
#include "slurm/log.hpp"
#include "slurm/pin.hpp"

namespace ds::slurm {

struct ControllerClock {
  std::int64_t wall0_ms = 0;  // wall time (Unix ms) at controller time `origin`
  Time origin = 0;
  double scale = 1.0;
  [[nodiscard]] Time at(std::int64_t wall_ms) const {
    return origin + static_cast<Time>(static_cast<double>(wall_ms - wall0_ms) * scale);
  }
};

std::int64_t wall_now_ms();

struct ControllerCounters {
  std::uint64_t cycles = 0;
  std::uint64_t applied = 0;
  std::uint64_t failed = 0;
  std::uint64_t starts = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t rollbacks = 0;
  std::uint64_t observe_errors = 0;
  double cycle_seconds_sum = 0;
  double cycle_seconds_max = 0;
  double cycle_seconds_last = 0;
};

class Controller {
 public:
  // `clock` is used unless the journal holds one from an earlier run.
  Controller(ControllerConfig config, Log& log, ControllerClock clock);
  ~Controller();

  // Loads the partition's nodes and builds the policy; throws InputError on a bad setup.
  void init();
  // One cycle: observe, reconcile, decide, apply. False when Slurm could not be read.
  bool step();
  // Cycles every poll_ms until `stop` becomes true.
  void run(const std::atomic<bool>& stop);
  // Prometheus text exposition of the current state (thread-safe).
  std::string metrics_text() const;

  [[nodiscard]] const ControllerClock& clock() const { return clock_; }
  [[nodiscard]] std::size_t jobs_known() const { return jobs_.size(); }

 private:
  enum class Intent : std::uint8_t { None, Start, Preempt };
  struct Rec {
    std::uint32_t slurm_id = 0;
    Intent intent = Intent::None;
    Pin pin;
    bool released = false;
    std::int64_t intent_wall = 0;
    std::int64_t last_retry_wall = 0;
    std::uint32_t restarts = 0;
    bool seen = false;
    // The nodes of a run that was requeued, and when the job was first seen pending again.
    // slurmd refuses to launch the job on such a node with a credential created in the
    // same second as the revocation ("Job credential revoked": Slurm compares whole
    // seconds), which kills the job; so such a start waits until a second has passed.
    std::vector<std::string> requeued_from;
    std::int64_t pending_again_wall = 0;
    bool start_deferred = false;
  };

  void observe(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes);
  void observe_new(const JobInfo& j);
  void observe_known(JobId id, const JobInfo& j);
  void vanish(JobId id);
  void finish(JobId id);
  void withdraw(JobId id);
  void requeued_by_others(JobId id, const JobInfo& j);
  void adopt_running(JobId id, const JobInfo& j, const std::optional<Pin>& pin);
  Placement placement_of(const JobInfo& j, const std::optional<Pin>& pin) const;
  void build_gpu_state(const std::vector<JobInfo>& jobs);
  Decisions decide();
  void apply(Decisions& d, const std::unordered_map<std::uint32_t, const JobInfo*>& by_id);
  bool try_start(JobId id, const JobInfo* j);
  void start(StartJob& s, const JobInfo* j);
  void preempt(JobId id);
  void note_requeue(Rec& rec);
  bool must_wait_for_revocation(const Rec& rec) const;
  void reject(const RejectJob& r);
  void ensure_held(const JobInfo& j);
  const TenantConfig* tenant_of(const std::string& account) const;
  void journal(const std::string& line);
  void load_clock_from_journal();
  [[nodiscard]] Time now() const { return clock_.at(wall_); }

  ControllerConfig cfg_;
  Log& log_;
  ControllerClock clock_;
  std::unique_ptr<SlurmApi> api_;
  std::unique_ptr<Policy> policy_;
  PolicyOptions options_;
  Cluster cluster_;
  std::vector<Tenant> tenants_;
  std::unordered_map<std::string, std::size_t> node_index_;
  std::vector<bool> node_usable_;
  std::vector<JobSpec> jobs_;
  std::vector<JobRuntime> rt_;
  std::vector<Rec> recs_;
  std::vector<std::string> users_;
  std::unordered_map<std::string, std::uint32_t> user_ids_;
  std::unordered_map<std::uint32_t, JobId> by_slurm_;
  std::vector<GpuState> gpus_;
  std::vector<std::int16_t> gpu_free_;
  std::vector<std::int32_t> node_free_;
  std::vector<JobId> pending_, running_, arrived_, requeued_, adopted_, withdrawn_;
  std::vector<FinishedJob> finished_;
  std::int64_t wall_ = 0;
  std::int64_t decision_seq_ = 0;
  std::FILE* journal_ = nullptr;
  bool first_cycle_ = true;
  ControllerCounters counters_;
  mutable std::mutex mu_;  // guards the state read by metrics_text()
};

}  // namespace ds::slurm
