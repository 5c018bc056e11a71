// The one cluster state both drivers share (DESIGN §2a "one cluster state, two drivers"):
// GPUs and nodes, every job's observable runtime, per-tenant accounting, the changes a
// policy sees in its next snapshot, and the checks that keep a decision from breaking an
// invariant. The simulator (src/sim) and the Slurm controller (src/slurm) drive it
// through the same transitions, so a rule is written once.
//
// It is the only occupancy model of a driver: what runs where, which GPUs are held by work
// outside the policy's jobs, which nodes are usable and which may not share.
// Assumptions:
//  - It owns the job table (indexed by dense JobId): a whole workload (set_jobs), or the jobs
//    an online driver learns one by one (add_job; reuse_job for the slot of a job that left,
//    clear_job when a slot is given back), and the per-job flags a driver changes
//    (set_colocatable). Profiles are the workload's (a span: they never change).
//  - Tenant quantities are milli-GPUs (GPUs x gpu_milli), as model/execution.hpp.
//  - A GPU is "busy" while at least one job (or a block: a node that is not usable, work the
//    engine runs outside the policy's jobs) uses it; shares of one GPU add up in
//    GpuState::milli_used.
//
// Transitions (all take the driver's time `now` and keep every count exact):
//   submit   Future  -> Pending  (entitlement at submit computed; "arrived")
//   start    Pending -> Running  (checked: GPUs free or, shared, memory fits; "started")
//   finish   Running -> Done     ("finished", with its run time)
//   requeue  Running -> Pending  (preempted, by the policy or by the engine; "requeued")
//   withdraw Pending -> Done     (cancelled while waiting; "withdrawn")
//   reject   Pending -> Rejected
//   adopt    Pending|Future -> Running without a start decision (found running; "adopted")
// and, for an online driver (the Slurm controller) that learns jobs while they run:
//   recycle  a slot whose job left is reset to Future for a new job (memory stays flat)
//   unpark   Future  -> Pending  (it became a candidate: "arrived" the first time, then
//                                 "requeued")
//   park     Pending -> Future   (no longer a candidate: "withdrawn", or its "arrived" taken
//                                 back when the policy never saw it)
//   drop     Future  -> Done     (left before it was a candidate; no change for the policy)
//   unstart  Running -> Pending  (a start the cluster did not carry out, rolled back: no run,
//                                 no preemption; "requeued")
//   relocate / confirm_start     (a running job's placement and run start as the cluster
//                                 shows them)
//   start_not_applied / preempt_not_applied  (a decision the driver could not apply: the
//                                 policy is told through "requeued" / "adopted")
//   set_node_usable / set_held_outside / set_no_sharing (nodes that may run nothing now; GPUs
//                                 held by work outside the policy's jobs; nodes where a busy
//                                 GPU shows its memory full, so nothing is colocated there)
// Checks: a decision that would break an invariant is refused with a typed Refused
// (reject_error, preempt_error, placement_error, usage_error, start_error), which the one
// apply() (model/apply.hpp) returns to the driver; the transitions themselves throw
// DecisionError only when a driver calls them out of order (a driver bug).
// A job preempted by the policy is "requeued" with a notice: should it leave before the
// policy's next snapshot, the policy still sees its preemption confirmed, then "withdrawn".
// Waiting reasons (model/snapshot.hpp): a pending job's reason is what the policy last
// stated (note_waits); time is accounted per reason exactly, per job (its longest
// uninterrupted stretch) and in total.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/cluster.hpp"
#include "model/execution.hpp"
#include "model/run_record.hpp"
#include "model/snapshot.hpp"
#include "model/tenant.hpp"

