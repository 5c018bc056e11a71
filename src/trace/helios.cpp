#include "trace/helios.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace {

struct Vc {
  std::string name;
  std::size_t jobs = 0;
  long first_line = 0;  // first row of the trace that names it
};

struct Jobs {
  std::vector<JobSpec> specs;
  std::vector<JobTruth> truth;
  std::vector<std::size_t> vc;  // per job: index into vcs
  std::vector<Vc> vcs;          // in first-seen order
  std::size_t cpu_only = 0;
  std::int64_t last_submit_s = 0;
};

Jobs read_jobs(const std::string& path, Workload& w) {
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const auto [c_id, c_user, c_vc, c_gpu, c_state, c_submit, c_dur] =
      require_helios_job_columns(csv);
  Jobs out;
  std::unordered_map<std::string, std::size_t> vc_index;
  std::unordered_map<std::string, long> seen_ids;  // job id -> line
  while (csv.next()) {
    JobSpec job;
    JobTruth truth;
    job.name = std::string(csv.field(c_id));
    if (job.name.empty()) csv.fail(c_id, "a job id");
    if (auto [it, fresh] = seen_ids.emplace(job.name, csv.line()); !fresh)
      throw InputError(csv.where(c_id), "field 'job_id': duplicate job id " +
                                            quote_input(job.name) + " (first on line " +
                                            std::to_string(it->second) + ")");
    const std::string vc(csv.field(c_vc));
    if (vc.empty()) csv.fail(c_vc, "a VC name");
    const auto gpus = read_gpu_count(csv, c_gpu, 0);
    const auto submit = parse_datetime(csv.field(c_submit));
    const std::int64_t max_s = limits::kMaxAbsTime / kSecond;
    if (!submit || *submit < -max_s || *submit > max_s)
      csv.fail(c_submit, "a date and time 'YYYY-MM-DD HH:MM:SS' from " +
                             format_date(-max_s / 86400) + " to " + format_date(max_s / 86400));
    const auto dur = read_whole_seconds(csv, c_dur, true);
    if (gpus == 0) {  // checked after the row is validated: a skipped row is still a good row
      ++out.cpu_only;
      continue;
    }
    job.gpus = static_cast<int>(gpus);
    job.submit = seconds(*submit);
    job.user = w.intern_user(std::string(csv.field(c_user)));
    truth.work = seconds(dur);
    truth.state = parse_final_state(csv.field(c_state));
    auto [it, fresh] = vc_index.emplace(vc, out.vcs.size());
    if (fresh && out.vcs.size() >= limits::kMaxTenants)
      throw InputError(csv.where(c_vc),
                       "more than " + std::to_string(limits::kMaxTenants) + " VCs");
    if (fresh) out.vcs.push_back(Vc{vc, 0, csv.line()});
    ++out.vcs[it->second].jobs;
    out.vc.push_back(it->second);
    out.last_submit_s = out.specs.empty() ? *submit : std::max(out.last_submit_s, *submit);
    out.specs.push_back(std::move(job));
    out.truth.push_back(truth);
  }
  return out;
}

struct Sizes {
  std::vector<std::string> vcs;  // file column order
  std::vector<std::int64_t> gpus;
  std::int64_t day = 0;
};

// The row of cluster_gpu_number.csv with the last date <= last_day (see the header, step 5).
Sizes read_sizes(const std::string& path, std::int64_t last_day, bool have_jobs) {
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const auto c_date = csv.require_column("date");
  std::vector<std::size_t> cols;
  Sizes best;
  for (std::size_t i = 0; i < csv.header().size(); ++i) {
    if (i == c_date || csv.header()[i] == "total") continue;
    cols.push_back(i);
    best.vcs.push_back(csv.header()[i]);
  }
  bool found = false;
  std::unordered_map<std::int64_t, long> seen_days;
  std::int64_t first_day = 0;
  while (csv.next()) {
    const auto day = parse_date(csv.field(c_date));
    if (!day) csv.fail(c_date, "a date 'YYYY-MM-DD'");
    if (auto [it, fresh] = seen_days.emplace(*day, csv.line()); !fresh)
      throw InputError(csv.where(c_date), "field 'date': " + std::string(csv.field(c_date)) +
                                              " is listed twice (first on line " +
                                              std::to_string(it->second) + ")");
    std::vector<std::int64_t> gpus;
    std::int64_t total = 0;
    for (std::size_t c : cols) {
      gpus.push_back(read_gpu_count(csv, c, 0));
      total += gpus.back();  // <= columns x 100,000: no overflow
      if (total > limits::kMaxClusterGpus)
        csv.fail(c, "GPU counts that add up to at most " + std::to_string(limits::kMaxClusterGpus) +
                        " on a day");
    }
    first_day = seen_days.size() == 1 ? *day : std::min(first_day, *day);
    if ((*day <= last_day || !have_jobs) && (!found || *day > best.day)) {
      found = true;
      best.day = *day;
      best.gpus = std::move(gpus);
    }
  }
  if (!found)
    throw InputError(SourceLocation{path},
                     seen_days.empty()
                         ? std::string("no dates: expected one row per day")
                         : "starts on " + format_date(first_day) +
                               ", after the trace's last submit day " + format_date(last_day) +
                               "; pass --cluster FILE with the tenants and nodes");
  return best;
}

}  // namespace

