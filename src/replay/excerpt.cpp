#include "replay/excerpt.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/spec.hpp"
#include "trace/load.hpp"

namespace ds::slurm {

void parse_excerpt(const std::string& text, ExcerptSpec& s) {
  // Every key once, every value range-checked (core/spec.hpp): stoul wrapped "-1" and stod
  // took "nan" and "inf", which gave negative times and undefined behaviour downstream.
  const KeyValueSpec kv("--excerpt", text, {"from", "jobs", "load", "min", "max"});
  constexpr double kMaxWall = 1e6;  // seconds a stand-in may last (11.6 days)
  s.from = kv.unsigned_in("from", s.from, 0, limits::kMaxJobs, "a job index");
  s.jobs = kv.unsigned_in("jobs", s.jobs, 1, limits::kMaxJobs, "a job count");
  s.load = kv.number_in("load", s.load, limits::kMinFactor, limits::kMaxFactor, "a load factor");
  s.min_wall_s = kv.number_in("min", s.min_wall_s, 0, kMaxWall, "wall seconds");
  s.max_wall_s = kv.number_in("max", s.max_wall_s, 0, kMaxWall, "wall seconds (0: no cap)");
  if (s.max_wall_s > 0 && s.max_wall_s < s.min_wall_s) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "--excerpt: max=%g is below min=%g (0: no cap)", s.max_wall_s,
                  s.min_wall_s);
    throw InputError(buf);
  }
}

std::string format_excerpt(const ExcerptSpec& s) {
  // Shortest round-trip numbers: `fidelity` parses this (replay.json) back to the very spec
  // the replay ran, so that its excerpt is the same workload (%g would round load=1.2345678).
  auto num = [](double v) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, ec == std::errc() ? end : buf);
  };
  return "from=" + std::to_string(s.from) + ",jobs=" + std::to_string(s.jobs) +
         ",load=" + num(s.load) + ",min=" + num(s.min_wall_s) + ",max=" + num(s.max_wall_s);
}

Workload make_excerpt(const ExcerptSpec& spec, const ControllerConfig& config,
                      const std::vector<NodeShape>& nodes) {
  LoadOptions lo;
  lo.format = spec.format;
  const Workload full = load_trace(spec.trace, lo);
  Workload w;
  w.name = spec.trace + " [" + format_excerpt(spec) + "]";
  w.format = spec.format;
  int max_node = 0;
  for (const auto& n : nodes) {
    Node node;
    node.id = NodeId(static_cast<std::uint32_t>(w.cluster.nodes.size()));
    node.name = n.name;
    node.gpus = n.gpus;
    node.first_gpu = w.cluster.total_gpus();
    node.gpu_memory_mib = config.gpu_memory_mib;
    w.cluster.nodes.push_back(node);
    max_node = std::max(max_node, n.gpus);
  }
  std::map<std::string, TenantId> by_trace;
  for (const auto& t : config.tenants) {
    w.tenants.push_back(t.tenant);
    if (!t.trace_tenant.empty()) by_trace[t.trace_tenant] = t.tenant.id;
  }
  if (by_trace.empty())
    throw InputError(config.source + ": no tenant names a trace tenant (trace: KEY)");
  std::size_t skipped_big = 0, seen = 0;
  Time first = kNever;
  for (std::size_t i = 0; i < full.jobs.size() && w.jobs.size() < spec.jobs; ++i) {
    const JobSpec& j = full.jobs[i];
    auto it = by_trace.find(full.tenants[j.tenant.index()].name);
    if (it == by_trace.end()) continue;
    if (j.gpus > max_node || j.gpu_milli < kMilliPerGpu) {
      if (seen >= spec.from) ++skipped_big;  // among the excerpt's jobs, not before it
      continue;
    }
    if (seen++ < spec.from) continue;
    if (first == kNever) first = j.submit;
    JobSpec c = j;
    c.tenant = it->second;
    c.profile = -1;
    c.user = w.intern_user(full.users.at(j.user.index()));
    // Checked conversions: the spec's ranges keep these finite, the limits keep them whole.
    const auto submit =
        round_in_range(static_cast<double>(j.submit - first) / spec.load, 0, limits::kMaxAbsTime);
    const double lo_ms = spec.min_wall_s * spec.time_scale * 1000.0;
    const double hi_ms = spec.max_wall_s > 0 ? spec.max_wall_s * spec.time_scale * 1000.0 : 1e300;
    const auto work = round_in_range(
        std::clamp(static_cast<double>(full.truth[i].work), lo_ms, std::max(lo_ms, hi_ms)), 0,
        limits::kMaxDuration);
    if (!submit || !work)
      throw InputError("--excerpt " + format_excerpt(spec) + " with time scale " +
                       std::to_string(spec.time_scale) + ": job " + quote_input(j.name) +
                       " would be submitted or run beyond " +
                       std::to_string(limits::kMaxAbsTime / limits::kYear) + " years");
    c.submit = *submit;
    w.jobs.push_back(c);
    w.truth.push_back(JobTruth{*work, FinalState::Completed});
  }
  if (w.jobs.empty())
    throw InputError("the excerpt selects no job (check the tenants' trace: keys)");
  if (skipped_big)
    w.notes.push_back("skipped " + std::to_string(skipped_big) +
                      " jobs in the excerpt's span that need more than " +
                      std::to_string(max_node) + " GPUs (one node) or a fractional GPU");
  w.finalize();
  return w;
}

}  // namespace ds::slurm
