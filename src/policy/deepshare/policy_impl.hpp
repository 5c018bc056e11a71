// The DeepShare policy object (private to src/policy/deepshare): its state and its
// phases. deepshare.cpp holds the bookkeeping (ingest, assurance, starting jobs);
// phases.cpp the placement phases (entitled, quota, lending, borrowed, share). The
// algorithm, phase by phase, is in deepshare.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "policy/deepshare/assurance.hpp"
#include "policy/deepshare/config.hpp"
#include "policy/deepshare/lending.hpp"
#include "policy/deepshare/reclaim.hpp"
#include "policy/interference/interference.hpp"
#include "policy/placement.hpp"
#include "policy/policy.hpp"
#include "policy/predict/predictor.hpp"

namespace ds::deepshare {

// Shared: colocated on a partner's GPUs; holds no GPUs of its own, so it counts against
// neither quota nor lent capacity, and is never a reclaim victim.
enum class Run : std::uint8_t { None, Guaranteed, Borrowed, Shared };

// Queue keys of jobs that have run long (no longer fresh) start here (deepshare.cpp, key()).
inline constexpr double kLongRun = 1e15;

// Nodes being drained for a wide job (drain.cpp).
struct Drain {
  JobId job;
  std::vector<NodeId> nodes;
  Time since = 0;
};

// A running job's next checkpoint (checkpoints.cpp); `run` tells stale entries apart.
struct CheckpointEntry {
  Time at = 0;
  JobId job;
  std::uint64_t run = 0;
  Time until = 0;  // in the window: surely still cheap before this (no need to look)
  bool operator>(const CheckpointEntry& o) const {
    return at != o.at ? at > o.at : job != o.job ? o.job < job : run > o.run;
  }
};

// What a tenant's last queue scan saw (phases.cpp): nothing to retry until capacity is
// freed (`epoch`), its queue changes, lent capacity grows or time makes a job eligible.
struct ScanMark {
  bool valid = false;
  std::uint64_t epoch = 0, queue = 0;
  int available = 0;
  Time until = kNever;
};

// Borrowed GPUs (milli-GPUs) by the predicted end of their jobs: how many come back within
// a horizon, in O(changes) per query (jobs past their predicted end count as coming back).
class EndIndex {
 public:
  void add(Time end, int share);
  void remove(Time end, int share);
  int within(Time now, Time horizon);  // shares ending by now + horizon (now never decreases)

 private:
  std::map<Time, int> ends_;
  int overdue_ = 0;  // entries that ended before mark_
  Time mark_ = -kNever;
};

// GPU quantities of tenants are in milli-GPUs (GPUs x gpu_milli): a fractional request
// holds the share of a GPU it asks for, in quota as in lending.
struct TenantState {
  // pending, entitled at submit (FIFO: by submit time, then id; an online driver may reuse
  // the id of a job that left, so ids alone are not arrival order)
  std::set<std::pair<Time, JobId>> entitled;
  // pending, by queue key (DeepSharePolicy::key; ties: submit time, then id)
  std::set<std::tuple<double, Time, JobId>> others;
  std::set<std::pair<Time, JobId>> waiting;  // the same jobs, by the time they queued
  int guaranteed = 0;                        // running guaranteed jobs
  int borrowed = 0;                          // running borrowed jobs
  std::int64_t pending_gpus = 0;             // int64: a sum over every pending job
  int queued_entitled = 0;                   // pending entitled jobs that have not started yet
  int queued_submit_entitled = 0;  // pending jobs entitled at submit, requeued ones too (the
                                   // metric's definition of entitlement counts them)
  double forecast = 0;             // smoothed demand
  Time last_reclaim = -kNever / 2;
  Lending lend;
  double lent = 0;
  std::optional<Drain> drain;
  std::uint64_t queue_epoch = 0;  // changes whenever a job enters or leaves its queues
  ScanMark quota_scan, borrow_scan, aged_scan;
  std::uint64_t drain_epoch = ~std::uint64_t{0};  // epoch of its last failed drain start
  // Sharing probation: its shared jobs observed so far, and the sum of their observed minus
  // predicted slowdowns.
  int observed_pairs = 0;
  double slowdown_error = 0;
  Time forecast_at = 0;                               // when `forecast` was last updated
  bool assurance_dirty = true, lending_dirty = true;  // its inputs changed since
};

class DeepSharePolicy final : public Policy {
 public:
  explicit DeepSharePolicy(const PolicyContext& ctx);
  Decisions decide(const ClusterSnapshot& s) override;
  void telemetry(std::span<TenantTelemetry> out) const override;
  void summarize(std::map<std::string, double>& out) const override;