namespace ds {

// A decision that breaks an invariant: a policy bug (the simulator stops on it) or, on
// a real cluster, a decision the controller refuses and counts.
class DecisionError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Why the state refuses a decision.
enum class Refusal : std::uint8_t {
  UnknownJob,              // no such job
  NotPending,              // started or rejected, but not waiting
  NotRunning,              // preempted, but not running
  NoReason,                // rejected without a reason
  BadPlacement,            // an unknown node, a GPU index beyond its node, a wrong GPU count
  BorrowedNotPreemptible,  // on borrowed capacity, but the job cannot be preempted
  NotPreemptible,          // preempted, but the job cannot be preempted
  GpuUnavailable,          // a GPU held outside the policy's jobs (or on a node not usable)
  GpuBusy,                 // a GPU that is not free (and the start does not share)
  MemoryFull,              // shared, but the GPU's memory would overflow
};
const char* to_string(Refusal r);

struct Refused {
  Refusal kind = Refusal::UnknownJob;
  JobId job;
  std::string what;  // e.g. "is started but is not pending" (the job is named by describe())
};

// A tenant's current usage, in milli-GPUs unless named otherwise.
struct TenantUsage {
  std::int64_t held = 0;       // running jobs
  std::int64_t colocated = 0;  // running jobs placed on a partner's GPUs (shared)
  int colocated_jobs = 0;
  std::int64_t borrowed = 0;    // running borrowed jobs
  std::int64_t guaranteed = 0;  // running non-borrowed jobs
  std::int64_t demand = 0;      // pending + running jobs
  std::int64_t queued_entitled = 0;
  int running_jobs = 0;
  int pending_jobs = 0;
  std::int64_t pending_gpus = 0;  // whole GPUs of pending jobs
};

class ClusterState {
 public:
  ClusterState(const Cluster& cluster, std::span<const Tenant> tenants);

  // --- the job table ---------------------------------------------------------------
  // A whole workload's jobs (ids index them) and profiles (JobSpec::profile indexes them).
  void set_jobs(std::vector<JobSpec> jobs, std::span<const Profile> profiles = {});
  // A job learned online: appended (its id is the next one, set in the spec).
  JobId add_job(JobSpec spec);
  // A new job in the slot of one that has left (the slot is recycled: Future again).
  void reuse_job(JobId id, JobSpec spec);
  // The slot of a job that has left is given back: its spec is emptied (memory stays flat).
  void clear_job(JobId id);
  // False: the job may no longer be colocated (e.g. its engine fixed how it holds GPUs).
  void set_colocatable(JobId id, bool colocatable);
  // A running job's run counts as borrowed (preemptible capacity) from now on: its tenant's
  // guarantee was cut below what it runs (an online driver's quota change).
  void set_borrowed(JobId id);
  [[nodiscard]] std::size_t job_count() const { return jobs_.size(); }
  [[nodiscard]] std::span<const JobSpec> jobs() const { return jobs_; }

  // --- transitions -----------------------------------------------------------------
  void submit(JobId id, Time now);
  // Throws DecisionError when the start breaks an invariant (see start_error). The job
  // holds its GPUs from `now`; `running_at` (>= now) is when it starts to run (a real
  // cluster's start latency), which the queueing time of the run counts up to.
  void start(const StartJob& d, Time now, Time running_at);
  // The same for a decision the caller has just checked with start_error().
  void start_checked(const StartJob& d, Time now, Time running_at);
  // --- checks: why a decision cannot be applied now, or nullopt ----------------------
  [[nodiscard]] std::optional<Refused> start_error(const StartJob& d) const;
  // The part of start_error that does not depend on usage: the job is pending, its
  // placement names known nodes and GPUs, as many as it asks for, and it borrows only if it
  // can be preempted.
  [[nodiscard]] std::optional<Refused> placement_error(const StartJob& d) const;
  // The part that does: the GPUs are available, free (or, shared, their memory fits).
  [[nodiscard]] std::optional<Refused> usage_error(const StartJob& d) const;
  [[nodiscard]] std::optional<Refused> reject_error(const RejectJob& d) const;
  [[nodiscard]] std::optional<Refused> preempt_error(JobId id) const;
  // "job 'NAME' <what>", for messages.
  [[nodiscard]] std::string describe(const Refused& r) const;
  void finish(JobId id, Time now);
  // `by_policy`: the policy's own preemption (its "requeued" entry is a notice, kept
  // should the job leave before the next snapshot); false: the cluster requeued it.
  void requeue(JobId id, Time now, bool by_policy = true);
  void withdraw(JobId id, Time now);
  void reject(JobId id, Time now);
  // `restarts` >= 0 sets the job's preemption count (what the cluster says it had).
  void adopt(JobId id, Time now, Placement placement, bool borrowed, bool shared, Time last_start,
             int restarts = -1);
  // --- the online driver (see the header comment) --------------------------------
  void recycle(JobId id);
  void unpark(JobId id, Time now);
  void park(JobId id, Time now);
  void drop(JobId id, Time now);
  void unstart(JobId id, Time now);
  void relocate(JobId id, Placement placement);
  // The cluster runs the started job from `now` (its first run too, if this is it).
  void confirm_start(JobId id, Time now);
  // The policy's start of a pending job was not applied: it is told the job waits again.
  void start_not_applied(JobId id);
  // The policy's preemption of a running job was not applied: the job runs on.
  void preempt_not_applied(JobId id);
  // Whether GPUs of node `n` may be shared (false: a busy GPU shows its memory full).
  void set_no_sharing(NodeId n, bool no_sharing);
  // The tenants grew or changed (same ids; new ones appended).
  void set_tenants(std::span<const Tenant> tenants);
  // Arrivals in submission order (an online driver learns them in another order).
  void order_arrivals();
  // How many changes are listed for the next snapshot, and the jobs they name.
  [[nodiscard]] std::size_t delta_count() const;
  [[nodiscard]] std::vector<JobId> listed() const;
  // Applies the policy's waiting reasons (the last one stated for a job wins); notes for
  // jobs that are not pending are ignored.
  void note_waits(std::span<const WaitNote> notes, Time now);
  // The driver's own reason (held, dependency, ...) for a pending job.
  void set_wait(JobId id, WaitReason reason, Time now);
  // Why a job the engine holds back waits outside the policy's sight (Future, not a
  // candidate): held, a dependency, ... (no time is accounted: it is not in the queue).
  void note_outside(JobId id, WaitReason reason);
  // A running job's current progress rate (the simulator's speed model; 1 = exclusive).
  void set_speed(JobId id, double speed) { rt_[id.index()].speed = speed; }
  // --- nodes ---------------------------------------------------------------------------
  // A node that may run nothing now (down, drained): the policy may use none of its GPUs.
  void set_node_usable(NodeId n, bool usable);
  // The GPUs (flat indices) held by work outside the policy's jobs (a job of another
  // partition, one the driver does not schedule, one of its own that is still ending): the
  // whole set each time; what changed is applied.
  void set_held_outside(std::vector<std::size_t> gpus);

