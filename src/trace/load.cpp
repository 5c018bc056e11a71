#include "trace/load.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/cluster_file.hpp"
#include "trace/helios.hpp"
#include "trace/native.hpp"
#include "trace/openb.hpp"
#include "trace/venus.hpp"

namespace ds {
namespace {

// Each wrapper tells its importer whether a cluster file will supply the cluster, so that
// it does not insist on finding the trace's own sizing files.
Workload load_venus_format(const std::string& path, const LoadOptions& o) {
  VenusOptions v;
  v.cluster_from_caller = !o.cluster_file.empty();
  return load_venus(path, v);
}

Workload load_helios_format(const std::string& path, const LoadOptions& o) {
  HeliosOptions h;
  h.cluster_from_caller = !o.cluster_file.empty();
  return load_helios(path, h);
}

Workload load_openb_format(const std::string& path, const LoadOptions& o) {
  OpenbOptions b;
  b.cluster_from_caller = !o.cluster_file.empty();
  return load_openb(path, b);
}

Workload load_native_format(const std::string& path, const LoadOptions& o) {
  if (o.cluster_file.empty())
    throw InputError(SourceLocation{path},
                     "the native format has no cluster: pass --cluster FILE (a YAML file with "
                     "the nodes and tenants; see docs/formats.md)");
  NativeOptions n;
  n.columns = o.columns;
  return load_native(path, n);
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// --fit-load grows or shrinks every node group by one factor: refuse, before building it,
// a cluster beyond the limits (a tiny target on a big trace would create millions of nodes).
void check_fit(const Workload& w, double target) {
  if (!(target >= limits::kMinFactor && target <= limits::kMaxFactor))
    throw InputError("--fit-load: expected a load in " +
                     range_text(limits::kMinFactor, limits::kMaxFactor));
  const double offered = w.offered_load();
  if (!(offered > 0)) return;  // fit_cluster_to_load explains this case
  const double factor = offered / target;
  double quotas = 0;
  for (const auto& t : w.tenants) quotas += t.quota_gpus;
  const double gpus = w.cluster.total_gpus() * factor;
  const double nodes = static_cast<double>(w.cluster.nodes.size()) * (std::floor(factor) + 1);
  if (gpus > limits::kMaxClusterGpus || nodes > limits::kMaxNodes ||
      quotas * factor > static_cast<double>(limits::kMaxQuotaTotal))
    throw InputError("--fit-load " + short_number(target) + ": the offered load is " +
                     short_number(offered) + ", so the cluster would grow to about " +
                     std::to_string(static_cast<long long>(std::min(gpus, 1e15))) +
                     " GPUs; at most " + std::to_string(limits::kMaxClusterGpus) + " GPUs and " +
                     std::to_string(limits::kMaxNodes) + " nodes are allowed");
}

// A workload with no GPU job, or a cluster with no GPU, gives a run whose every number is
// empty or zero: refused, rather than reported as a result.
void check_runnable(const Workload& w, const std::string& path) {
  if (w.jobs.empty()) {
    std::string skipped;
    for (const auto& n : w.notes)
      if (n.find("skipped") != std::string::npos) skipped += "; " + n;
    throw InputError(SourceLocation{path},
                     "holds no GPU job to simulate" +
                         (skipped.empty() ? std::string(" (only a header)") : skipped));
  }
  if (w.cluster.total_gpus() == 0)
    throw InputError(SourceLocation{path},
                     "the cluster has no GPU (no node, or only GPU-less ones): every job would "
                     "be rejected; check the sizing file, or pass --cluster FILE");
}

}  // namespace

void drop_profiles(Workload& w) {
  for (auto& j : w.jobs) {
    j.profile = -1;
    j.gpu_util = -1;
    j.gpu_memory_mib = 0;
  }
  w.profiles.clear();
  w.notes.push_back("profiles dropped: no job has a workload profile, GPU utilization or memory");
}

const std::vector<TraceFormat>& trace_formats() {
  static const std::vector<TraceFormat> table = {
      {"venus", "Lucid-prepared Helios Venus jobs CSV, or a folder of Lucid's per-VC logs",
       &load_venus_format},
      {"helios", "raw HeliosData cluster_log.csv; VC sizes from cluster_gpu_number.csv beside it",
       &load_helios_format},
      {"openb", "Alibaba openb pod list CSV; nodes from openb_node_list_gpu_node.csv beside it",
       &load_openb_format},
      {"native", "DeepShare CSV (job_id,tenant,submit_s,duration_s,gpus,...); needs --cluster",
       &load_native_format},
  };
  return table;
}

Workload load_trace(const std::string& path, const LoadOptions& options) {
  if (!options.columns.empty() && options.format != "native")
    throw InputError("--columns applies only to --format native (got --format " + options.format +
                     ")");
  for (const auto& f : trace_formats()) {
    if (f.name != options.format) continue;
    if (!std::filesystem::exists(path))
      throw InputError(SourceLocation{path}, "no such file or folder");
    Workload w = f.load(path, options);
    if (!options.cluster_file.empty()) {
      apply_cluster(w, read_cluster_file(options.cluster_file), options.cluster_file);
      w.finalize();
    }
    if (options.fit_load > 0) {
      check_fit(w, options.fit_load);
      w.fit_cluster_to_load(options.fit_load);
      w.finalize();  // the resized cluster is checked like any other
    }
    if (!options.profiles) drop_profiles(w);
    check_runnable(w, path);
    return w;
  }
  std::string known;
  for (const auto& f : trace_formats()) known += (known.empty() ? "" : ", ") + f.name;
  throw InputError("unknown trace format '" + options.format + "' (known: " + known + ")");
}

}  // namespace ds
