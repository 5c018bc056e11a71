#include "policy/deepshare/config.hpp"

#include "core/limits.hpp"

namespace ds::deepshare {

// Every number is read with its range (docs/deepshare.md lists them): shares in 0..1, times
// in whole seconds up to 100 years, scan limits up to a million.
Config Config::from(const PolicyOptions& o) {
  constexpr long kMaxS = limits::kMaxInterval / kSecond;
  Config c;
  c.borrowing = o.get_bool("borrowing", c.borrowing);
  c.reclaim = o.get_bool("reclaim", c.reclaim);
  c.sharing = o.get_bool("sharing", c.sharing);
  c.prediction = o.get_bool("prediction", c.prediction);
  c.assurance = o.get_bool("assurance", c.assurance);
  c.present_risk = o.get_bool("present_risk", c.present_risk);
  c.reclaim_quota = o.get_bool("reclaim_quota", c.reclaim_quota);
  c.time_slicing = o.get_bool("time_slicing", c.time_slicing);
  c.reclaim_wait = o.get_bool("reclaim_wait", c.reclaim_wait);
  c.learn_sharing = o.get_bool("learn_sharing", c.learn_sharing);
  c.probation = o.get_bool("probation", c.probation);
  c.probation_pairs =
      static_cast<int>(o.get_int("probation_pairs", c.probation_pairs, 0, 1'000'000));
  c.probation_error = o.get_double("probation_error", c.probation_error, 0, 100);
  c.split_pairs = o.get_bool("split_pairs", c.split_pairs);
  c.pair_victims = o.get_bool("pair_victims", c.pair_victims);
  c.pair_lost = o.get_double("pair_lost", c.pair_lost, 0, 1);
  c.slice_min = o.get_seconds("slice_min_s", c.slice_min, 0, kMaxS);
  c.slice_ratio = o.get_double("slice_ratio", c.slice_ratio, 0, 1e6);
  c.fresh_gpu_s = o.get_double("fresh_gpu_s", c.fresh_gpu_s, 0, 1e12);
  c.slice_past = o.get_double("slice_past", c.slice_past, 0, 1e6);
  c.slice_lost = o.get_seconds("slice_lost_s", c.slice_lost, 0, kMaxS);
  c.slice_attempts = static_cast<int>(o.get_int("slice_attempts", c.slice_attempts, 0, 1'000'000));
  c.drain_after = o.get_seconds("drain_after_s", c.drain_after, 0, kMaxS);
  c.predictor = o.get("predictor", c.predictor);
  c.reserve_min = o.get_double("reserve_min", c.reserve_min, 0, 1);
  c.reserve_at_risk = o.get_double("reserve_at_risk", c.reserve_at_risk, 0, 1);
  c.sharing_budget = o.get_double("sharing_budget", c.sharing_budget, 1, 100);
  c.sharing_min_assurance = o.get_double("sharing_min_assurance", c.sharing_min_assurance, 0, 1);
  c.min_runtime = o.get_seconds("min_runtime_s", c.min_runtime, 0, kMaxS);
  c.lend_backoff = o.get_seconds("lend_backoff_s", c.lend_backoff, 0, kMaxS);
  c.ewma_tau = o.get_seconds("ewma_tau_s", c.ewma_tau, 1, kMaxS);  // divides elapsed time
  c.assurance_refresh = o.get_seconds("assurance_refresh_s", c.assurance_refresh, 1, kMaxS);
  c.sharing_scan = static_cast<int>(o.get_int("sharing_scan", c.sharing_scan, 0, 1'000'000));
  c.partner_scan = static_cast<int>(o.get_int("partner_scan", c.partner_scan, 0, 1'000'000));
  c.borrow_aging = o.get_seconds("borrow_aging_s", c.borrow_aging, 0, kMaxS);
  c.quota_aging = o.get_bool("quota_aging", c.quota_aging);
  c.repredict = o.get_bool("repredict", c.repredict);
  c.twins = o.get_bool("twins", c.twins);
  c.quota_aging_s = o.get_seconds("quota_aging_s", c.quota_aging_s, 0, kMaxS);
  c.aging_max_share = o.get_double("aging_max_share", c.aging_max_share, 0, 1);
  c.long_job = o.get_seconds("long_job_s", c.long_job, 0, kMaxS);
  return c;
}

const char* option_keys() {
  return "borrowing|reclaim|sharing|prediction|assurance|present_risk|reclaim_quota|time_slicing|"
         "learn_sharing|reclaim_wait|quota_aging|repredict|twins|probation|split_pairs|"
         "pair_victims=on|off, reserve_min, "
         "reserve_at_risk, "
         "sharing_budget, sharing_min_assurance, min_runtime_s, lend_backoff_s, ewma_tau_s, "
         "assurance_refresh_s, "
         "long_job_s, borrow_aging_s, quota_aging_s, aging_max_share, sharing_scan, partner_scan, "
         "slice_min_s, "
         "fresh_gpu_s, slice_ratio, slice_past, slice_lost_s, slice_attempts, drain_after_s, "
         "probation_pairs, probation_error, pair_lost, predictor=user|history|tenant|global";
}

}  // namespace ds::deepshare