 private:
  struct JobState {
    Time predicted = 0;
    bool entitled = false;         // waits in the entitled FIFO (entitled, not started yet)
    bool submit_entitled = false;  // entitled at submit (DESIGN §4)
    bool queued = false;
    Run run = Run::None;
    JobId partner;             // sharing partner while both run
    std::uint64_t run_id = 0;  // this run (checkpoint entries of earlier runs are stale)
    // The run whose entry is in window_ (0: none). Next to `run` and the progress below:
    // collect_checkpoints reads these for every checkpoint it pops (one cache line).
    std::uint64_t window_run = 0;
    // Progress (exclusive-speed ms of work), estimated from observed speeds: `prog` at
    // time `prog_at`, advancing at `prog_speed` (the observed rate; it changes only when
    // a sharing partner comes or goes). While pending, `prog` is what its last checkpoint
    // kept minus the restart overhead (the simulator's and a real job's rule).
    double prog = 0;
    Time prog_at = 0;
    double prog_speed = 1;
    // Its last failed sharing attempt: at which assurance refresh, and how many partners
    // of its GPU count had been added by then (only those added since are new to it).
    Time tried_at = kNever;
    std::size_t tried_seen = 0;
    double tried_budget = 0;     // its tenant's sharing budget then
    double model_speed = 0;      // the model's speed for the pair it just joined (0: none)
    bool no_share = false;       // split from a pair (split_pairs): never shares again
    bool preempted = false;      // preempted by this policy; its requeue notice is expected
    bool quota_counted = false;  // a Shared job that holds its tenant's quota
    Time queued_since = 0;
    double key = 0;                                 // its place in its tenant's `others` queue
    Time attained0 = 0;                             // attained service when it last started
    Time started_at = 0;                            // of this run
    Time borrow_end = 0;                            // its key in ends_ while it runs borrowed
    std::uint32_t borrow_pos = kNoPos;              // its place in borrowed_runs_ (or none)
    std::uint64_t slice_epoch = ~std::uint64_t{0};  // epoch of its last failed slice
    bool away = false;                              // guaranteed, on a node another tenant owns
  };
  enum class Outcome { Started, Waiting, NoRoom };

  static int share(const JobSpec& j) { return j.gpus * j.gpu_milli; }  // milli-GPUs
  static int quota(const ClusterSnapshot& s, std::size_t t) {
    return s.tenants[t].quota_gpus * kMilliPerGpu;
  }

