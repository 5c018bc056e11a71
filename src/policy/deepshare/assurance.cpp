#include "policy/deepshare/assurance.hpp"

#include <algorithm>
#include <cmath>

namespace ds::deepshare {

double raw_assurance(const AssuranceInputs& in, const Config& c) {
  const std::int64_t entitled = std::min<std::int64_t>(in.quota, in.demand);
  const double share = entitled <= 0 ? 1.0 : std::min(1.0, static_cast<double>(in.held) / entitled);
  const double delay =
      in.slo <= 0 ? 1.0 : std::clamp(1.0 - static_cast<double>(in.oldest_wait) / in.slo, 0.0, 1.0);
  const double outlook =
      in.quota <= 0 ? 1.0 : std::clamp(1.0 - in.lent * (1.0 - in.lent_back) / in.quota, 0.0, 1.0);
  const double w = c.weight_share + c.weight_delay + c.weight_outlook;
  return (c.weight_share * share + c.weight_delay * delay + c.weight_outlook * outlook) / w;
}

AssuranceSignal::AssuranceSignal(std::size_t tenants, const Config& c)
    : c_(&c),
      value_(tenants, 1.0),
      at_risk_(tenants, false),
      last_(tenants, 0),
      started_(tenants, 0) {}

void AssuranceSignal::update(Time now, std::span<const AssuranceInputs> inputs) {
  for (std::size_t t = 0; t < inputs.size(); ++t) update(t, now, inputs[t]);
}

void AssuranceSignal::update(std::size_t t, Time now, const AssuranceInputs& in) {
  const double alpha =
      !started_[t] || c_->ewma_tau <= 0 ? 1.0 : decay_.alpha(now - last_[t], c_->ewma_tau);
  value_[t] += alpha * (raw_assurance(in, *c_) - value_[t]);
  if (value_[t] < c_->at_risk_below) at_risk_[t] = true;
  if (value_[t] > c_->healthy_above) at_risk_[t] = false;
  started_[t] = 1;
  last_[t] = now;
}

Assurance::Assurance(const Config& c, Book& book, const Lender& lender)
    : c_(c), book_(book), lender_(lender), signal_(book.tenants(), c), forecast_(book.tenants()) {}

void Assurance::update(Cycle& cy) {
  const ClusterSnapshot& s = cy.s;
  const int total = book_.borrowed_total();
  Marks& marks = book_.assurance_marks();
  Time horizon = -1;  // the back share for one SLO at a time (usually all tenants')
  double back = 1.0;
  auto refresh = [&](std::size_t t) {
    const TenantBook& tb = book_.tenant(t);
    marks.clear(t);
    AssuranceInputs a;
    a.quota = quota(s, t);
    a.held = tb.guaranteed + tb.borrowed;
    a.demand = a.held + tb.pending_gpus;
    a.slo = s.tenants[t].slo_queue;
    if (!tb.entitled.empty()) a.oldest_wait = s.now - tb.entitled.begin()->first;
    a.lent = lender_.lent(t);
    if (total > 0 && a.lent > 0 && c_.prediction) {
      // A job's remaining time is at least a minute (Book::remaining).
      const Time h = std::max(a.slo, kMinute);
      if (h != horizon) {
        horizon = h;
        back = static_cast<double>(book_.borrowed_back(s.now, h)) / total;
      }
      a.lent_back = back;
    }
    signal_.update(t, s.now, a);
    Forecast& f = forecast_[t];
    const double alpha = forecast_decay_.alpha(s.now - f.at, c_.demand_tau);
    f.demand += alpha * (a.demand - f.demand);
    f.at = s.now;
  };
  if (s.now - refreshed_at_ >= c_.assurance_refresh) {
    refreshed_at_ = s.now;
    for (std::size_t t = 0; t < book_.tenants(); ++t) refresh(t);
  } else {
    for (std::size_t t : marks.list())
      if (marks.marked(t)) refresh(t);
    for (std::size_t t : book_.entitled_tenants())
      if (s.now != signal_.updated(t)) refresh(t);
  }
  marks.clear_list();
  cy.assurance = this;
}

}  // namespace ds::deepshare
