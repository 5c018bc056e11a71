#include "policy/deepshare/lending.hpp"

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

}  // namespace ds::deepshare
