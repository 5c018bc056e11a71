// The per-tenant assurance signal A_t in [0, 1]: how well tenant t's entitlement
// is honoured now and in the near future. It drives lending, reclaim and sharing.
//
// Algorithm (our definition; docs/deepshare.md):
//  1. share   s = min(1, held / min(quota, demand))           (1 when nothing is entitled)
//  2. delay   d = clamp(1 - oldest entitled wait / SLO, 0, 1)  (1 when none waits)
//  3. outlook o = clamp(1 - lent x (1 - back) / quota, 0, 1), where `back` is the share
//     of the GPUs lent out that are predicted to come back within the SLO
//  4. raw     a = (ws s + wd d + wo o) / (ws + wd + wo)
//  5. smooth  A += (1 - exp(-dt / tau)) (a - A)   (time-based EWMA, exact for any dt)
//  6. hysteresis: "at risk" from A < at_risk_below until A > healthy_above.
//
// The assurance step (Assurance::update) refreshes A_t of the tenants whose inputs changed,
// of those with entitled jobs waiting (their delay term moves with time), and of every
// tenant each assurance_refresh; with it each tenant's smoothed demand forecast (demand_tau),
// which lending reads.
#pragma once

#include <cmath>
#include <span>
#include <vector>

#include "core/types.hpp"
#include "policy/deepshare/book.hpp"
#include "policy/deepshare/config.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/deepshare/lending.hpp"

namespace ds::deepshare {

struct AssuranceInputs {
  int quota = 0;
  int held = 0;             // GPUs of the tenant's running jobs
  std::int64_t demand = 0;  // GPUs of its running + pending jobs (a sum over every job)
  Time oldest_wait = 0;     // longest current wait among its entitled pending jobs
  Time slo = seconds(300);
  double lent = 0;       // GPUs of its idle quota used by borrowers
  double lent_back = 1;  // share of those predicted back within the SLO
};

double raw_assurance(const AssuranceInputs& in, const Config& c);

// The weight of an exponential moving average after `dt`: 1 - exp(-dt / tau), remembered for
// the last (dt, tau) asked. Tenants refreshed in the same cycles ask for the same dt over and
// over (every tenant with entitled jobs waiting, each cycle); the value is the one computed
// anew.
class Decay {
 public:
  double alpha(Time dt, Time tau) {
    if (dt != dt_ || tau != tau_) {
      dt_ = dt;
      tau_ = tau;
      alpha_ = 1.0 - std::exp(-static_cast<double>(dt) / static_cast<double>(tau));
    }
    return alpha_;
  }

 private:
  Time dt_ = -1, tau_ = 0;
  double alpha_ = 0;
};

class AssuranceSignal {
 public:
  AssuranceSignal(std::size_t tenants, const Config& c);
  void update(Time now, std::span<const AssuranceInputs> inputs);  // every tenant
  // One tenant (its EWMA runs from its own last update: exact while its inputs were
  // constant in between).
  void update(std::size_t t, Time now, const AssuranceInputs& in);
  [[nodiscard]] double value(std::size_t t) const { return value_[t]; }
  [[nodiscard]] bool at_risk(std::size_t t) const { return at_risk_[t]; }
  [[nodiscard]] Time updated(std::size_t t) const { return last_[t]; }

 private:
  const Config* c_;
  std::vector<double> value_;
  std::vector<bool> at_risk_;
  std::vector<Time> last_;
  std::vector<char> started_;
  Decay decay_;
};

class Assurance {
 public:
  // `lender`: what each tenant lent as of the last lending step (the outlook's input).
  Assurance(const Config& c, Book& book, const Lender& lender);
  // Step "assurance": sets cy.assurance.
  void update(Cycle& cy);
  [[nodiscard]] double value(std::size_t t) const { return signal_.value(t); }
  [[nodiscard]] bool at_risk(std::size_t t) const { return signal_.at_risk(t); }
  [[nodiscard]] double forecast(std::size_t t) const { return forecast_[t].demand; }  // milli-GPUs
  // When every tenant was last refreshed (sharing retries partners once per refresh).
  [[nodiscard]] Time refreshed_at() const { return refreshed_at_; }

 private:
  const Config& c_;
  Book& book_;
  const Lender& lender_;
  AssuranceSignal signal_;
  struct Forecast {
    double demand = 0;  // smoothed demand
    Time at = 0;        // when it was last updated
  };
  std::vector<Forecast> forecast_;  // per tenant
  Decay forecast_decay_;
  Time refreshed_at_ = -kNever / 2;
};

}  // namespace ds::deepshare
