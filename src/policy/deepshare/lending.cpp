#include "policy/deepshare/lending.hpp"

#include "policy/deepshare/assurance.hpp"

#include <algorithm>
#include <cmath>

namespace ds::deepshare {

Lending lending(const LendInputs& in, const Config& c) {
  Lending l;
  l.idle = std::max(0, in.quota - in.guaranteed);
  if (!c.borrowing || l.idle == 0) {
    l.reserve = l.idle;
    return l;
  }
  double share = c.reserve_min;
  if (c.assurance) share += c.reserve_at_risk * (1.0 - std::clamp(in.assurance, 0.0, 1.0));
  const double growth = std::max(0.0, in.forecast_demand - in.guaranteed);
  const double want = l.idle * std::min(1.0, share) + (c.assurance ? growth : 0.0);
  const int unit = std::max(1, in.unit);
  const double reserve = std::ceil(want / unit - 1e-9) * unit;
  l.reserve = std::clamp(static_cast<int>(reserve), 0, l.idle);
  l.lendable = in.since_reclaim < c.lend_backoff ? 0 : l.idle - l.reserve;
  return l;
}

Lender::Lender(const Config& c, Book& book, int unowned)
    : c_(c), book_(book), tenants_(book.tenants()), unowned_(unowned) {}

void Lender::reclaimed(std::size_t t, Time now) {
  tenants_[t].last_reclaim = now;
  book_.touch(t);
}

void Lender::refresh(const Cycle& cy, std::size_t t) {
  const TenantBook& tb = book_.tenant(t);
  TenantLending& tl = tenants_[t];
  book_.lending_marks().clear(t);
  LendInputs in;
  in.quota = quota(cy.s, t);
  in.unit = kMilliPerGpu;
  in.guaranteed = tb.guaranteed + tb.queued_entitled;  // quota owed to queued entitled jobs
  in.assurance = cy.assured().value(t);
  in.forecast_demand = std::min<double>(cy.assured().forecast(t), in.quota);
  in.since_reclaim = cy.s.now - tl.last_reclaim;
  lendable_sum_ -= tl.lend.lendable;
  idle_sum_ -= tl.lend.idle;
  tl.lend = lending(in, c_);
  lendable_sum_ += tl.lend.lendable;
  idle_sum_ += tl.lend.idle;
}

void Lender::compute(Cycle& cy) {
  Marks& marks = book_.lending_marks();
  const bool all = cy.s.now - refreshed_at_ >= c_.assurance_refresh;
  if (all) {
    refreshed_at_ = cy.s.now;
    for (std::size_t t = 0; t < tenants_.size(); ++t) refresh(cy, t);
  } else {
    for (std::size_t t : marks.list())
      if (marks.marked(t)) refresh(cy, t);
  }
  marks.clear_list();
  Lendable l;
  l.lendable = unowned_ + lendable_sum_;
  l.idle = unowned_ + idle_sum_;
  // Present risk: some tenant has entitled jobs waiting. Without it, every idle GPU is lent
  // at once (reserves protect against present risk, not forecasts; capacity a lender
  // needs later comes back by reclaim).
  l.present_risk = !book_.entitled_tenants().empty();
  cy.lent = l;
  // Each tenant's part of the borrowed GPUs, in proportion to what it lends (refreshed
  // with the rest: it feeds the assurance outlook).
  const int borrowed = book_.borrowed_total();
  if (all)
    for (auto& tl : tenants_)
      tl.lent = l.lendable > 0 ? static_cast<double>(borrowed) * tl.lend.lendable / l.lendable : 0;
}

}  // namespace ds::deepshare
