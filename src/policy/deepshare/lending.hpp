// How much idle guaranteed quota a tenant lends.
//
// Algorithm (docs/deepshare.md):
//  1. idle = quota - GPUs of its guaranteed (non-borrowed) jobs - GPUs owed to its
//     queued entitled jobs (the caller passes both as `guaranteed`)
//  2. reserve = idle x (reserve_min + reserve_at_risk x (1 - A)) when coupled to
//     assurance (reserve_min alone otherwise), plus the forecast growth of its own demand
//     (smoothed demand - guaranteed use), rounded up to whole GPUs, at most idle
//  3. lendable = idle - reserve, and 0 for lend_backoff after the tenant reclaimed.
#pragma once

#include "core/types.hpp"
#include "policy/deepshare/config.hpp"

namespace ds::deepshare {

struct LendInputs {
  int quota = 0;
  int guaranteed = 0;  // GPUs of its running non-borrowed + queued entitled jobs
  double assurance = 1;
  double forecast_demand = 0;   // smoothed GPUs of running + pending jobs
  Time since_reclaim = kNever;  // time since it last reclaimed lent capacity
  int unit = 1;                 // the reserve is a whole number of these (a GPU in milli-GPUs)
};

struct Lending {
  int idle = 0;
  int reserve = 0;
  int lendable = 0;
};

Lending lending(const LendInputs& in, const Config& c);

}  // namespace ds::deepshare
