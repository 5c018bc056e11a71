// The DeepShare controller for a real Slurm cluster: observe -> snapshot -> policy -> act.
//
// Ports (DESIGN §2, ports.hpp): the controller reads the cluster through a ClusterSource,
// acts through an Actuator and takes wall time from a Clock; it never calls libslurm itself.
// SlurmApi implements the ports for a real cluster, FakeCluster (fake_cluster.hpp) in
// process for the unit tests. Controller time = wall time x time_scale (persisted in the
// journal).
//
// Leadership (lease.hpp): with a Lease, the controller acts only while it holds it; every
// record it writes carries its epoch (e=), and a record with a newer epoch than its own
// means another controller took over: it stops acting for good (deposed()).
//
// Bounded cost: the job table is read change-only (unchanged tables are not re-read or
// re-converted; a cycle with nothing to reconcile skips the reconciler), and a job that has left
// (finished, withdrawn, rejected) is compacted out once the policy has seen it leave: its id is
// reused for a later job (the policy contract allows it), so memory follows the jobs Slurm lists,
// not every job ever seen. What the predictor learns from a finished job lives in the policy as
// statistics.
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
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "driver/clock.hpp"
#include "driver/lease.hpp"
#include "driver/log.hpp"
#include "driver/prometheus.hpp"
#include "model/cluster_state.hpp"
#include "model/snapshot.hpp"
#include "model/workload.hpp"
#include "policy/policy.hpp"
#include "slurm/config.hpp"
#include "slurm/gres.hpp"
#include "slurm/ops.hpp"
#include "slurm/ports.hpp"
#include "slurm/record.hpp"

namespace ds::slurm {

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
  std::uint64_t config_reloads = 0;
  std::uint64_t config_reload_errors = 0;
  std::uint64_t completions = 0;
  std::uint64_t cancellations = 0;
  std::uint64_t unchanged_reads = 0;    // job table reads answered "no change"
  std::uint64_t stale_reads = 0;        // job tables older than one already seen (ignored)
  std::uint64_t fenced = 0;             // actions not sent: not (or no longer) the leader
  std::uint64_t compacted = 0;          // jobs compacted out of memory
  std::uint64_t quiet_cycles = 0;       // cycles that had nothing to reconcile
  std::uint64_t actions_sent = 0;       // actions handed to the Actuator
  std::uint64_t invalid_decisions = 0;  // decisions ClusterState refused (skipped, logged)
  driver::Histogram cycle_seconds{driver::latency_buckets()};  // observe + decide + apply
  std::int64_t last_observe_ms = 0;               // Unix ms of the last successful read of Slurm
  std::vector<std::uint64_t> tenant_preemptions;  // DeepShare's own preemptions, per tenant
};

class Controller {
 public:
  // `clock` is used unless the journal holds one from an earlier run; `ports` outlive it.
  Controller(ControllerConfig config, driver::Log& log, driver::DriverClock clock, Ports ports);
  ~Controller();

  // Loads the partition's nodes, Slurm's settings and the tenants, builds the policy;
  // throws InputError on a bad setup.
  void init();
  // Act only while holding `lease` (acquired by the caller; it outlives the controller),
  // and stamp its epoch into every record written. Call before init().
  void set_lease(driver::Lease* lease) { lease_ = lease; }
  // One cycle: observe, reconcile, decide, apply. False when Slurm could not be read, or
  // when this controller is not (or no longer) the leader.
  bool step();
  // Another controller took over (a newer epoch in Slurm, or the lease superseded): this
  // one stopped acting for good; run() returns.
  [[nodiscard]] bool deposed() const { return deposed_; }
  // Cycles every poll_ms until `stop` becomes true.
  void run(const std::atomic<bool>& stop);
  // Prometheus text exposition of the current state (thread-safe).
  std::string metrics_text() const;
  // Asks the running loop to re-read the configuration file (SIGHUP; thread- and
  // signal-safe: only sets a flag). reload.cpp.
  void request_reload() { reload_requested_ = true; }
  // Refuses a policy that cannot run on a real cluster (the oracles), naming those that can.
  static void check_policy(const std::string& name);
  // Applies what can change live from `next`, logs what needs a restart (reload.cpp).
  void reload(const ControllerConfig& next);
  // Where a reload reads the configuration (default: the file it came from); the CLI adds
  // its command-line overrides.
  std::function<ControllerConfig()> reload_source;

