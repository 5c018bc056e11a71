// The DeepShare controller for a real Slurm cluster: observe -> snapshot -> policy -> act.
//
// Ports (DESIGN §2): ClusterSource = SlurmApi::jobs/nodes/associations turned into a
// ClusterSnapshot like the simulator's; Actuator = apply() through SlurmApi; Clock = wall
// time x time_scale (persisted in the journal).
//
// What Slurm holds and enforces (docs/slurm.md §2):
//  - jobs of DeepShare's partition pass the submission gate (deploy/slurm/job_submit.lua):
//    their GPU request is in the AdminComment (operators only) and they wait parked
//    (BeginTime 2100), so Slurm starts none of them by itself but still evaluates their
//    dependencies;
//  - a start writes the pin into the AdminComment and gives the job GRES on exactly the
//    GPUs DeepShare chose (gres.hpp: gpu types g0..gN, gpushare slots for colocated jobs),
//    so Slurm's allocation is DeepShare's decision and other partitions see it;
//  - tenants are Slurm accounts, their quotas the associations' GrpTRES (re-read every
//    tenants_refresh_s: `sacctmgr modify` applies without a restart).
//
// Reconciler (assume / confirm / forget), per job:
//  - assume: a decision changes the model at once (a started job is Running, a preempted
//    one Pending) and is recorded as an intent on the job;
//  - confirm: the intent is cleared when Slurm shows its effect. A start is released into
//    Slurm only once Slurm shows its GPUs free (a preempted job has left them), and a
//    preemption is confirmed when Slurm shows the job pending again;
//  - forget: a start Slurm has not carried out within KillWait + start_margin_s is rolled
//    back (the job is parked again and handed back to the policy); a preemption that did
//    not happen in that time is a failed decision: counted, logged, and the job is running
//    again in the model, so its GPUs are never handed to anyone else.
// Every Slurm action is idempotent and re-issued until confirmed. A restarted controller
// rebuilds its state from Slurm (records, parked/released/held state), so it loses no job
// and starts none twice.
//
// Candidates: a pending job is handed to the policy only when Slurm would let it run now:
// not held by its user, dependencies satisfied, its --begin passed, its array's %N
// throttle not reached, and (for a job that already ran: its GRES request is fixed) its
// GPU indices idle on some node. Jobs that stop being candidates are withdrawn.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/snapshot.hpp"
#include "model/workload.hpp"
#include "policy/policy.hpp"
#include "slurm/api.hpp"
#include "slurm/config.hpp"
#include "slurm/gres.hpp"
#include "slurm/log.hpp"
#include "slurm/record.hpp"

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

// BeginTime the gate gives a job that waits for DeepShare (2100-01-01T00:00:00Z).
constexpr std::int64_t kParkedBegin = 4102444800;

struct ControllerCounters {
  std::uint64_t cycles = 0;
  std::uint64_t applied = 0;
  std::uint64_t failed = 0;
  std::uint64_t starts = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t preemptions_failed = 0;
  std::uint64_t rollbacks = 0;
  std::uint64_t deferrals = 0;
  std::uint64_t untrusted_pins = 0;
  std::uint64_t bad_records = 0;
  std::uint64_t ungated = 0;
  std::uint64_t refused = 0;
  std::uint64_t observe_errors = 0;
  std::uint64_t tenant_reloads = 0;
  double cycle_seconds_sum = 0;
  double cycle_seconds_max = 0;
  double cycle_seconds_last = 0;
};

class Controller {
 public:
  // `clock` is used unless the journal holds one from an earlier run.
  Controller(ControllerConfig config, Log& log, ControllerClock clock);
  ~Controller();

  // Loads the partition's nodes, Slurm's settings and the tenants, builds the policy;
  // throws InputError on a bad setup.
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
  // Identity of a job: (job id or array id) << 32 | array task (kNoTask for plain jobs);
  // an array task keeps it when Slurm splits the task into a record of its own.
  using Key = std::uint64_t;
  // One job as Slurm shows it this cycle (an unsplit array task shares its meta record).
  struct View {
    const JobInfo* j = nullptr;
    Key key = 0;
    std::string ref;  // "123" or "123_4"
    std::uint32_t array_job = 0;
    Record record;
  };
  struct Rec {
    Key key = 0;
    std::string ref;
    std::uint32_t array_job = 0;
    Intent intent = Intent::None;
    Pin pin;
    Request request;
    GresRequest fixed;  // Slurm's GRES request once DeepShare wrote it
    GresKind start_kind = GresKind::Whole;
    bool write_request = false;
    bool released = false;
    bool arrived_once = false;
    std::int64_t intent_wall = 0;
    std::int64_t release_wall = 0;
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
    bool preempt_notice = false;  // its pending `requeued` delta is a preemption's
  };
  static Key key_of(const JobInfo& j) {
    return j.array_job != 0 && j.array_task != kNoTask ? (Key{j.array_job} << 32 | j.array_task)
                                                       : (Key{j.id} << 32 | kNoTask);
  }

