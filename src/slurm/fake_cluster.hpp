// An in-process Slurm for the controller's unit tests: implements the ports (ports.hpp)
// with the behaviour of Slurm 22.05 that the controller depends on, and the ways a real
// cluster fails, all on a manual clock (no root, no daemons, milliseconds per test).
//
// Behaviour modelled (docs/slurm.md §1, §3, §5):
//  - jobs arrive as the submission gate leaves them: record "ds:v=1;gpus=N;n=1;nr=.." in
//    the AdminComment, parked (BeginTime 2100);
//  - a released job (BeginTime <= now, not held) starts at Slurm's next scheduling pass
//    (every sched_interval_ms: the lag between an action and its visibility), on its
//    requested nodes with exactly the GRES of its tres_per_node, and only when those GRES
//    are free; a job's GRES request cannot be changed once written (Slurm merges it);
//  - requeue-hold of a RUNNING job: PENDING + COMPLETING (holding its GPUs) for kill_ms,
//    then held pending, restart count + 1; requeue of a job not running is a no-op;
//  - a job starts only on nodes it does not exclude and whose CPUs, memory and TmpDisk hold
//    its request (node_cpus, node_memory_mib, node_tmp_mib; require()), and on a reserved node only
//    if its time limit ends before the reservation's window (reservations); pinned elsewhere, it
//    stays pending (counted: unstartable_pins);
//  - with `consumable`, beside the CPUs and memory the jobs running there hold (select/cons_tres
//    with CR_Core_Memory); pinned where they do not leave enough, it stays pending (counted:
//    held_refusals);
//  - cancel; completion after the job's run time (GPUs held for epilog_ms); finished jobs
//    leave the table after min_job_age_ms;
//  - change-only reads: "no change since T" or the whole table, T in whole seconds;
//  - node failure: the node's running jobs are requeued by Slurm (not held, eligible a
//    second later, restart count + 1);
//  - PrologSlurmctld (deploy/slurm/prolog-slurmctld.sh, on unless `prolog` is false): a start
//    without DeepShare's pin for that run is refused before the job runs, and Slurm requeues
//    the job (restart count + 1, eligible a second later);
//  - its user's commands: `scontrol requeue` of a running or finished job (pending again,
//    restart count + 1, submitted anew, eligible a second later), hold and release (the
//    gate parks the job either way);
//  - failures: reads that fail, actions that fail before Slurm applies them, actions that
//    Slurm applies but whose reply is lost (reported as failed), stale reads (the previous
//    answer again: duplicate and late events), slurmctld outages (every RPC fails).
// Invariants it checks (counted, a test asserts them 0): on every start, the job's pin names
// exactly the GPUs Slurm allocates and belongs to the current run; no released job finds its
// GPUs held by another job (two jobs pinned to the same GPUs: a double booking); and no run
// is pinned to nodes Slurm cannot start it on.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "driver/clock.hpp"
#include "slurm/ports.hpp"

