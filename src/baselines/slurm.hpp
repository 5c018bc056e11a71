// slurm — Slurm's own scheduling as sites configure it for a shared GPU cluster: one
// partition over every node, priority/multifactor with Fair Tree fair-share over accounts,
// sched/backfill with time limits, a quota per account (GrpTRES=gres/gpu on the account's
// QOS), borrowing through a scavenger QOS that preempt/qos requeues (PreemptMode=REQUEUE)
// when a tenant-QOS job needs its GPUs. The same configuration runs on the real test
// cluster: deploy/slurm/native/ (docs/baselines.md, docs/slurm.md §14).
//
// Sources (read, not copied; SchedMD/slurm at tag slurm-22-05-8-1, the Debian 12 version
// the test cluster runs):
//  - slurm.conf(5): PriorityType, PriorityDecayHalfLife, PriorityMaxAge, PriorityCalcPeriod,
//    PriorityWeight*, SchedulerType, SchedulerParameters (bf_interval, bf_resolution,
//    bf_window, bf_max_job_test, preempt_reorder_count, preempt_youngest_first), PreemptType,
//    PreemptMode, OverTimeLimit, TRESBillingWeights; AuthInfo cred_expire (the requeue delay);
//  - doc/html/priority_multifactor.shtml and fair_tree.shtml (slurm_priority.hpp);
//  - doc/html/sched_config.shtml "Overview" (main scheduler + backfill);
//  - doc/html/preempt.shtml "Configuration" (PreemptType=preempt/qos, PreemptMode=REQUEUE,
//    GraceTime), doc/html/qos.shtml "Job Limits", "Other QOS Options" (GrpTRES, Preempt,
//    Flags=NoReserve for a standby QOS), doc/html/resource_limits.shtml "Hierarchy" (a QOS
//    limit takes precedence over the association's);
//  - code: src/slurmctld/job_scheduler.c (schedule: priority order, a job blocked for
//    resources blocks the partition; sort_job_queue2: priority, then submit time, then id),
//    src/slurmctld/job_mgr.c (batch_requeue_fini: a requeued job becomes eligible after
//    cred_expire + 1 s, its submit and accrue times reset), src/plugins/sched/backfill/
//    backfill.c and select/cons_common/job_test.c (slurm_backfill.hpp),
//    src/plugins/preempt/qos/preempt_qos.c (candidates: lower QOS priority, then fewer
//    nodes; youngest first with preempt_youngest_first).
//
// Assumptions (the site; deploy/slurm/native/README.md lists the same as slurm.conf lines
// and sacctmgr commands):
//  - Every tenant is an account; its QOS (named after it) has GrpTRES=gres/gpu=<quota>,
//    Priority=1 and Preempt=scavenger; QOS scavenger has Priority=0, PreemptMode=requeue,
//    Flags=NoReserve, GraceTime=0. Users pick the QOS and the time limit as slurm_user.hpp
//    says. The quota sits on the account's QOS, not its association: an association's
//    GrpTRES would also count the account's scavenger jobs and hold its in-quota jobs back.
//  - Preempted jobs lose the work since their tenant's last checkpoint and pay the restart
//    overhead (the simulator's rule, model/execution.hpp); GraceTime=0.
//  - OverTimeLimit=UNLIMITED: a job outrunning its limit runs on (slurm_user.hpp).
//  - A job that names GPU models (JobSpec::gpu_type) asked --gres=gpu:<type>:N: the main
//    scheduler, the backfill and preemption consider only the nodes whose GPUs are of a model
//    it accepts (issue #28); it is rejected when they hold fewer GPUs than it asks for.
//
// Algorithm, at each cycle (arrival, completion, wake-up):
//  1. Decay thread, at every multiple of calc_period: decay each account's usage, add the
//     running jobs' GPU-seconds, re-rank Fair Tree, recompute every pending job's priority.
//  2. Arrivals: QOS and time limit (slurm_user.hpp), priority at submit. Requeued jobs keep
//     their priority and become eligible after requeue_delay (cred_expire + 1 s); their age
//     and queue order restart then.
//  3. Main scheduler: pending jobs by (priority desc, submit, id): a job in the requeue delay
//     or at its QOS's GrpTRES is skipped; one that fits starts (cons_tres's node choice); a
//     tenant-QOS job that does not fit tries preemption (slurm_backfill.hpp choose_victims:
//     scavenger jobs requeued); otherwise the partition is blocked: the scan stops.
//  4. Backfill, at most every bf_interval while something changed: the node-space map from
//     now to now + bf_window; up to bf_max_job_test eligible jobs in priority order: earliest
//     start on the nodes free of reservations (will_run; for a tenant-QOS job with every
//     scavenger job gone), trying later where more nodes become free (TRY_LATER); a job that
//     can start now starts (preempting if it must); one that starts later within the window
//     reserves the nodes it would use until its start + limit (scavenger jobs do not:
//     NoReserve).
//  5. Wake-ups: the next backfill pass, decay tick, or end of a requeue delay.
//
// Deliberate differences from Slurm: events instead of Slurm's passes (Slurm runs its main
// scheduler when submissions and completions ask for it and at least every sched_interval,
// its backfill every bf_interval; the baseline runs the main pass at the event and a backfill
// pass at the first bf_interval after a change). On the testbed Slurm allocated a submitted
// job 0.34-0.37 s later (docs/slurm.md §14): GPUs that free up meanwhile spare it preemptions
// the baseline makes, which charges the delay as start latency instead. A preempted job frees
// its GPUs at once (Slurm waits for it to exit) and its preemptor starts in the same cycle;
// GPUs only (CPUs and memory never bind: jobs ask CPUs in proportion to GPUs); multi-node jobs
// are placed by the consolidate rule, not cons_tres's (one-node jobs follow cons_tres's:
// slurm_backfill.hpp); users of an account share its Fair Tree rank (Slurm ranks each user
// association, shifted by the number of users of the accounts ahead); no jobs killed at their
// time limit (OverTimeLimit=UNLIMITED, also on the real cluster); a job needing more GPUs than
// the cluster, or a --no-requeue job more than its quota, is rejected (Slurm would leave it
// pending). Fractional GPU requests (openb) take a whole GPU (no gres/shard).
//
// Options (--set), Slurm's defaults unless said: weight_age=1000, weight_fairshare=10000,
// weight_job_size=1000 (the priority_multifactor configuration example), weight_qos=100000,
// weight_tres_gpu=0, decay_half_life_s=604800, max_age_s=604800, calc_period_s=300,
// bf_interval_s=30, bf_resolution_s=60, bf_window_s=86400, bf_max_job_test=500,
// will_run_window_s=30 (cons_common's grouping; not a Slurm option, set for time-scaled
// replays), requeue_delay_s=121, preempt_youngest_first=off, preempt_reorder_count=1,
// scavenger_reserve=off (on: the scavenger QOS without NoReserve), time_limit_factor=2,
// time_limit_round_s=60, time_limit_min_s=60, predictor=history.
#pragma once

#include <memory>

#include "baselines/slurm_priority.hpp"
#include "baselines/slurm_user.hpp"
#include "policy/policy.hpp"

namespace ds {

struct SlurmConfig {
  SlurmPriorityConfig priority;
  TimeLimitRule limits;
  Time bf_interval = seconds(30);
  Time bf_resolution = seconds(60);
  Time bf_window = kDay;
  int bf_max_job_test = 500;
  Time will_run_window = seconds(30);
  Time requeue_delay = seconds(121);
  bool preempt_youngest_first = false;
  int preempt_reorder_count = 1;
  bool scavenger_reserve = false;
  // Tests only (tests/deep_queue_test.cpp): the straightforward reference of the same
  // algorithm - the queue re-sorted at every decay tick, every backfill answer computed anew,
  // the running jobs' end order rebuilt after every start.
  bool reference_scan = false;
};

SlurmConfig read_slurm_config(const PolicyOptions& options);
std::unique_ptr<Policy> make_slurm(const PolicyContext& ctx);
std::unique_ptr<Policy> make_slurm(const PolicyContext& ctx, const SlurmConfig& config);
const char* slurm_options();

}  // namespace ds
