#include "policy/deepshare/config.hpp"

namespace ds::deepshare {

Config Config::from(const PolicyOptions& o) {
  Config c;
  c.borrowing = o.get_bool("borrowing", c.borrowing);
  c.reclaim = o.get_bool("reclaim", c.reclaim);
  c.sharing = o.get_bool("sharing", c.sharing);
  c.prediction = o.get_bool("prediction", c.prediction);
  c.assurance = o.get_bool("assurance", c.assurance);
  c.present_risk = o.get_bool("present_risk", c.present_risk);
  c.reclaim_quota = o.get_bool("reclaim_quota", c.reclaim_quota);
  c.time_slicing = o.get_bool("time_slicing", c.time_slicing);
  c.slice_min = seconds(o.get_int("slice_min_s", static_cast<long>(c.slice_min / kSecond)));
  c.slice_ratio = o.get_double("slice_ratio", c.slice_ratio);
  c.fresh_gpu_s = o.get_double("fresh_gpu_s", c.fresh_gpu_s);
  c.slice_past = o.get_double("slice_past", c.slice_past);
  c.slice_lost = seconds(o.get_int("slice_lost_s", static_cast<long>(c.slice_lost / kSecond)));
  c.slice_attempts = static_cast<int>(o.get_int("slice_attempts", c.slice_attempts));
  c.drain_after = seconds(o.get_int("drain_after_s", static_cast<long>(c.drain_after / kSecond)));
  c.predictor = o.get("predictor", c.predictor);
  c.reserve_min = o.get_double("reserve_min", c.reserve_min);
  c.reserve_at_risk = o.get_double("reserve_at_risk", c.reserve_at_risk);
  c.sharing_budget = o.get_double("sharing_budget", c.sharing_budget);
  c.sharing_min_assurance = o.get_double("sharing_min_assurance", c.sharing_min_assurance);
  c.min_runtime = seconds(o.get_int("min_runtime_s", static_cast<long>(c.min_runtime / kSecond)));
  c.lend_backoff =
      seconds(o.get_int("lend_backoff_s", static_cast<long>(c.lend_backoff / kSecond)));
  c.ewma_tau = seconds(o.get_int("ewma_tau_s", static_cast<long>(c.ewma_tau / kSecond)));
  c.assurance_refresh =
      seconds(o.get_int("assurance_refresh_s", static_cast<long>(c.assurance_refresh / kSecond)));
  c.sharing_scan = static_cast<int>(o.get_int("sharing_scan", c.sharing_scan));
  c.partner_scan = static_cast<int>(o.get_int("partner_scan", c.partner_scan));
  c.borrow_aging =
      seconds(o.get_int("borrow_aging_s", static_cast<long>(c.borrow_aging / kSecond)));
  c.quota_aging = seconds(o.get_int("quota_aging_s", static_cast<long>(c.quota_aging / kSecond)));
  c.long_job = seconds(o.get_int("long_job_s", static_cast<long>(c.long_job / kSecond)));
  return c;
}

const char* option_keys() {
  return "borrowing|reclaim|sharing|prediction|assurance|present_risk|reclaim_quota|time_slicing="
         "on|off, reserve_min, "
         "reserve_at_risk, "
         "sharing_budget, sharing_min_assurance, min_runtime_s, lend_backoff_s, ewma_tau_s, "
         "assurance_refresh_s, "
         "long_job_s, borrow_aging_s, quota_aging_s, sharing_scan, partner_scan, slice_min_s, "
         "fresh_gpu_s, slice_ratio, slice_past, slice_lost_s, slice_attempts, "
         "predictor=user|history|tenant|global";
}

}  // namespace ds::deepshare
