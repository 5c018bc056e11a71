#include "baselines/slurm_user.hpp"

#include <algorithm>
#include <cmath>

namespace ds {

TimeLimitRule read_time_limit_rule(const PolicyOptions& o) {
  TimeLimitRule r;
  r.factor = o.get_double("time_limit_factor", r.factor, 0.01, 1000);
  r.round = o.get_seconds("time_limit_round_s", r.round, 1, 86'400);
  r.min = o.get_seconds("time_limit_min_s", r.min, 1, 365 * 86'400L);
  r.predictor.kind = o.get("predictor", r.predictor.kind);
  return r;
}

SlurmTimeLimits::SlurmTimeLimits(const TimeLimitRule& rule)
    : rule_(rule), predictor_(make_predictor(rule.predictor)) {}

void SlurmTimeLimits::observe(const JobSpec& job, Time runtime) {
  predictor_->observe(job, runtime);
}

Time SlurmTimeLimits::limit(const JobSpec& job) const {
  const double want = rule_.factor * static_cast<double>(predictor_->predict(job));
  const Time t = std::max<Time>(rule_.min, static_cast<Time>(std::ceil(want)));
  // Whole rounding units, at most a year (Slurm's limits are 32-bit minutes).
  const Time units =
      std::min<Time>((t + rule_.round - 1) / rule_.round, 365 * kDay / rule_.round + 1);
  return units * rule_.round;
}

}  // namespace ds
