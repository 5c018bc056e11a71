#include "driver/lending.hpp"

#include <algorithm>
#include <utility>

namespace ds::driver {

Lending account_lending(std::span<const int> quota, std::span<const int> held) {
  const std::size_t n = quota.size();
  Lending out;
  out.over_quota.assign(n, 0);
  out.lent.assign(n, 0);
  std::vector<int> idle(n, 0);
  long total_over = 0, total_idle = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const int q = std::max(0, quota[t]), h = std::max(0, held[t]);
    out.over_quota[t] = std::max(0, h - q);
    idle[t] = std::max(0, q - h);
    total_over += out.over_quota[t];
    total_idle += idle[t];
  }
  const long from_quota = std::min(total_over, total_idle);
  // Proportional shares of the idle quota, largest remainder first (ties: tenant order).
  long given = 0;
  std::vector<std::pair<long, std::size_t>> rest;
  for (std::size_t t = 0; t < n && total_idle > 0; ++t) {
    const long num = from_quota * idle[t];
    out.lent[t] = static_cast<int>(num / total_idle);
    given += out.lent[t];
    rest.emplace_back(-(num % total_idle), t);
  }
  std::sort(rest.begin(), rest.end());
  for (std::size_t k = 0; given < from_quota && k < rest.size(); ++k, ++given)
    ++out.lent[rest[k].second];
  out.unowned = static_cast<int>(total_over - from_quota);
  return out;
}

}  // namespace ds::driver
