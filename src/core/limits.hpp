// The ranges every input is checked against, in one place (docs/formats.md, "Ranges").
//
// Why these numbers: they are far beyond any real trace or cluster, yet small enough that
// the arithmetic done on them cannot overflow. GPU quantities are kept in milli-GPUs in
// int32 (a cluster of 100,000 GPUs is 1e8 milli-GPUs; quotas add up to at most 1e9);
// times are int64 milliseconds (a submit time plus a duration stays below 2e13 ms, about
// 500,000 times less than the int64 limit, which leaves room for queueing, restarts and
// slowdowns until the simulator's own cap, kMaxSimulatedTime).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.hpp"

namespace ds::limits {

constexpr Time kYear = 31'557'600 * kSecond;  // 365.25 days

// Submit times: within +-100 years of the Unix epoch (Helios' dates, openb's seconds).
constexpr Time kMaxAbsTime = 100 * kYear;
// A job's work (its run time alone): 0 .. 1e10 s (about 317 years).
constexpr Time kMaxDuration = 10'000'000'000 * kSecond;
// Intervals a user sets: SLOs, checkpoint intervals, policy time options: 0 .. 100 years.
constexpr Time kMaxInterval = 100 * kYear;
// The simulator stops with an error past this simulated time (about 10,000 years): a run
// that gets there is a policy that never lets its jobs finish, not a result.
constexpr Time kMaxSimulatedTime = 10'000 * kYear;

constexpr int kMaxClusterGpus = 100'000;             // all nodes together
constexpr int kMaxNodes = 100'000;                   // nodes in a cluster
constexpr std::int64_t kMaxQuotaTotal = 1'000'000;   // tenants' quotas added up (GPUs)
constexpr std::size_t kMaxTenants = 10'000;          // tenants (VCs, QoS classes)
constexpr std::size_t kMaxJobs = 10'000'000;         // jobs in a workload
constexpr std::int64_t kMaxGpuMemoryMib = 1 << 20;   // 1 TiB per GPU
constexpr std::int64_t kMaxBatchSize = 100'000'000;  // a profile's batch size
constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{2} << 30;  // one CSV file: 2 GiB
constexpr std::uintmax_t kMaxYamlBytes = 16 << 20;                  // a cluster file: 16 MiB

// Factors a user sets (--load-factor, --loads, --fit-load).
constexpr double kMinFactor = 1e-3;
constexpr double kMaxFactor = 1e3;

}  // namespace ds::limits