  // --- views ---------------------------------------------------------------------
  // A snapshot over this state with the changes since the last clear_deltas().
  [[nodiscard]] ClusterSnapshot snapshot(Time now) const;
  void clear_deltas();
  // For a fresh policy object (a restarted controller): the next snapshot presents every
  // pending job as arrived and every running job as adopted, in id order, and no other
  // change.
  void present_all();

  [[nodiscard]] const Cluster& cluster() const { return *cluster_; }
  [[nodiscard]] std::span<const Tenant> tenants() const { return tenants_; }
  [[nodiscard]] const JobSpec& spec(JobId id) const { return jobs_[id.index()]; }
  [[nodiscard]] bool node_usable(NodeId n) const { return usable_[n.index()] != 0; }
  [[nodiscard]] bool no_sharing(NodeId n) const { return no_sharing_[n.index()] != 0; }
  // Whether the policy may use GPU g at all (not held outside, its node usable).
  [[nodiscard]] bool gpu_available(std::size_t g) const { return blocked_[g] == 0; }
  // GPUs of node `n` with no job on them (and not blocked).
  [[nodiscard]] int idle_gpus(NodeId n) const { return node_free_[n.index()]; }
  // Whether the GPUs `mask` of node `n` exist and have no job on them (and are not blocked).
  [[nodiscard]] bool gpus_idle(NodeId n, std::uint64_t mask) const;
  [[nodiscard]] const JobRuntime& runtime(JobId id) const { return rt_[id.index()]; }
  [[nodiscard]] std::span<const JobRuntime> runtimes() const { return rt_; }
  [[nodiscard]] const TenantUsage& usage(TenantId t) const { return usage_[t.index()]; }
  [[nodiscard]] std::span<const JobId> jobs_on_gpu(std::size_t gpu) const { return gpu_jobs_[gpu]; }
  [[nodiscard]] const GpuState& gpu(std::size_t g) const { return gpus_[g]; }
  [[nodiscard]] std::span<const JobId> pending() const { return pending_.view(); }
  [[nodiscard]] std::span<const JobId> running() const { return running_.view(); }
  [[nodiscard]] int busy_gpus() const { return busy_; }
  [[nodiscard]] int allocated_gpus() const { return allocated_; }
  [[nodiscard]] std::int64_t pending_gpus() const { return pending_gpus_; }
  // Exact integrals of each tenant's received and entitled GPU time up to the last
  // transition (call touch_all(now) first for "up to now").
  [[nodiscard]] std::span<const TenantTotals> tenant_totals() const { return totals_; }
  void touch_all(Time now);
  // Time pending jobs spent under each reason, up to the last change (close_waits(now)
  // first for "up to now"); per job, its longest uninterrupted stretch.
  [[nodiscard]] const std::array<double, kWaitReasons>& wait_totals() const { return wait_ms_; }
  [[nodiscard]] WaitReason longest_wait_reason(JobId id) const {
    return longest_[id.index()].reason;
  }
  void close_waits(Time now);

