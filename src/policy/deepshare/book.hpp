// The DeepShare policy's book of jobs and tenants: each job as the policy knows it (queued or
// running, and how; its estimated progress) and each tenant's queues and GPU accounting, with
// the indexes over running jobs that the steps look up (borrowed jobs by predicted end,
// guaranteed jobs away from home). Every step reads and changes it through these functions.
//
// Assumptions: the policy sees only observable state. A job's progress is estimated from its
// observed speed (it changes only when a sharing partner comes or goes); while pending it is
// what its last checkpoint kept minus the restart overhead (the simulator's and a real job's
// rule, src/model/execution.hpp). GPU quantities are milli-GPUs (GPUs x gpu_milli), so that a
// fractional request counts the share of a GPU it asks for.
//
// Queues: per tenant, its pending entitled jobs in FIFO order (submit time, then id: an online
// driver may reuse the id of a job that left, so ids alone are not arrival order), and the
// others by queue key (fresh jobs before those that have run long, each by predicted GPU time;
// FIFO without prediction), the same jobs also by the time they queued.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "model/snapshot.hpp"
#include "model/tenant_tree.hpp"
#include "policy/deepshare/config.hpp"

namespace ds::deepshare {

// How a job runs. Shared: colocated on a partner's GPUs; it holds no GPUs of its own, so it
// counts against neither quota nor lent capacity (unless it holds quota: quota_counted), and
// is never a reclaim victim on its own.
enum class Run : std::uint8_t { None, Guaranteed, Borrowed, Shared };

// Queue keys of jobs that have run long (no longer fresh) start here (Book::key).
inline constexpr double kLongRun = 1e15;
// Pending jobs a step examines per tenant.
inline constexpr int kScan = 64;

inline int share(const JobSpec& j) {  // milli-GPUs
  return j.gpus * j.gpu_milli;
}
inline int quota(const ClusterSnapshot& s, std::size_t t) {
  return s.tenants[t].quota_gpus * kMilliPerGpu;
}

inline constexpr std::uint32_t kNoPos = ~std::uint32_t{0};

struct JobState {
  Time predicted = 0;
  bool entitled = false;         // waits in the entitled FIFO (entitled, not started yet)
  bool submit_entitled = false;  // entitled at submit (DESIGN §4)
  // Its run within quota was taken away by the cluster while the job was withdrawn (an
  // online driver withdraws such a job while it parks it): if it comes back, it is entitled.
  bool lost_guarantee = false;
  bool queued = false;
  Run run = Run::None;
  JobId partner;             // sharing partner while both run
  std::uint64_t run_id = 0;  // this run (Checkpoints::track); entries of earlier runs are stale
  // Progress (exclusive-speed ms of work): `prog` at time `prog_at`, advancing at
  // `prog_speed` (the observed rate).
  double prog = 0;
  Time prog_at = 0;
  double prog_speed = 1;
  bool preempted = false;      // preempted by this policy; its requeue notice is expected
  bool quota_counted = false;  // a Shared job that holds its tenant's quota
  bool away = false;           // guaranteed, on a node another tenant owns
  Time queued_since = 0;
  double key = 0;                     // its place in its tenant's `others` queue
  Time attained0 = 0;                 // attained service when it last started
  Time started_at = 0;                // of this run
  Time borrow_end = 0;                // its key in the end index while it runs borrowed
  std::uint32_t borrow_pos = kNoPos;  // its place in borrowed_runs() (or none)
};

struct TenantBook {
  std::set<std::pair<Time, JobId>> entitled;         // pending entitled, FIFO
  std::set<std::tuple<double, Time, JobId>> others;  // pending others, by key (submit, id)
  std::set<std::pair<Time, JobId>> waiting;          // the others, by the time they queued
  int guaranteed = 0;              // running guaranteed (and quota-holding shared)
  int borrowed = 0;                // running borrowed
  std::int64_t pending_gpus = 0;   // int64: a sum over every pending job
  int queued_entitled = 0;         // pending entitled jobs not started yet
  int queued_submit_entitled = 0;  // pending jobs entitled at submit, requeued ones too (the
                                   // metric's definition of entitlement counts them)
  std::uint64_t queue_epoch = 0;   // changes whenever a job enters or leaves its queues
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

// Tenants whose inputs to a derived value (assurance, lending) changed since it was last
// refreshed: a flag per tenant and the list of those flagged. Every tenant starts flagged
// (the first refresh is a full one) with an empty list.
class Marks {
 public:
  explicit Marks(std::size_t tenants) : flag_(tenants, 1) {}
  void mark(std::size_t t) {
    if (!flag_[t]) list_.push_back(t);
    flag_[t] = 1;
  }
  [[nodiscard]] bool marked(std::size_t t) const { return flag_[t] != 0; }
  void clear(std::size_t t) { flag_[t] = 0; }
  [[nodiscard]] const std::vector<std::size_t>& list() const { return list_; }
  void clear_list() { list_.clear(); }

 private:
  std::vector<char> flag_;
  std::vector<std::size_t> list_;
};

// A borrowed running job with what its predicted end needs, kept contiguous (reclaim's wait
// test reads them all).
struct BorrowedRun {
  JobId id;
  int gpus = 0;
  Time predicted = 0;
};

class Book {
 public:
  Book(const Config& c, std::size_t tenants);

