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
#include <vector>

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

// What a policy factory may look at: static facts, never the simulator's truth.
struct PolicyContext {
  const Cluster& cluster;
  std::span<const Tenant> tenants;
  std::span<const JobSpec> jobs;
  const PolicyOptions& options;
  std::span<const Profile> profiles = {};
  // True run times, indexed by JobId: given ONLY to policies registered as oracles
  // (e.g. Lucid's SJF, which sorts by the real duration); empty for all others.
  std::span<const Time> oracle_work = {};
  // Folder of auxiliary inputs (e.g. the Venus aux/ files), when known; empty otherwise.
  std::string aux_dir = {};
};

}  // namespace ds
