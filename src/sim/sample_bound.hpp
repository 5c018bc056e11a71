// Bounded time series: the simulator samples timeseries.csv every SimConfig::sample_interval,
// but keeps at most SimConfig::max_samples samples. When a run would keep more, every other
// sample is dropped and the interval doubles, so memory and output stay bounded however long
// the simulated span is (a job of 1e10 s, or a policy that keeps restarting jobs), and a
// sample still falls on every multiple of the current interval. Metrics never use these
// samples' resolution: they integrate the exact step series (RunRecord::steps).
#pragma once

#include <cstddef>

#include "model/run_record.hpp"

namespace ds {

// Keeps samples 0, 2, 4, ... of `r` (with their per-tenant rows, `tenants` per sample) and
// returns the doubled interval.
inline Time thin_samples(RunRecord& r, std::size_t tenants, Time interval) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < r.samples.size(); i += 2, ++kept) {
    r.samples[kept] = r.samples[i];
    for (std::size_t k = 0; k < tenants; ++k)
      r.tenant_samples[kept * tenants + k] = r.tenant_samples[i * tenants + k];
  }
  r.samples.resize(kept);
  r.tenant_samples.resize(kept * tenants);
  return interval * 2;
}

}  // namespace ds