namespace ds::slurm {

struct FakeOptions {
  int nodes = 4;
  int gpus_per_node = 4;
  std::string partition = "batch";
  std::int64_t start_ms = 1'700'000'000'000;  // wall time at construction (Unix ms)
  std::int64_t sched_interval_ms = 1000;      // Slurm's scheduling pass
  std::int64_t kill_ms = 500;                 // a requeued or cancelled job ends this late
  std::int64_t epilog_ms = 100;               // a completed job holds its GPUs this long
  std::int64_t min_job_age_ms = 300'000;      // MinJobAge
  int kill_wait_s = 2;
  double p_read_fail = 0;
  double p_write_fail = 0;
  double p_reply_lost = 0;
  double p_stale_read = 0;
  // A requeue finds the running job just completed (its own end raced the request): Slurm
  // then answers "Job has already finished" (ESLURM_ALREADY_DONE), as for any finished job.
  double p_ends_first = 0;
  std::uint64_t seed = 1;
  bool prolog = true;  // PrologSlurmctld refuses starts DeepShare did not decide
  // Slurm Features of node i (node1 = [0]; GPU models, docs/slurm.md), comma-separated;
  // missing: none.
  std::vector<std::string> node_features;
  // CPUs and RealMemory (MiB) of node i; missing or 0: no limit. Slurm starts a job only on
  // nodes that hold its CPUs, memory and --tmp and that it does not exclude (feasible.hpp).
  std::vector<std::uint32_t> node_cpus;
  std::vector<std::uint64_t> node_memory_mib;
  std::vector<std::uint64_t> node_tmp_mib;  // TmpDisk (MiB) of node i; missing or 0: no limit
  // SelectTypeParameters=CR_Core_Memory (the test cluster's): the CPUs and memory of the jobs
  // running on a node are held from others (headroom.hpp); false: only the GPUs are.
  bool consumable = true;
};

// A reservation (scontrol create reservation): holds `nodes` (node1 = 0) in [start_ms, end_ms).
struct FakeReservation {
  std::string name;
  std::vector<int> nodes;
  std::int64_t start_ms = 0, end_ms = 0;
};

struct FakeJobStats {
  std::string account;
  int gpus = 0;
  int starts = 0;
  int requeues = 0;
  std::int64_t first_start_ms = 0;
  bool completed = false;
  bool cancelled = false;
  std::string refusal;              // the reason DeepShare recorded (x=) when it cancelled the job
  std::vector<std::string> ran_on;  // the nodes of every start, in order
};

class FakeCluster final : public ClusterSource, public Actuator, public driver::Clock {
 public:
  explicit FakeCluster(FakeOptions o = {});

  // --- ports ---
  std::optional<JobTable> read_jobs(std::int64_t since) override;
  std::optional<std::vector<NodeInfo>> nodes() override;
  std::optional<SlurmConfig> config() override;
  std::optional<std::vector<Association>> associations(const std::string& tres) override;
  bool update(const Update& u) override;
  bool requeue_hold(const std::string& job) override;
  bool cancel(const std::string& job) override;
  [[nodiscard]] const std::string& last_error() const override { return error_; }
  [[nodiscard]] bool last_failure_done() const override { return done_; }
  std::int64_t now_ms() override { return now_; }

  // --- the world ---
  // A job as the gate leaves it (with gm=`gpu_model` when not empty); returns its id.
  std::uint32_t submit(const std::string& account, int gpus, std::int64_t run_ms,
                       bool requeue = true, const std::string& gpu_model = "");
  // Moves time forward, running Slurm's own transitions on the way.
  void advance(std::int64_t ms);
  void user_cancel(std::uint32_t id);
  void user_requeue(std::uint32_t id);
  void user_hold(std::uint32_t id, bool hold);  // false: release
  // What the job's sbatch also asked (--exclude, --cpus-per-task, --mem, --tmp), before
  // DeepShare first reads it.
  void require(std::uint32_t id, std::vector<std::string> excluded, std::uint32_t cpus_per_node,
               std::uint64_t mem_per_node_mib, std::uint64_t tmp_per_node_mib = 0);
  // A CPU-only job of another partition that Slurm runs on node `node` (node1 = 0) from now
  // for `run_ms`, holding `cpus` CPUs and `mem_mib` of memory there; returns its id.
  std::uint32_t run_outside(int node, std::uint32_t cpus, std::uint64_t mem_mib,
                            std::int64_t run_ms);
  // A requirement DeepShare does not read (a licence, a node setting): Slurm never starts
  // the job on `nodes` (node1 = 0), its reason BadConstraints; empty: lifted.
  void hidden_requirement(std::uint32_t id, std::vector<int> nodes);
  void set_node_up(int node, bool up);
  void outage(std::int64_t ms);  // slurmctld restarts: every RPC fails meanwhile
  // Failure injection can be changed at any time (e.g. off for a final drain).
  FakeOptions& options() { return o_; }
  // slurmdbd's associations (sacctmgr): with any, the cluster has accounting (enforced).
  std::vector<Association> accounts;
  // Reservations: a job starts on a reserved node only if its time limit ends before the
  // window (Slurm 22.05; without a limit: never before the window ends).
  std::vector<FakeReservation> reservations;
  // The job's --time in seconds (-1: none), before DeepShare first reads it.
  void time_limit(std::uint32_t id, std::int64_t seconds);
  // The job's --constraint ("A", "A&B", "A|B"), before DeepShare first reads it.
  void constrain(std::uint32_t id, std::string features);