Workload load_helios(const std::string& path, const HeliosOptions& options) {
  Workload w;
  w.name = path;
  w.format = "helios";
  Jobs jobs = read_jobs(path, w);
  std::vector<TenantId> vc_tenant(jobs.vcs.size());
  if (options.cluster_from_caller) {
    for (std::size_t i = 0; i < jobs.vcs.size(); ++i)
      vc_tenant[i] = add_tenant(w, jobs.vcs[i].name);
  } else {
    const std::string sizes_file = options.gpu_numbers.empty()
                                       ? find_beside(path, {"cluster_gpu_number.csv"})
                                       : options.gpu_numbers;
    if (sizes_file.empty())
      throw InputError(SourceLocation{path},
                       "cannot find cluster_gpu_number.csv (GPUs per VC) beside the trace or in "
                       "aux/ beside it; pass --cluster FILE with the tenants and nodes");
    const std::int64_t last_day =
        jobs.last_submit_s >= 0 ? jobs.last_submit_s / 86400 : (jobs.last_submit_s - 86399) / 86400;
    const Sizes sizes = read_sizes(sizes_file, last_day, !jobs.specs.empty());
    std::unordered_map<std::string, std::size_t> job_vc;
    for (std::size_t i = 0; i < jobs.vcs.size(); ++i) job_vc.emplace(jobs.vcs[i].name, i);
    for (const Vc& vc : jobs.vcs)
      if (std::find(sizes.vcs.begin(), sizes.vcs.end(), vc.name) == sizes.vcs.end())
        throw InputError(SourceLocation{path, vc.first_line},
                         "VC '" + vc.name + "' (" + std::to_string(vc.jobs) +
                             " GPU jobs) has no column in " + sizes_file +
                             "; pass --cluster FILE with the tenants and nodes");
    const int per_node = options.gpus_per_node;
    for (std::size_t k = 0; k < sizes.vcs.size(); ++k) {
      const auto in_trace = job_vc.find(sizes.vcs[k]);
      const std::int64_t gpus = sizes.gpus[k];
      if (gpus == 0 && in_trace == job_vc.end()) continue;
      const TenantId t = add_tenant(w, sizes.vcs[k], static_cast<int>(gpus));
      const std::string prefix = sizes.vcs[k] + "-n";
      w.cluster.add_nodes(static_cast<int>(gpus / per_node), per_node, options.gpu_memory_mib, "",
                          t, prefix);
      if (gpus % per_node)
        w.cluster.add_nodes(1, static_cast<int>(gpus % per_node), options.gpu_memory_mib, "", t,
                            prefix);
      if (in_trace != job_vc.end()) {
        vc_tenant[in_trace->second] = t;
        if (gpus == 0)
          w.notes.push_back("helios: VC '" + sizes.vcs[k] + "' has " +
                            std::to_string(jobs.vcs[in_trace->second].jobs) +
                            " GPU jobs but 0 GPUs on " + format_date(sizes.day) +
                            ": its jobs can run only on borrowed GPUs");
      }
    }
    // Node names: <vc>-n<k>, k counted within the VC.
    std::vector<int> seen(w.tenants.size(), 0);
    for (auto& n : w.cluster.nodes)
      n.name = w.tenants[n.owner.index()].name + "-n" + std::to_string(seen[n.owner.index()]++);
    w.notes.push_back("helios: VC sizes from " + sizes_file + " on " + format_date(sizes.day) +
                      " (the last date not after the last submit day, " + format_date(last_day) +
                      "): " + std::to_string(w.tenants.size()) + " VCs, " +
                      std::to_string(w.cluster.total_gpus()) + " GPUs");
  }
  if (jobs.cpu_only > 0)
    w.notes.push_back("helios: skipped " + std::to_string(jobs.cpu_only) +
                      " CPU-only jobs (gpu_num = 0)");
  for (std::size_t i = 0; i < jobs.specs.size(); ++i) jobs.specs[i].tenant = vc_tenant[jobs.vc[i]];
  w.jobs = std::move(jobs.specs);
  w.truth = std::move(jobs.truth);
  w.finalize();
  return w;
}

}  // namespace ds
