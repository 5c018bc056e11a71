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

class Policy {
 public:
  virtual ~Policy() = default;
  virtual Decisions decide(const ClusterSnapshot& snapshot) = 0;
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
};

}  // namespace ds
