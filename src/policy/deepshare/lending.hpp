// How much idle guaranteed quota a tenant lends.
//
// Algorithm (docs/deepshare.md):
//  1. idle = quota - GPUs of its guaranteed (non-borrowed) jobs - GPUs owed to its
//     queued entitled jobs (the caller passes both as `guaranteed`)
//  2. reserve = idle x (reserve_min + reserve_at_risk x (1 - A)) when coupled to
//     assurance (reserve_min alone otherwise), plus the forecast growth of its own demand
//     (smoothed demand - guaranteed use), rounded up to whole GPUs, at most idle
//  3. lendable = idle - reserve, and 0 for lend_backoff after the tenant reclaimed.
//
// The lending step (Lender::compute, after the guaranteed starts of the cycle) refreshes each
// tenant's Lending when its inputs changed (every tenant each assurance_refresh), keeps the
// totals as sums of the cached values, and every assurance_refresh each tenant's share of
// the borrowed GPUs, in proportion to what it lends (the assurance outlook reads it).
#pragma once

#include <vector>

#include "core/types.hpp"
#include "policy/deepshare/book.hpp"
#include "policy/deepshare/config.hpp"
#include "policy/deepshare/cycle.hpp"

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

class Lender {
 public:
  // `unowned`: milli-GPUs of the cluster beyond every quota (always lendable).
  Lender(const Config& c, Book& book, int unowned);
  // Step "lending": sets cy.lent (reads cy.assured()).
  void compute(Cycle& cy);
  // Tenant t reclaimed lent capacity now: it lends nothing for lend_backoff.
  void reclaimed(std::size_t t, Time now);
  [[nodiscard]] double lent(std::size_t t) const { return tenants_[t].lent; }  // milli-GPUs
  [[nodiscard]] const Lending& of(std::size_t t) const { return tenants_[t].lend; }

 private:
  struct TenantLending {
    Lending lend;
    double lent = 0;  // its part of the borrowed GPUs
    Time last_reclaim = -kNever / 2;
  };
  void refresh(const Cycle& cy, std::size_t t);

  const Config& c_;
  Book& book_;
  std::vector<TenantLending> tenants_;
  int unowned_ = 0;
  int lendable_sum_ = 0, idle_sum_ = 0;  // over the tenants' cached Lending
  Time refreshed_at_ = -kNever / 2;      // last refresh of every tenant
};

}  // namespace ds::deepshare
