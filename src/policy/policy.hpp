// The pure policy interface: a snapshot in, decisions out.
//
// A policy object holds its own state between cycles (queues, learned models) but
// has no clock, no I/O and no globals: everything it knows arrives in snapshots,
// so the simulator and the Slurm controller drive the same code.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "model/cluster.hpp"
#include "model/job.hpp"
#include "model/snapshot.hpp"
#include "model/tenant.hpp"

namespace ds {

// Per-tenant signals a policy exposes for timeseries.csv (sampled by the driver).
struct TenantTelemetry {
  double assurance = -1;  // A_t in [0, 1]; -1 when the policy has no such signal
  int lent_gpus = 0;      // idle quota currently lent to other tenants
  int reserve_gpus = 0;   // idle quota held back from lending
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual Decisions decide(const ClusterSnapshot& snapshot) = 0;
  // Fills one entry per tenant (already sized); the default leaves them unset.
  virtual void telemetry(std::span<TenantTelemetry> /*tenants*/) const {}
  // End-of-run figures for summary.json (e.g. predictor accuracy), as key -> value.
  virtual void summarize(std::map<std::string, double>& /*out*/) const {}
};

// Policy options from `--set key=value`. Getters record which keys were read so
// that unknown keys are reported instead of silently ignored.
class PolicyOptions {
 public:
  PolicyOptions() = default;
  explicit PolicyOptions(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  // Parses "key=value"; throws InputError on a malformed entry.
  void set(const std::string& key_value);

  [[nodiscard]] std::string get(const std::string& key, const std::string& fallback) const;
  [[nodiscard]] double get_double(const std::string& key, double fallback) const;
  [[nodiscard]] long get_int(const std::string& key, long fallback) const;
  [[nodiscard]] bool get_bool(const std::string& key, bool fallback) const;
  // The same within [min, max]: a value outside is an InputError naming the key and the
  // range ("--set ewma_tau_s: expected an integer in 1..3155760000, got '0'"). Every number
  // a policy reads should come through these (docs/formats.md, "Ranges").
  [[nodiscard]] double get_double(const std::string& key, double fallback, double min,
                                  double max) const;
  [[nodiscard]] long get_int(const std::string& key, long fallback, long min, long max) const;
  // Whole seconds within [min, max] seconds, returned in milliseconds.
  [[nodiscard]] Time get_seconds(const std::string& key, Time fallback, long min_s,
                                 long max_s) const;
  // Keys that were set but never read.
  [[nodiscard]] std::vector<std::string> unused() const;
  [[nodiscard]] const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
  mutable std::set<std::string> read_;
};

struct AuxData;  // model/aux_data.hpp

// Per-job state of a policy, indexed by JobId and grown as jobs are learned (the contract:
// no job count is known up front). Reading a job never seen gives the fill value.
template <class T>
class PerJob {
 public:
  explicit PerJob(T fill = T{}) : fill_(std::move(fill)) {}
  T& operator[](JobId id) {
    if (id.index() >= v_.size()) v_.resize(std::size_t{id.index()} + 1, fill_);
    return v_[id.index()];
  }
  const T& operator[](JobId id) const { return id.index() < v_.size() ? v_[id.index()] : fill_; }
  // Forgets what was kept for `id` (a driver may reuse the id of a job that left).
  void reset(JobId id) {
    if (id.index() < v_.size()) v_[id.index()] = fill_;
  }

 private:
  std::vector<T> v_;
  T fill_;
};

// An oracle policy's true run time of `job` (PolicyContext::oracle_work).
inline Time oracle_work(std::span<const Time> work, const JobSpec& job) {
  if (job.id.index() >= work.size())
    throw InputError("job '" + job.name + "': the driver knows no true run time for it (oracle)");
  return work[job.id.index()];
}

// States why `job` stays pending (Decisions::waiting).
inline void note_wait(Decisions& out, JobId job, WaitReason reason) {
  out.waiting.push_back({job, reason});
}
// No room: whether the free GPUs are too few (NoFit) or in the wrong places (Fragmented).
inline WaitReason room_reason(int free_gpus, const JobSpec& job) {
  return job.gpu_milli < kMilliPerGpu || job.gpus > free_gpus ? WaitReason::NoFit
                                                              : WaitReason::Fragmented;
}

// What a policy factory may look at: static facts, never the simulator's truth.
//
// The policy contract (docs/architecture.md): jobs are learned online, from the snapshots'
// deltas, so no job count or job list is known at construction; data files arrive
// already read, as values (`aux`), never as paths.
struct PolicyContext {
  const Cluster& cluster;
  std::span<const Tenant> tenants;
  const PolicyOptions& options;
  // True run times, indexed by JobId: given ONLY to policies registered as oracles
  // (e.g. Lucid's SJF, which sorts by the real duration); empty for all others.
  std::span<const Time> oracle_work = {};
  // Auxiliary inputs read by the driver (measured colocation pairs, Lucid's estimate and
  // forecast files), when there are any; null otherwise.
  const AuxData* aux = nullptr;
};

}  // namespace ds
