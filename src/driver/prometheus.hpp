// Prometheus text exposition (format 0.0.4) for an online driver, following its naming
// conventions: the unit last (`_seconds`, `_gpus`), counters end in `_total`, latencies are
// histograms, and a value that does not exist is omitted, never written as a sentinel such
// as -1. RpcStats records the latency and outcome of each call an engine adapter makes
// (Slurm: libslurm RPCs).
#pragma once

#include <cstdint>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ds::driver {

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

// RPC statistics of an engine adapter, per call kind (thread-safe: the controller's thread
// records, the metrics endpoint reads). Written as <prefix>_duration_seconds (histogram) and
// <prefix>_errors_total, labelled rpc=<call>.
class RpcStats {
 public:
  // `prefix`: e.g. "deepshare_slurm_rpc"; `what`: the calls, for the help text.
  explicit RpcStats(std::string prefix = "deepshare_slurm_rpc",
                    std::string what = "Slurm RPCs (libslurm calls)");
  void record(const char* op, double seconds, bool ok);
  void write(PromWriter& w) const;

 private:
  struct Op {
    std::string name;
    Histogram latency;
    std::uint64_t errors = 0;
  };
  std::string prefix_, what_;
  mutable std::mutex mu_;
  std::vector<Op> ops_;
};

}  // namespace ds::driver
