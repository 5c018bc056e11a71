#include "replay/excerpt.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "trace/load.hpp"

namespace ds::slurm {

void parse_excerpt(const std::string& text, ExcerptSpec& s) {
  std::size_t p = 0;
  while (p < text.size()) {
    std::size_t e = text.find(',', p);
    const std::string kv = text.substr(p, e == std::string::npos ? std::string::npos : e - p);
    p = e == std::string::npos ? text.size() : e + 1;
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw InputError("--excerpt: '" + kv + "' is not KEY=VALUE");
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    try {
      if (k == "from")
        s.from = std::stoul(v);
      else if (k == "jobs")
        s.jobs = std::stoul(v);
      else if (k == "load")
        s.load = std::stod(v);
      else if (k == "min")
        s.min_wall_s = std::stod(v);
      else if (k == "max")
        s.max_wall_s = std::stod(v);
      else
        throw InputError("--excerpt: unknown key '" + k + "' (from, jobs, load, min, max)");
    } catch (const std::logic_error&) {
      throw InputError("--excerpt: bad value in '" + kv + "'");
    }
  }
  if (s.load <= 0 || s.jobs == 0) throw InputError("--excerpt: load and jobs must be > 0");
}

std::string format_excerpt(const ExcerptSpec& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "from=%zu,jobs=%zu,load=%g,min=%g,max=%g", s.from, s.jobs, s.load,
                s.min_wall_s, s.max_wall_s);
  return buf;
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
    c.submit = static_cast<Time>(std::llround(static_cast<double>(j.submit - first) / spec.load));
    const double lo_ms = spec.min_wall_s * spec.time_scale * 1000.0;
    const double hi_ms = spec.max_wall_s > 0 ? spec.max_wall_s * spec.time_scale * 1000.0 : 1e300;
    const double work =
        std::clamp(static_cast<double>(full.truth[i].work), lo_ms, std::max(lo_ms, hi_ms));
    w.jobs.push_back(c);
    w.truth.push_back(JobTruth{static_cast<Time>(std::llround(work)), FinalState::Completed});
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
