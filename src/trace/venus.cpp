#include "trace/venus.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace fs = std::filesystem;

std::string find_vc_config(const std::string& trace_path) {
  fs::path p(trace_path);
  fs::path dir = fs::is_directory(p) ? p : p.parent_path();
  if (dir.empty()) dir = ".";
  for (const fs::path& c :
       {dir / "aux" / "vc_config.csv", dir.parent_path() / "aux" / "vc_config.csv"})
    if (fs::exists(c)) return c.string();
  return {};
}

namespace {

struct Row {
  JobSpec job;
  JobTruth truth;
  std::int64_t order = 0;  // position in the VC's Lucid order
};

void read_vc_config(const std::string& path, Workload& w, const VenusOptions& o) {
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  if (csv.header().size() < 2)
    throw InputError(SourceLocation{path, 1}, "expected two columns: VC name, node count");
  NodeTally tally;
  while (csv.next()) {
    std::string name(csv.field(0));
    if (name.empty()) csv.fail(0, "a VC name");
    const auto nodes = csv.get_int_in(1, 0, limits::kMaxNodes, "a node count", false);
    if (w.tenant_by_name(name).valid())
      throw InputError(csv.where(0), "VC " + quote_input(name) + " is listed twice");
    if (w.tenants.size() >= limits::kMaxTenants)
      throw InputError(csv.where(0), "more than " + std::to_string(limits::kMaxTenants) + " VCs");
    tally.add(csv.where(1), nodes, o.gpus_per_node);
    Tenant t;
    t.id = TenantId(static_cast<std::uint32_t>(w.tenants.size()));
    t.name = name;
    t.quota_gpus = static_cast<int>(nodes) * o.gpus_per_node;
    w.tenants.push_back(t);
    w.cluster.add_nodes(static_cast<int>(nodes), o.gpus_per_node, o.gpu_memory_mib, "", t.id,
                        name + "-n");
  }
  // Node names: <vc>-n<k> with k counted within the VC.
  std::vector<int> seen(w.tenants.size(), 0);
  for (auto& n : w.cluster.nodes)
    n.name = w.tenants[n.owner.index()].name + "-n" + std::to_string(seen[n.owner.index()]++);
}

void read_jobs(const std::string& path, Workload& w, std::vector<Row>& rows,
               std::unordered_map<std::string, std::size_t>& seen_ids, bool add_vcs) {
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const auto [c_id, c_user, c_vc, c_gpu, c_state, c_submit, c_dur] =
      require_helios_job_columns(csv);
  const auto c_order = csv.find_column("lucid_vc_order");
  ProfileColumns prof(csv);
  std::unordered_map<std::uint32_t, std::int64_t> next_order;  // per VC, when no order column
  std::unordered_map<std::string, TenantId> vc_ids;            // a hash map: traces have many rows
  for (const auto& t : w.tenants) vc_ids.emplace(t.name, t.id);
  while (csv.next()) {
    Row r;
    r.job.name = std::string(csv.field(c_id));
    if (r.job.name.empty()) csv.fail(c_id, "a job id");
    if (!seen_ids.emplace(r.job.name, rows.size()).second)
      throw InputError(csv.where(c_id), "duplicate job_id " + quote_input(r.job.name));
    const std::string vc(csv.field(c_vc));
    const auto known = vc_ids.find(vc);
    r.job.tenant = known == vc_ids.end() ? TenantId() : known->second;
    if (!r.job.tenant.valid() && add_vcs && !vc.empty()) {
      if (w.tenants.size() >= limits::kMaxTenants)
        throw InputError(csv.where(c_vc),
                         "more than " + std::to_string(limits::kMaxTenants) + " VCs");
      r.job.tenant = add_tenant(w, vc);
      vc_ids.emplace(vc, r.job.tenant);
    }
    if (!r.job.tenant.valid())
      throw InputError(csv.where(c_vc),
                       "field 'vc': " + quote_input(vc) + " is not in vc_config.csv");
    r.job.user = w.intern_user(std::string(csv.field(c_user)));
    r.job.gpus = static_cast<int>(read_gpu_count(csv, c_gpu, 1));
    r.job.submit = seconds(read_whole_seconds(csv, c_submit, false));
    r.truth.work = seconds(read_whole_seconds(csv, c_dur, true));
    r.truth.state = parse_final_state(csv.field(c_state));
    prof.read(csv, w, r.job);
    if (c_order) {
      r.order = csv.get_int(*c_order);
    } else {
      r.order = next_order[r.job.tenant.index()]++;
    }
    rows.push_back(std::move(r));
  }
}

}  // namespace

Workload load_venus(const std::string& path, const VenusOptions& options) {
  Workload w;
  w.name = path;
  w.format = "venus";
  const bool add_vcs = options.cluster_from_caller;
  const std::string vc_config =
      options.vc_config.empty() ? find_vc_config(path) : options.vc_config;
  if (!add_vcs) {
    if (vc_config.empty())
      throw InputError(SourceLocation{path},
                       "cannot find aux/vc_config.csv beside the trace (VC sizes); "
                       "pass --cluster FILE with the tenants and nodes");
    read_vc_config(vc_config, w, options);
  }
  if (!vc_config.empty()) w.aux_dir = fs::path(vc_config).parent_path().string();

  std::vector<Row> rows;
  std::unordered_map<std::string, std::size_t> seen_ids;
  if (fs::is_directory(path)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(path))
      if (e.is_regular_file() && e.path().extension() == ".csv") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw InputError(SourceLocation{path}, "folder holds no .csv log files");
    for (const auto& f : files) read_jobs(f.string(), w, rows, seen_ids, add_vcs);
  } else {
    read_jobs(path, w, rows, seen_ids, add_vcs);
  }
  std::vector<std::size_t> idx(rows.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    if (rows[a].job.submit != rows[b].job.submit) return rows[a].job.submit < rows[b].job.submit;
    return rows[a].order < rows[b].order;
  });
  w.jobs.reserve(rows.size());
  w.truth.reserve(rows.size());
  for (std::size_t i : idx) {
    w.jobs.push_back(std::move(rows[i].job));
    w.truth.push_back(rows[i].truth);
  }
  w.finalize();
  return w;
}

}  // namespace ds