  // Phase 1 (deepshare.cpp): queues and accounting.
  double key(const JobSpec& j, Time attained) const;
  void enqueue(const JobSpec& j, Time now, Time attained);
  void dequeue(const JobSpec& j);
  void stopped(const ClusterSnapshot& s, JobId id);
  void add_exclusive(const JobSpec& j);
  void ingest(const ClusterSnapshot& s);
  void adopt(const ClusterSnapshot& s, JobId id);
  static bool overlaps(const Placement& a, const Placement& b);
  // Progress and the cost of preempting (deepshare.cpp).
  double progress(const ClusterSnapshot& s, JobId id) const;  // estimated work done now
  Time lost_now(const ClusterSnapshot& s, JobId id) const;    // lost if preempted now
  // First checkpoint of a running job at or after `from` (default: now).
  Time next_checkpoint(const ClusterSnapshot& s, JobId id, Time from = -1) const;
  double cost_of(const ClusterSnapshot& s, JobId id) const;  // GPU-seconds
  // Wake-ups at checkpoints fall on a 60-s grid (checkpoint_grid): a victim then loses at
  // most that much, and one cycle serves every checkpoint of the minute.
  Time on_grid(Time t) const;
  void preempted(const ClusterSnapshot& s, FreeMap& free, Decisions& out, JobId id);
  // A running job as a reclaim victim, with its sharing partner if any (their GPUs free
  // only together); none when it or its partner cannot go in this cycle.
  std::optional<Victim> as_victim(const ClusterSnapshot& s, JobId id) const;
  void preempt_victim(const ClusterSnapshot& s, FreeMap& free, Decisions& out, JobId id);
  // pair_victims: may the host `id` of a sharing pair be preempted with its joiner now (the
  // joiner is running, preemptible, not preempted already, and would lose at most
  // `lost_share` of its checkpoint interval)?
  bool pair_victim(const ClusterSnapshot& s, JobId id, double lost_share) const;
  void settle(JobId id, Time now, double speed);  // progress up to now; then `speed`
  // Checkpoints (checkpoints.cpp).
  Time checkpoint_after(const ClusterSnapshot& s, JobId id, Time from) const;
  void track_run(const ClusterSnapshot& s, JobId id);
  void collect_checkpoints(const ClusterSnapshot& s);
  Time next_cheap() const;  // when the next job reaches its checkpoint (on the grid)
  void observe_speeds(const ClusterSnapshot& s);  // speeds of jobs whose partner changed
  // Sharing probation (probation): whether the model is still on it (one probation for the
  // cluster), and whether tenant t's sharing failed it.
  bool on_probation() const;
  bool sharing_failed(std::size_t t) const;
  // split_pairs: preempt the joiners of pairs observed beyond a tenant's bound.
  void split_pairs(const ClusterSnapshot& s, FreeMap& free, Decisions& out);
  // Tenants whose assurance and lending inputs changed (refreshed in O(changes); all
  // tenants every assurance_refresh).
  void touch(std::size_t t);
  // Phase 2 (deepshare.cpp).
  // A running job's predicted remaining time (at least a minute).
  static Time remaining(const JobRuntime& r, Time now, Time predicted);
  void update_assurance(const ClusterSnapshot& s);
  // Starting a job (deepshare.cpp).
  void start(const ClusterSnapshot& s, FreeMap& free, Decisions& out, const JobSpec& j, Placement p,
             Run run);
  bool fits_quota(const ClusterSnapshot& s, const JobSpec& j) const;
  // Guaranteed work goes home first: the nodes its tenant owns and the unowned pool (anywhere
  // for a tenant that owns none); elsewhere it runs "away" and the nodes' owner may reclaim
  // them as from borrowers. Without this, guaranteed jobs spilled onto other tenants' nodes
  // fragmented them so that entitled jobs found no node to reclaim.
  std::optional<Placement> place_guaranteed(const FreeMap& free, const JobSpec& j) const;
  bool is_away(const ClusterSnapshot& s, const JobSpec& j, const Placement& p) const;
  std::optional<ReclaimPlan> plan_home(FreeMap& free, const JobSpec& j,
                                       std::vector<Victim> candidates) const;
  // Phases 3-7 (phases.cpp).
  void place_entitled(const ClusterSnapshot& s, FreeMap& free, Decisions& out);
  void place_entitled_freed(const ClusterSnapshot& s, FreeMap& free, Decisions& out);
  Outcome reclaim_or_wait(const ClusterSnapshot& s, FreeMap& free, Decisions& out,
                          const JobSpec& j);
  void place_within_quota(const ClusterSnapshot& s, FreeMap& free, Decisions& out);
  bool start_aged(const ClusterSnapshot& s, FreeMap& free, Decisions& out, std::size_t t);
  int borrowed_total() const;
  void compute_lending(const ClusterSnapshot& s);
  void place_borrowed(const ClusterSnapshot& s, FreeMap& free, Decisions& out);
  bool try_share(const ClusterSnapshot& s, Decisions& out, const JobSpec& j);
  void share(const ClusterSnapshot& s, Decisions& out);
  // Phase 6b (slicing.cpp): preempt work far past a pending job's size.
  void make_room(const ClusterSnapshot& s, FreeMap& free, Decisions& out);
  bool long_running(const ClusterSnapshot& s, JobId id) const;  // a time-slicing candidate
  bool slice_for(const ClusterSnapshot& s, FreeMap& free, Decisions& out, const JobSpec& j,
                 std::span<const JobId> candidates);
  // Phase 4b (drain.cpp): nodes drained at checkpoints for a wide job.
  bool drainable(const ClusterSnapshot& s, JobId v, TenantId t) const;
  void run_drains(const ClusterSnapshot& s, FreeMap& free, Decisions& out);
  void start_drain(const ClusterSnapshot& s, std::size_t t);

  static constexpr int kScan = 64;            // pending jobs examined per tenant and phase
  static constexpr int kReclaimAttempts = 2;  // in-quota reclaims tried per tenant and cycle