  // Calls f(flat GPU index, node) for every GPU of a placement.
  template <class F>
  void for_each_gpu(const Placement& p, F&& f) const {
    for (const auto& a : p) {
      const Node& node = cluster_->nodes[a.node.index()];
      for (std::uint64_t m = a.gpu_mask; m != 0; m &= m - 1)
        f(static_cast<std::size_t>(node.first_gpu + __builtin_ctzll(m)), a.node);
    }
  }

 private:
  // A dense set of job ids with O(1) insert/erase (order unspecified).
  class IdSet {
   public:
    void insert(JobId id);
    void erase(JobId id);
    [[nodiscard]] std::span<const JobId> view() const { return ids_; }

   private:
    std::vector<JobId> ids_;
    std::vector<std::int32_t> pos_;
  };
  struct Stretch {
    WaitReason reason = WaitReason::None;
    Time length = -1;
  };

  static std::int64_t milli(const JobSpec& j) { return std::int64_t{j.gpus} * j.gpu_milli; }
  void touch(TenantId t, Time now);
  void enter_pending(JobId id, Time now);
  void leave_pending(JobId id);
  void occupy(JobId id);
  void release(JobId id);
  void stop_running(JobId id, Time now, bool ran = true);
  void count_running(JobId id, int sign);
  void note_requeued(JobId id, bool notice);
  void note_withdrawn(JobId id);
  void show_memory(std::size_t g, NodeId n);
  void leave_without_running(JobId id, Time now, JobStatus to, const char* what);
  void switch_wait(JobId id, WaitReason r, Time now);
  void fail(JobId id, const std::string& what) const;
  void grow(std::size_t jobs);
  void refresh_block(std::size_t g);
  void set_blocked(std::size_t g, bool blocked);
  [[nodiscard]] const Node& node_of(std::size_t g) const;
  void node_changed(NodeId n) {
    if (node_mark_[n.index()] == epoch_) return;
    node_mark_[n.index()] = epoch_;
    changed_nodes_.push_back(n);
  }

  const Cluster* cluster_;
  std::span<const Tenant> tenants_;
  std::vector<JobSpec> jobs_;
  std::span<const Profile> profiles_;
  std::vector<JobRuntime> rt_;
  std::vector<Stretch> longest_;
  std::vector<std::uint8_t> presented_;  // per job: the policy was told it arrived
  std::vector<std::uint8_t> notice_;     // per job: its "requeued" entry is a preemption's
  std::vector<GpuState> gpus_;
  std::vector<std::int16_t> gpu_free_;
  std::vector<std::vector<JobId>> gpu_jobs_;
  std::vector<std::uint8_t> blocked_;   // per GPU: held outside, or its node is not usable
  std::vector<std::uint8_t> held_;      // per GPU: held by work outside the policy's jobs
  std::vector<std::size_t> held_list_;  // the GPUs with held_ set, ascending
  std::vector<std::uint8_t> usable_;    // per node
  std::vector<std::int32_t> node_free_;
  std::vector<std::uint8_t> no_sharing_;  // per node
  std::vector<std::int64_t> memory_pad_;  // per GPU: memory shown beyond use (no sharing)
  std::vector<TenantUsage> usage_;
  std::vector<TenantTotals> totals_;
  std::vector<Time> touched_;  // per tenant: time its integrals reach
  IdSet pending_, running_;
  std::vector<JobId> arrived_, requeued_, adopted_, withdrawn_;
  std::vector<FinishedJob> finished_;
  // GPU deltas of the next snapshot (ClusterSnapshot::changed_nodes): nodes changed in this
  // epoch (an epoch ends at clear_deltas()), each marked with the epoch it was listed in.
  std::vector<NodeId> changed_nodes_;
  std::vector<std::uint64_t> node_mark_;
  std::uint64_t source_id_;
  std::uint64_t epoch_ = 1;
  std::array<double, kWaitReasons> wait_ms_{};
  int busy_ = 0;
  int allocated_ = 0;
  std::int64_t pending_gpus_ = 0;
};

}  // namespace ds
