// What the users of a Slurm site submit, for the `slurm` baseline (slurm.hpp) and for the
// native replay on a real cluster (src/replay/replay.cpp), which must submit the same: a
// time limit and a QOS per job.
//
// Time limit (`sbatch --time`): the traces have none (Venus, openb), so a job's limit is
// what a user who knows the run times of their finished jobs would ask for: the online
// predictor's estimate at submit (src/policy/predict/, the `history` predictor by default;
// it learns only from jobs finished before now) x `time_limit_factor` (2), rounded up to
// `time_limit_round_s` (60: Slurm keeps limits in whole minutes) and at least
// `time_limit_min_s` (60). A job that outruns its limit is not killed (the site runs
// OverTimeLimit=UNLIMITED, deploy/slurm/native/): every trace job completed, and a killed
// job would change the workload; the backfill then guesses its end as now + its limit
// (cons_common/job_test.c _guess_job_end).
//
// QOS: each account's own QOS carries its quota (GrpTRES=gres/gpu=Q); a job that would
// take its account's tenant-QOS GPUs (running + queued in that QOS) above the quota is
// submitted to the `scavenger` QOS instead, which any tenant-QOS job preempts. This is
// DESIGN §4's entitlement at submit, so the QoS metric counts the jobs submitted within
// quota. A job that cannot be requeued (--no-requeue) never goes to scavenger.
#pragma once

#include <memory>

#include "policy/policy.hpp"
#include "policy/predict/predictor.hpp"

namespace ds {

struct TimeLimitRule {
  double factor = 2.0;
  Time round = kMinute;
  Time min = kMinute;
  PredictorConfig predictor;
};

// Reads time_limit_factor, time_limit_round_s, time_limit_min_s and predictor.
TimeLimitRule read_time_limit_rule(const PolicyOptions& options);

class SlurmTimeLimits {
 public:
  explicit SlurmTimeLimits(const TimeLimitRule& rule);
  // A job finished after running `runtime` (all its runs).
  void observe(const JobSpec& job, Time runtime);
  // The limit the job's user asks for now (> 0, a multiple of the rule's rounding).
  [[nodiscard]] Time limit(const JobSpec& job) const;
  // The predictor's estimate behind it.
  [[nodiscard]] Time estimate(const JobSpec& job) const { return predictor_->predict(job); }

 private:
  TimeLimitRule rule_;
  std::unique_ptr<RuntimePredictor> predictor_;
};

// Whether a job of `gpus` goes to its tenant's QOS (true) or to scavenger.
inline bool slurm_tenant_qos(int running_gpus, int queued_gpus, int gpus, int quota,
                             bool preemptible) {
  return !preemptible || running_gpus + queued_gpus + gpus <= quota;
}

}  // namespace ds