  // controller.cpp: lifecycle, tenants, snapshot
  void load_tenants(bool at_init);
  void rebuild_policy();
  TenantId tenant_of(const std::string& account);
  void build_gpu_state(const std::vector<JobInfo>& jobs);
  Decisions decide();
  void journal(const std::string& line);
  void load_clock_from_journal();
  [[nodiscard]] Time now() const { return clock_.at(wall_); }
  [[nodiscard]] std::int64_t timeout_ms() const;

  // reconcile.cpp: observation
  void observe(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes);
  std::vector<View> views_of(const std::vector<JobInfo>& jobs);
  void observe_new(const View& v);
  void observe_known(JobId id, const View& v);
  bool candidate(const Rec& rec, const View& v) const;
  bool fixed_gpus_free(const Rec& rec) const;
  void become_candidate(JobId id);
  void become_waiting(JobId id);
  void notify_withdrawn(JobId id);
  void notify_requeued(JobId id, bool preempt_notice);
  void update_waiting(JobId id, const View& v);
  void vanish(JobId id);
  void finish(JobId id);
  void withdraw(JobId id);
  void requeued_by_others(JobId id, const View& v);
  void adopt_running(JobId id, const View& v);
  void preempt_failed(JobId id, const std::string& why);
  Placement placement_of(const JobInfo& j) const;
  void refuse(const View& v, const std::string& why);
  void park(const View& v);

  // actuator.cpp: actions
  void apply(Decisions& d);
  bool start(StartJob& s, std::unordered_set<std::size_t>& taken,
             const std::unordered_set<std::size_t>& blocked);
  bool try_start(JobId id);
  bool gpus_free_in_slurm(const Rec& rec) const;
  void rollback_start(JobId id, const char* why);
  bool preempt(JobId id);
  void note_requeue(Rec& rec);
  bool must_wait_for_revocation(const Rec& rec) const;
  void reject(const RejectJob& r);
  std::string record_text(const Rec& rec, const View* v, bool with_pin) const;

  ControllerConfig cfg_;
  Log& log_;
  ControllerClock clock_;
  std::unique_ptr<SlurmApi> api_;
  std::unique_ptr<Policy> policy_;
  PolicyOptions options_;
  SlurmConfig slurm_;
  Cluster cluster_;
  std::vector<Tenant> tenants_;
  std::unordered_map<std::string, std::size_t> account_tenant_;
  std::int64_t tenants_loaded_wall_ = 0;
  bool tenants_added_ = false;
  std::unordered_map<std::string, std::size_t> node_index_;
  std::vector<bool> node_usable_;
  std::vector<bool> node_shared_;  // also in another partition: no colocation there
  std::vector<JobSpec> jobs_;
  std::vector<JobRuntime> rt_;
  std::vector<Rec> recs_;
  std::vector<std::string> users_;
  std::unordered_map<std::string, std::uint32_t> user_ids_;
  std::unordered_map<Key, JobId> by_key_;
  std::unordered_map<Key, View> views_;                 // this cycle's observation
  std::unordered_map<std::string, NodeUse> slurm_use_;  // GPUs Slurm has allocated, per node
  std::unordered_map<std::uint32_t, int> array_room_;   // %N throttle: tasks that may still go
  std::set<Key> reported_;   // jobs whose bad record / refusal was logged
  std::set<Key> untrusted_;  // jobs whose Comment carried pin keys (logged once)
  std::vector<GpuState> gpus_;
  std::vector<std::int16_t> gpu_free_;
  std::vector<std::int32_t> node_free_;
  std::vector<JobId> pending_, running_, arrived_, requeued_, adopted_, withdrawn_;
  std::vector<FinishedJob> finished_;
  std::int64_t wall_ = 0;
  std::int64_t decision_seq_ = 0;
  std::FILE* journal_ = nullptr;
  ControllerCounters counters_;
  mutable std::mutex mu_;  // guards the state read by metrics_text()
};

}  // namespace ds::slurm
