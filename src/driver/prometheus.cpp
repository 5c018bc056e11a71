#include "driver/prometheus.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ds::driver {
namespace {

std::string escape_label(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '\\' || c == '"')
      o += '\\', o += c;
    else if (c == '\n')
      o += "\\n";
    else
      o += c;
  }
  return o;
}

std::string label_text(const PromWriter::Labels& labels) {
  if (labels.empty()) return "";
  std::string o = "{";
  for (std::size_t i = 0; i < labels.size(); ++i)
    o += (i ? "," : "") + labels[i].first + "=\"" + escape_label(labels[i].second) + "\"";
  return o + "}";
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void Histogram::observe(double v) {
  const auto it = std::lower_bound(bounds.begin(), bounds.end(), v);  // first bound >= v
  ++counts[static_cast<std::size_t>(it - bounds.begin())];
  sum += v;
  ++count;
}

std::vector<double> latency_buckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::string prom_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

void PromWriter::family(const std::string& name, const char* type, const std::string& help) {
  o_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

void PromWriter::sample(const std::string& name, const Labels& labels, double value) {
  o_ << name << label_text(labels) << ' ' << prom_number(value) << '\n';
}

void PromWriter::histogram(const std::string& name, const Labels& labels, const Histogram& h) {
  std::uint64_t cum = 0;
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    cum += h.counts[i];
    Labels l = labels;
    l.emplace_back("le", i < h.bounds.size() ? prom_number(h.bounds[i]) : "+Inf");
    sample(name + "_bucket", l, static_cast<double>(cum));
  }
  sample(name + "_sum", labels, h.sum);
  sample(name + "_count", labels, static_cast<double>(h.count));
}

RpcStats::RpcStats(std::string prefix, std::string what)
    : prefix_(std::move(prefix)), what_(std::move(what)) {}

void RpcStats::record(const char* op, double seconds, bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(ops_.begin(), ops_.end(), [&](const Op& o) { return o.name == op; });
  if (it == ops_.end()) {
    ops_.push_back({op, Histogram(latency_buckets()), 0});
    it = ops_.end() - 1;
  }
  it->latency.observe(seconds);
  it->errors += ok ? 0 : 1;
}

void RpcStats::write(PromWriter& w) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const Op*> sorted;
  for (const auto& o : ops_) sorted.push_back(&o);
  std::sort(sorted.begin(), sorted.end(),
            [](const Op* x, const Op* y) { return x->name < y->name; });
  const std::string duration = prefix_ + "_duration_seconds", errors = prefix_ + "_errors_total";
  w.family(duration, "histogram", "Latency of the controller's " + what_ + ", by call");
  for (const Op* o : sorted) w.histogram(duration, {{"rpc", o->name}}, o->latency);
  w.family(errors, "counter", what_ + " that failed (the call returned an error), by call");
  for (const Op* o : sorted) w.sample(errors, {{"rpc", o->name}}, static_cast<double>(o->errors));
}

}  // namespace ds::driver