  // --- checks ---
  [[nodiscard]] const FakeJobStats& stats(std::uint32_t id) const { return stats_.at(id - 1); }
  [[nodiscard]] std::uint32_t submitted() const {
    return static_cast<std::uint32_t>(stats_.size());
  }
  [[nodiscard]] std::size_t listed() const { return jobs_.size(); }
  [[nodiscard]] std::size_t finished() const { return finished_; }
  [[nodiscard]] int pin_mismatches() const { return pin_mismatches_; }
  [[nodiscard]] int unpinned_starts() const { return unpinned_starts_; }
  [[nodiscard]] int prolog_refusals() const { return prolog_refusals_; }
  [[nodiscard]] int rejected_gres_changes() const { return gres_changes_; }
  [[nodiscard]] int conflicts() const { return conflicts_; }
  // Runs pinned to nodes Slurm cannot start them on (excluded, too few CPUs or too little
  // memory: feasible.hpp).
  [[nodiscard]] int unstartable_pins() const { return unstartable_; }
  // Runs pinned to a node whose CPUs or memory other jobs held (consumable): left pending.
  [[nodiscard]] int held_refusals() const { return held_refusals_; }
  [[nodiscard]] std::uint64_t actions_applied() const { return applied_; }
  [[nodiscard]] std::string describe(std::uint32_t id) const;

 private:
  struct Job {
    JobInfo info;
    std::int64_t run_ms = 0;
    std::int64_t started_ms = 0;
    std::int64_t completing_until = 0;
    std::int64_t end_ms = 0;
    std::string req_nodes;
    std::uint32_t conflict_run = 0xffffffff;     // the run that found its GPUs taken
    std::uint32_t unstartable_run = 0xffffffff;  // the run pinned where it cannot start
    std::uint32_t held_run = 0xffffffff;         // the run pinned beside jobs holding its share
    std::vector<int> hidden_refusals;            // hidden_requirement()
  };
  bool rpc(bool write);
  bool fail(const std::string& why, bool done = false);
  void complete(Job& j);  // its work is done: Completed, its GPUs held for the epilog
  Job* find(const std::string& ref);
  void changed() { last_change_s_ = now_ / 1000; }
  void tick();
  void schedule();
  void end_run(Job& j, JobState to, bool requeue, bool held);
  [[nodiscard]] bool pinned(const Job& j) const;
  void check_pin(const Job& j);
  [[nodiscard]] bool can_hold(const JobInfo& i, std::size_t n) const;
  [[nodiscard]] std::vector<std::string> node_features(std::size_t k) const;
  [[nodiscard]] bool features_met(const std::string& constraint, std::size_t n) const;

  FakeOptions o_;
  std::int64_t now_;
  std::int64_t next_pass_;
  std::int64_t outage_until_ = 0;
  std::int64_t last_change_s_ = 0;
  std::mt19937_64 rng_;
  std::map<std::uint32_t, Job> jobs_;
  std::vector<FakeJobStats> stats_;
  std::vector<bool> node_up_;
  std::optional<JobTable> last_answer_;
  std::string error_;
  bool done_ = false;  // the last failure: the job had already finished
  std::size_t finished_ = 0;
  int pin_mismatches_ = 0, unpinned_starts_ = 0, gres_changes_ = 0, conflicts_ = 0;
  int prolog_refusals_ = 0;
  int unstartable_ = 0;
  int held_refusals_ = 0;
  std::uint64_t applied_ = 0;
};

}  // namespace ds::slurm
