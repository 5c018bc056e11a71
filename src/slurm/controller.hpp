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
// Parts (docs/architecture.md, "Online drivers"): the controller keeps the loop, the lease
// and the logs; the driver core (driver/core.hpp: ClusterState, JobBook, Reconciler, the
// policy, apply()) does what no engine decides; the Slurm adapter (adapter.hpp) translates
// Slurm's records and RPCs; Tenants reads the accounts and quotas.
//
// Reconciler (assume / confirm / forget, driver/reconciler.hpp), per job:
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
#include <string>
#include <vector>

#include "driver/clock.hpp"
#include "driver/core.hpp"
#include "driver/fence.hpp"
#include "driver/journal.hpp"
#include "driver/lease.hpp"
#include "driver/log.hpp"
#include "driver/prometheus.hpp"
#include "policy/policy.hpp"
#include "slurm/adapter.hpp"
#include "slurm/config.hpp"
#include "slurm/ops.hpp"
#include "slurm/ports.hpp"
#include "slurm/tenants.hpp"

namespace ds::slurm {

// Every counter of the controller and its parts, in one value (metrics_text, tests).
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
  void set_lease(driver::Lease* lease) { fence_.set_lease(lease); }
  // One cycle: observe, reconcile, decide, apply. False when Slurm could not be read, or
  // when this controller is not (or no longer) the leader.
  bool step();
  // Another controller took over (a newer epoch in Slurm, or the lease superseded): this
  // one stopped acting for good; run() returns.
  [[nodiscard]] bool deposed() const { return fence_.deposed(); }
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

  [[nodiscard]] const driver::DriverClock& clock() const { return loop_.clock; }
  // Ids of jobs that left are reused only once this many slots exist (default 4096):
  // until then ids follow arrival order as in the simulator, whose policies break ties by
  // id (replays stay comparable); beyond it memory stays bounded.
  void set_id_reuse_after(std::size_t slots);
  // Job records held in memory (live jobs plus reusable slots).
  [[nodiscard]] std::size_t jobs_known() const { return core_ ? core_->book().size() : 0; }
  [[nodiscard]] ControllerCounters counters() const;
  // The driver core (tests: its drift check).
  [[nodiscard]] const driver::Core& core() const { return *core_; }
  // Where the Slurm ports record each RPC's latency and outcome (SlurmApi::set_stats;
  // deepshare_slurm_rpc_* in the metrics).
  [[nodiscard]] driver::RpcStats& rpc_stats() { return rpc_; }
  // Builds the policy instead of the registry (tests: a policy that errs). Before init().
  using PolicyFactory = std::function<std::unique_ptr<Policy>(const PolicyContext&)>;
  void set_policy_factory(PolicyFactory f) { policy_.factory = std::move(f); }

 private:
  // What the loop keeps from cycle to cycle.
  struct Loop {
    driver::DriverClock clock;
    std::int64_t wall = 0;
    Time now = std::numeric_limits<Time>::min();  // this cycle's time (controller clock)
    SlurmConfig slurm;
    std::vector<JobInfo> table;  // the last job table read (the observation points into it)
    std::int64_t table_update_s = 0;
    driver::Observation observation;
    bool settled = false;        // the last cycle changed nothing (see step())
    bool tenants_added = false;  // the policy is rebuilt after this cycle's observation
    std::size_t reuse_after = 4096;
  };
  // The loop's own counters (the parts count the rest).
  struct LoopCounters {
    std::uint64_t cycles = 0, observe_errors = 0, unchanged_reads = 0, stale_reads = 0;
    std::uint64_t quiet_cycles = 0, tenant_reloads = 0, config_reloads = 0;
    std::uint64_t config_reload_errors = 0;
    driver::Histogram cycle_seconds{driver::latency_buckets()};
    std::int64_t last_observe_ms = 0;
  };
  struct PolicyChoice {
    PolicyFactory factory;  // unset: the registry's (cfg_.policy)
    PolicyOptions options;
  };

  // controller.cpp: lifecycle, the cycle
  void check_slurm_setup();
  void load_tenants(bool at_init);
  void rebuild_policy();
  std::unique_ptr<Policy> build_policy();
  // Reads Slurm: the job table (change-only) and, when due, the nodes. nullopt: unreadable.
  struct Read {
    bool fresh = false;
    std::optional<std::vector<NodeInfo>> nodes;
  };
  std::optional<Read> read_slurm();
  [[nodiscard]] bool requeued_by_slurm() const;
  void reconcile(const Read& read);
  // Sets the cycle's time (reload.cpp: the policy's wake_at).
  void set_wall(std::int64_t wall_ms);
  [[nodiscard]] std::int64_t timeout_ms() const;

  // reload.cpp: SIGHUP
  void reload_if_requested();

  ControllerConfig cfg_;
  driver::Log& log_;
  Ports ports_;
  driver::Journal journal_;
  driver::Fence fence_;
  Tenants tenants_;
  std::unique_ptr<SlurmAdapter> adapter_;  // built in init() (it reads the nodes)
  std::unique_ptr<driver::Core> core_;     // built on the adapter's cluster
  PolicyChoice policy_;
  Loop loop_;
  LoopCounters counters_;
  driver::RpcStats rpc_;
  std::atomic<bool> reload_requested_{false};
  mutable std::mutex mu_;  // guards the state read by metrics_text()
};

}  // namespace ds::slurm