  Config c_;
  std::vector<TenantState> tenants_;
  AssuranceSignal signal_;
  std::unique_ptr<RuntimePredictor> predictor_;
  AccuracyTracker accuracy_;
  std::unique_ptr<InterferenceModel> model_;
  double model_cv_mae_ = -1;
  std::vector<JobState> job_;
  std::vector<NodeId> nodes_;
  std::vector<std::vector<NodeId>> home_;  // per tenant: where its guaranteed work runs
  // Free capacity kept across cycles (FreeMap::sync copies only the nodes that changed) with
  // an indexed node set per distinct home and one of every node: placements in O(log n).
  FreeMap free_;
  std::vector<FreeMap::SetId> home_set_;  // per tenant
  FreeMap::SetId all_set_ = 0;
  bool sets_ready_ = false;
  void register_sets();
  std::set<JobId> borrowed_running_;
  // The same jobs with what their predicted end needs, contiguous (reclaim_or_wait's wait
  // test reads them all; JobState::borrow_pos finds one to remove).
  struct BorrowedRun {
    JobId id;
    int gpus = 0;
    Time predicted = 0;
  };
  std::vector<BorrowedRun> borrowed_runs_;
  static constexpr std::uint32_t kNoPos = ~std::uint32_t{0};
  EndIndex ends_;  // the borrowed running jobs by predicted end
  void add_borrowed(const ClusterSnapshot& s, JobId id);
  void remove_borrowed(const ClusterSnapshot& s, JobId id);
  // Their predicted ends and GPUs in this cycle (phases.cpp, reclaim_or_wait's wait test).
  const std::vector<std::pair<Time, int>>& borrowed_ends(const ClusterSnapshot& s);
  std::vector<std::pair<Time, int>> borrowed_ends_;
  std::size_t ends_cycle_ = 0;  // the cycle borrowed_ends_ was computed in (0: none)
  // Guaranteed jobs running on nodes another tenant owns ("away"): the owner may take its
  // nodes back from them as from borrowers (they restart at home, within their quota).
  std::set<JobId> away_running_;
  std::map<int, std::set<JobId>> exclusive_;  // GPU count -> running jobs alone on their GPUs
  std::map<int, std::vector<JobId>> added_;   // GPU count -> partners, in the order added
  std::vector<JobId> unlisted_;  // partners not running yet (a snapshot shows them later)
  std::vector<JobId> speed_unknown_;
  std::vector<char> drained_nodes_;  // share(): nodes of running drains (no new partners there)
  std::vector<std::pair<JobId, std::uint64_t>> splits_;  // joiners to split (job, its run)
  std::size_t splits_done_ = 0;
  int observed_pairs_ = 0;     // shared jobs observed, of every tenant (probation)
  double slowdown_error_ = 0;  // the sum of their observed minus predicted slowdowns
  // Observed / predicted slowdown of shared jobs (observe_speeds): its mean scales predicted
  // slowdowns once it exceeds the model's cross-validated error (slowdown_scale()).
  double ratio_sum_ = 0;
  std::size_t ratio_n_ = 0;
  double slowdown_scale() const;
  std::priority_queue<CheckpointEntry, std::vector<CheckpointEntry>, std::greater<>> checkpoints_;
  std::vector<CheckpointEntry> window_;  // jobs a preemption costs at most slice_lost now
  std::uint64_t runs_ = 0;
  // Changes whenever capacity may have been freed: a job stopped, a drain ended, a job
  // reached its checkpoint (a cheap victim), or the snapshot shows GPUs freed that no job
  // delta explains (FreeMap::growths: GPUs held outside the policy given back, a start the
  // driver did not carry out). Scans that found nothing are not repeated until it changes.
  std::uint64_t epoch_ = 0;
  std::uint64_t growths_seen_ = 0;
  std::uint64_t window_epoch_ = 0;  // changes when a job reaches its checkpoint
  std::vector<std::size_t> assurance_dirty_, lending_dirty_;  // tenants touched since
  std::set<std::size_t> entitled_tenants_;                    // tenants with entitled jobs waiting
  std::set<std::size_t> other_tenants_;                       // tenants with other jobs waiting
  std::set<std::size_t> draining_;  // tenants with a drain (run_drains looks at these only)
  std::vector<char> own_victims_;   // per tenant, scratch of make_room (kept all clear)
  Time assurance_at_ = -kNever / 2, lending_at_ = -kNever / 2;  // last refresh of every tenant
  int borrowed_sum_ = 0;                 // milli-GPUs of all borrowed running jobs
  int lendable_sum_ = 0, idle_sum_ = 0;  // over tenants' cached Lending  // started or
                                         // joined sharing last cycle: speed not seen yet
  std::vector<double> budgets_;
  std::vector<Time> budgets_at_;  // per tenant: the cycle its budget was computed in
  int unowned_ = 0;
  int total_gpus_ = 0;
  int node_size_ = 0;                       // GPUs of the largest node
  std::vector<RejectJob> rejected_;         // emitted with the next decisions
  std::vector<WaitNote> waits_on_arrival_;  // arrivals and requeues of this cycle
  int lendable_total_ = 0;
  Placement held_;       // free GPUs drains hold in this cycle
  int free_gpus_ = 0;    // wholly free GPUs in this cycle's FreeMap (kept as jobs start and stop)
  int borrow_room_ = 0;  // lent capacity still free for borrowers after phase 6
  int idle_total_ = 0;   // idle quota including reserves (not owed to entitled jobs)
  bool present_risk_ = false;  // some tenant at risk or with entitled jobs waiting
  Time last_forecast_ = 0;
  Decay forecast_decay_;  // of `forecast` (update_assurance)
  Time next_wake_ = kNever;
  std::size_t reclaims_ = 0, victims_ = 0, waits_ = 0, shared_starts_ = 0, borrowed_starts_ = 0;
  std::size_t slices_ = 0, slice_victims_ = 0, cycles_ = 0;
  std::size_t drains_ = 0, drain_victims_ = 0;
  double reclaim_lost_ = 0, slice_lost_ = 0, drain_lost_ = 0;  // estimated lost GPU-seconds
};

}  // namespace ds::deepshare
