// Operations helpers of the Slurm controller that need no libslurm (unit-tested in
// slurm_core_test.cpp):
//  - Prometheus text exposition (format 0.0.4) following its naming conventions: the unit
//    last (`_seconds`, `_gpus`), counters end in `_total`, latencies are histograms, and a
//    value that does not exist is omitted, never written as a sentinel such as -1;
//  - the lent / borrowed accounting, one definition for every policy (docs/slurm.md §10):
//    a tenant borrows the GPUs it holds beyond its quota; those GPUs come out of other
//    tenants' idle quota (lent, shared out in proportion to the idle quota) or out of
//    capacity no quota covers, so that sum(lent) + unowned = sum(borrowed);
//  - what a configuration reload (SIGHUP) may change in a running controller.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ds::slurm {

struct ControllerConfig;  // slurm/config.hpp

// A Prometheus histogram: counts per bucket (upper bounds, ascending; +Inf implied).
struct Histogram {
  explicit Histogram(std::vector<double> upper_bounds = {});
  void observe(double v);
  std::vector<double> bounds;
  std::vector<std::uint64_t> counts;  // per bucket, the last one is +Inf; not cumulative
  double sum = 0;
  std::uint64_t count = 0;
};
// Buckets for a scheduling cycle / an RPC: 1 ms .. 10 s.
std::vector<double> latency_buckets();

// Writes the text exposition format; names and label values are escaped.
class PromWriter {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;
  // # HELP and # TYPE lines of a metric family (type: gauge, counter, histogram, info).
  void family(const std::string& name, const char* type, const std::string& help);
  void sample(const std::string& name, const Labels& labels, double value);
  void sample(const std::string& name, double value) { sample(name, {}, value); }
  // The _bucket (cumulative, with le), _sum and _count series of `h`.
  void histogram(const std::string& name, const Labels& labels, const Histogram& h);
  [[nodiscard]] std::string str() const { return o_.str(); }

 private:
  std::ostringstream o_;
};
std::string prom_number(double v);  // integers without a fraction, +Inf, NaN

struct Lending {
  std::vector<int> borrowed;  // per tenant: GPUs held beyond its quota
  std::vector<int> lent;      // per tenant: its idle quota that borrowers use
  int unowned = 0;            // borrowed GPUs that no tenant's quota covers
};
// quota[t], held[t]: whole GPUs (colocated clients hold none of their own).
Lending account_lending(std::span<const int> quota, std::span<const int> held);

// What a reloaded configuration changes: keys applied live, keys that need a restart
// (kept at their running value), and whether the policy must be rebuilt (policy, options
// or tenant knobs changed: the rebuilt policy forgets learned run times, as on a restart).
struct ReloadPlan {
  std::vector<std::string> live;
  std::vector<std::string> restart;
  bool rebuild_policy = false;
};
ReloadPlan plan_reload(const ControllerConfig& running, const ControllerConfig& next);

// The time of a controller cycle whose clock reads `clock`, after a cycle at `previous`:
// the clock, except that a cycle that has passed the time the policy asked to be woken at
// (`wake_at`, Decisions::wake_at; kNever: none) runs at exactly that time, and never earlier
// than the previous cycle. A wake time that is reached is consumed (set to kNever).
std::int64_t cycle_time(std::int64_t previous, std::int64_t clock, std::int64_t& wake_at);

// Starts a replay's journal at `path` with the given clock (Controller::load_clock_from_journal
// reads it back) and a marker line. An existing file is replaced only if it carries that
// marker (an earlier replay into the same folder wrote it); any other file is left alone and
// the replay refused (InputError): `deepshare slurm replay` deletes no file it did not create.
void start_replay_journal(const std::string& path, std::int64_t wall0_ms, std::int64_t origin,
                          double scale);
inline constexpr const char* kReplayJournalMarker =
    "# journal of `deepshare slurm replay` (replaced by the next replay into this folder)";

// Slurm RPC statistics, per call kind (thread-safe: the controller's thread records, the
// metrics endpoint reads).
class RpcStats {
 public:
  RpcStats();
  void record(const char* op, double seconds, bool ok);
  void write(PromWriter& w) const;

 private:
  struct Op {
    std::string name;
    Histogram latency;
    std::uint64_t errors = 0;
  };
  mutable std::mutex mu_;
  std::vector<Op> ops_;
};

}  // namespace ds::slurm