  // --- jobs and tenants -------------------------------------------------------------
  void grow(std::size_t jobs);                             // drivers learn jobs as they go
  void reset(JobId id) { job_[id.index()] = JobState{}; }  // a driver may reuse an id
  JobState& job(JobId id) { return job_[id.index()]; }
  [[nodiscard]] const JobState& job(JobId id) const { return job_[id.index()]; }
  TenantBook& tenant(std::size_t t) { return tenants_[t]; }
  [[nodiscard]] const TenantBook& tenant(std::size_t t) const { return tenants_[t]; }
  [[nodiscard]] std::size_t tenants() const { return tenants_.size(); }
  // The tenants' tree (model/tenant_tree.hpp; flat for flat tenants) and each subtree's GPUs in
  // use (guaranteed + borrowed, milli-GPUs), for the tree's lending and reclaim rules.
  void set_tree(TenantTree tree) { tree_ = std::move(tree); }
  [[nodiscard]] const TenantTree& tree() const { return tree_; }
  void subtree_use(std::vector<std::int64_t>& out) const;

  // --- queues -----------------------------------------------------------------------
  // Queue order of a job that is not entitled: fresh jobs (attained service below
  // fresh_gpu_s GPU-seconds) before jobs that have run long, each by predicted GPU time
  // (FIFO without prediction). Fixed while the job waits, unless its prediction is renewed
  // (`repredict`, `twins`: repredict).
  [[nodiscard]] double key(const JobSpec& j, Time attained) const;
  [[nodiscard]] double order(const JobSpec& j) const;  // the key without its fresh part
  void enqueue(const JobSpec& j, Time now, Time attained);
  // A new prediction for `j` while it waits (`repredict`: prediction.hpp; `twins`: twins.hpp):
  // if it waits as an other job, it moves to its new place (fresh or long-run as before).
  void repredict(const JobSpec& j, Time predicted);
  void dequeue(const JobSpec& j);
  [[nodiscard]] const std::set<std::size_t>& entitled_tenants() const { return entitled_tenants_; }
  [[nodiscard]] const std::set<std::size_t>& other_tenants() const { return other_tenants_; }
  // Entitlement at submit (DESIGN §4, the metric's rule): requeued jobs that were entitled at
  // submit count among the queued entitled ones.
  [[nodiscard]] bool entitled_at_submit(const ClusterSnapshot& s, const JobSpec& j) const;
  [[nodiscard]] bool fits_quota(const ClusterSnapshot& s, const JobSpec& j) const {
    return tenants_[j.tenant.index()].guaranteed + share(j) <= quota(s, j.tenant.index());
  }

  // --- running jobs -----------------------------------------------------------------
  void add_borrowed(const ClusterSnapshot& s, JobId id);
  void remove_borrowed(const ClusterSnapshot& s, JobId id);
  [[nodiscard]] const std::set<JobId>& borrowed_running() const { return borrowed_running_; }
  [[nodiscard]] std::span<const BorrowedRun> borrowed_runs() const { return borrowed_runs_; }
  [[nodiscard]] int borrowed_total() const { return borrowed_sum_; }  // milli-GPUs
  // Changes whenever a borrower is added or removed (for memos of the borrowed set).
  [[nodiscard]] std::uint64_t borrowed_version() const { return borrowed_version_; }
  // Borrowed milli-GPUs predicted to end by now + horizon.
  int borrowed_back(Time now, Time horizon) { return ends_.within(now, horizon); }
  // Guaranteed jobs running on nodes another tenant owns ("away"): the owner may take its
  // nodes back from them as from borrowers (they restart at home, within their quota).
  void set_away(JobId id, bool away);
  [[nodiscard]] const std::set<JobId>& away_running() const { return away_running_; }

  // --- progress and the cost of preempting -------------------------------------------
  [[nodiscard]] double progress(const ClusterSnapshot& s, JobId id) const;  // work done now
  void settle(JobId id, Time now, double speed);  // progress up to now; then `speed`
  [[nodiscard]] Time lost_now(const ClusterSnapshot& s, JobId id) const;  // lost if preempted now
  // First checkpoint of a running job at or after `from` (default: now).
  [[nodiscard]] Time next_checkpoint(const ClusterSnapshot& s, JobId id, Time from = -1) const;
  [[nodiscard]] double cost_of(const ClusterSnapshot& s, JobId id) const;  // GPU-seconds
  // A running job's predicted remaining time (at least a minute).
  static Time remaining(const JobRuntime& r, Time now, Time predicted);

  // --- changes ----------------------------------------------------------------------
  // Changes whenever capacity may have been freed: a job stopped, a drain ended, a job
  // reached its checkpoint (a cheap victim), or the snapshot shows GPUs freed that no job
  // delta explains. Scans that found nothing are not repeated until it changes.
  [[nodiscard]] std::uint64_t epoch() const { return epoch_; }
  void capacity_freed() { ++epoch_; }
  // Tenant t's assurance and lending inputs changed.
  void touch(std::size_t t) {
    assurance_marks_.mark(t);
    lending_marks_.mark(t);
  }
  Marks& assurance_marks() { return assurance_marks_; }
  Marks& lending_marks() { return lending_marks_; }

 private:
  const Config& c_;
  TenantTree tree_;
  std::vector<JobState> job_;
  std::vector<TenantBook> tenants_;
  std::set<std::size_t> entitled_tenants_;  // tenants with entitled jobs waiting
  std::set<std::size_t> other_tenants_;     // tenants with other jobs waiting
  std::set<JobId> borrowed_running_;
  std::vector<BorrowedRun> borrowed_runs_;  // the same jobs (JobState::borrow_pos)
  EndIndex ends_;                           // the same jobs by predicted end
  int borrowed_sum_ = 0;
  std::uint64_t borrowed_version_ = 0;
  std::set<JobId> away_running_;
  std::uint64_t epoch_ = 0;
  Marks assurance_marks_, lending_marks_;
};

}  // namespace ds::deepshare