  [[nodiscard]] const driver::DriverClock& clock() const { return clock_; }
  // Ids of jobs that left are reused only once this many slots exist (default 4096):
  // until then ids follow arrival order as in the simulator, whose policies break ties by
  // id (replays stay comparable); beyond it memory stays bounded.
  void set_id_reuse_after(std::size_t slots) { reuse_ids_after_ = slots; }
  // Job records held in memory (live jobs plus reusable slots).
  [[nodiscard]] std::size_t jobs_known() const { return jobs_.size(); }
  [[nodiscard]] const ControllerCounters& counters() const { return counters_; }
  // Where the Slurm ports record each RPC's latency and outcome (SlurmApi::set_stats;
  // deepshare_slurm_rpc_* in the metrics).
  [[nodiscard]] driver::RpcStats& rpc_stats() { return rpc_; }
  // Builds the policy instead of the registry (tests: a policy that errs). Before init().
  using PolicyFactory = std::function<std::unique_ptr<Policy>(const PolicyContext&)>;
  void set_policy_factory(PolicyFactory f) { policy_factory_ = std::move(f); }

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
    bool free = false;      // a compacted slot, waiting for reuse
    bool vanished = false;  // left because Slurm no longer listed it
  };
  static Key key_of(const JobInfo& j) {
    return j.array_job != 0 && j.array_task != kNoTask ? (Key{j.array_job} << 32 | j.array_task)
                                                       : (Key{j.id} << 32 | kNoTask);
  }

  // reload.cpp: SIGHUP, the policy check, log context
  void reload_if_requested();
  [[nodiscard]] driver::Log::Fields who(JobId id) const;

  // controller.cpp: lifecycle, tenants, snapshot
  void load_tenants(bool at_init);
  void report_tree(std::vector<std::string> problems);
  void rebuild_policy();
  std::unique_ptr<Policy> build_policy();
  TenantId tenant_of(const std::string& account);
  // GPUs Slurm holds for jobs the model does not run, and nodes that are down or shared
  // with other partitions, into the ClusterState.
  void sync_blocked(const std::vector<JobInfo>& jobs);
  // A decision ClusterState refuses: logged, counted, skipped.
  void invalid_decision(const char* kind, JobId id, const std::string& error);
  [[nodiscard]] const JobRuntime& rt(JobId id) const { return state_->runtime(id); }
  Decisions decide();
  void journal(const std::string& line);
  void compact();
  void depose(const std::string& why);
  // The Actuator behind the fence: nothing is sent unless this controller is the leader;
  // every AdminComment written carries the lease epoch.
  [[nodiscard]] bool acting();
  [[nodiscard]] bool may_send();
  bool act_update(Update u);
  bool act_requeue(const std::string& ref);
  bool act_cancel(const std::string& ref);
  [[nodiscard]] const std::string& act_error() const;
  void load_clock_from_journal();
  [[nodiscard]] Time now() const { return cycle_now_; }
  // Sets wall_ and the cycle's time (reload.cpp: the policy's wake_at).
  void set_wall(std::int64_t wall_ms);
  [[nodiscard]] std::int64_t timeout_ms() const;

  // reconcile.cpp: observation
  void observe(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes);
  std::vector<View> views_of(const std::vector<JobInfo>& jobs);
  void observe_new(const View& v);
  void observe_known(JobId id, const View& v);
  bool candidate(const Rec& rec, const View& v) const;
  bool fixed_gpus_free(const Rec& rec) const;
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
  enum class Applied : std::uint8_t { Started, Deferred, Ignored };
  Applied start(StartJob& s, std::unordered_set<std::size_t>& taken,
                const std::unordered_set<std::size_t>& blocked,
                const std::vector<std::uint16_t>& jobs_on);
  bool try_start(JobId id);
  bool gpus_free_in_slurm(const Rec& rec) const;
  void rollback_start(JobId id, const char* why);
  bool preempt(JobId id);
  void note_requeue(Rec& rec);
  void park_again(const Rec& rec);
  bool must_wait_for_revocation(const Rec& rec) const;
  void reject(const RejectJob& r);
  std::string record_text(const Rec& rec, const View* v, bool with_pin) const;

  ControllerConfig cfg_;
  driver::Log& log_;
  driver::DriverClock clock_;
  ClusterSource* source_;
  Actuator* act_;
  driver::Clock* wall_clock_;
  driver::Lease* lease_ = nullptr;
  bool deposed_ = false;
  std::string fence_error_;
  std::vector<JobInfo> table_;  // the last job table read (views_ point into it)
  std::int64_t table_update_s_ = 0;
  std::vector<JobId> free_ids_;  // compacted slots, reused for new jobs
  std::size_t reuse_ids_after_ = 4096;
  bool settled_ = false;              // the last cycle changed nothing (see step())
  int open_intents_ = 0;              // starts and preemptions in flight (as of the last compact)
  std::int64_t next_timer_wall_ = 0;  // earliest --begin of a waiting job (wall ms)
  // Keys of compacted jobs Slurm still lists (as finished, until MinJobAge): never taken
  // for new jobs, even from a late duplicate of an older table.
  std::unordered_set<Key> left_;
  std::unique_ptr<Policy> policy_;
  PolicyFactory policy_factory_;
  PolicyOptions options_;
  SlurmConfig slurm_;
  Cluster cluster_;
  std::vector<Tenant> tenants_;
  std::unordered_map<std::string, std::size_t> account_tenant_;
  std::int64_t tenants_loaded_wall_ = 0;
  std::vector<std::string> tree_problems_;  // the tenant tree's, as last reported
  bool tenants_added_ = false;
  std::unordered_map<std::string, std::size_t> node_index_;
  std::vector<bool> node_usable_;
  std::vector<bool> node_shared_;  // also in another partition: no colocation there
  // The job specs (ClusterState's job table views them) and the controller's own record of
  // each; ids index both, and the state.
  std::vector<JobSpec> jobs_;
  std::vector<Rec> recs_;
  std::unique_ptr<ClusterState> state_;  // GPUs, job runtimes, tenant usage, deltas
  std::vector<std::string> users_;
  std::unordered_map<std::string, std::uint32_t> user_ids_;
  std::unordered_map<Key, JobId> by_key_;
  std::unordered_map<Key, View> views_;                 // this cycle's observation
  std::unordered_map<std::string, NodeUse> slurm_use_;  // GPUs Slurm has allocated, per node
  std::unordered_map<std::uint32_t, int> array_room_;   // %N throttle: tasks that may still go
  std::set<Key> reported_;   // jobs whose bad record / refusal was logged
  std::set<Key> untrusted_;  // jobs whose Comment carried pin keys (logged once)
  std::int64_t wall_ = 0;
  Time cycle_now_ = std::numeric_limits<Time>::min();  // this cycle's time (controller clock)
  Time wake_at_ = kNever;  // the earliest time a policy asked for a cycle at, still ahead
  std::int64_t decision_seq_ = 0;
  std::FILE* journal_ = nullptr;
  ControllerCounters counters_;
  driver::RpcStats rpc_;
  std::atomic<bool> reload_requested_{false};
  mutable std::mutex mu_;  // guards the state read by metrics_text()
};

}  // namespace ds::slurm
