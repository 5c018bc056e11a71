#include "trace/slurm_import.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/slurm_assoc.hpp"
#include "trace/slurm_sacct.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace {

bool in_list(std::string_view list, std::string_view item) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (list.substr(0, comma) == item) return true;
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return false;
}

std::string counts_text(const std::map<std::string, std::size_t>& counts) {
  std::string s;
  for (const auto& [reason, n] : counts)
    s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + reason;
  return s;
}

void sacct_notes(const SacctRead& r, const std::string& path, std::vector<std::string>& notes) {
  notes.push_back("slurm: " + path + ": " + std::to_string(r.rows) + " rows, " +
                  std::to_string(r.step_rows) + " of them job steps (folded into their jobs)");
  const std::pair<std::size_t, const char*> counted[] = {
      {r.duplicate_rows, " rows seen twice (overlapping dumps?): dropped"},
      {r.requeued_jobs, " jobs ran more than once (requeued): first submit kept, work = last run"},
      {r.het_jobs, " heterogeneous jobs: components folded into one job (GPUs added up)"},
      {r.mixed_models, " jobs asked for GPUs of several models: no model constraint"}};
  for (const auto& [n, text] : counted)
    if (n > 0) notes.push_back("slurm: " + std::to_string(n) + text);
}
}  // namespace

SlurmImport import_slurm(const SlurmFiles& files, const SlurmImportOptions& options) {
  for (const auto& [what, path] :
       {std::pair{"--sacct", files.sacct}, {"--assoc", files.assoc}, {"--nodes", files.nodes}})
    if (path.empty()) throw InputError(std::string(what) + ": a file is required");
  SlurmCluster nodes = read_slurm_nodes(files.nodes, {options.partition, options.gpu_memory});
  SlurmTenants accounts = read_slurm_tenants(files.assoc, files.qos);
  SacctRead sacct = read_sacct(files.sacct);

  SlurmImport out;
  Workload& w = out.workload;
  w.name = files.sacct;
  w.format = "slurm";
  w.cluster = std::move(nodes.cluster);
  w.tenants = std::move(accounts.tenants);
  w.notes = std::move(nodes.notes);
  w.notes.insert(w.notes.end(), accounts.notes.begin(), accounts.notes.end());
  sacct_notes(sacct, files.sacct, w.notes);

  std::unordered_set<std::string> models;
  for (const auto& n : w.cluster.nodes) models.insert(n.gpu_type);
  std::unordered_map<std::string, TenantId> tenant_of;
  for (const auto& t : w.tenants) tenant_of.emplace(t.name, t.id);
  std::vector<std::string> added;  // accounts the associations do not list
  std::map<std::string, std::size_t> skipped = sacct.skipped;
  // Submit order, file order among equal times (finalize keeps it, so `recorded` stays parallel).
  std::stable_sort(sacct.jobs.begin(), sacct.jobs.end(),
                   [](const SacctJob& a, const SacctJob& b) { return a.submit_s < b.submit_s; });
  for (const SacctJob& s : sacct.jobs) {
    if (!options.partition.empty() && !in_list(s.partition, options.partition)) {
      ++skipped["in another partition"];
      continue;
    }
    if (!s.gpu_type.empty() && !models.contains(s.gpu_type)) {
      ++skipped["asking for a GPU model no node has"];
      continue;
    }
    std::string account = s.account;
    std::transform(account.begin(), account.end(), account.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    auto [t, fresh] = tenant_of.try_emplace(account);
    if (fresh) {
      t->second = add_tenant(w, account, 0, TenantClass::BestEffort);
      added.push_back(account);
    }
    JobSpec j;
    j.name = s.id;
    j.tenant = t->second;
    if (!s.user.empty()) j.user = w.intern_user(s.user);
    j.gpus = static_cast<int>(s.gpus);
    j.gpu_type = s.gpu_type;
    j.submit = seconds(s.submit_s);
    JobTruth truth;
    truth.work = seconds(std::clamp<std::int64_t>(s.run_s, 0, limits::kMaxDuration / kSecond));
    truth.state = parse_final_state(s.state);
    w.jobs.push_back(std::move(j));
    w.truth.push_back(truth);
    out.recorded.push_back(
        {s.first_start_s, s.start_s, s.end_s, s.time_limit_s.value_or(-1), s.runs});
  }
  if (!skipped.empty()) w.notes.push_back("slurm: skipped jobs: " + counts_text(skipped));
  if (!added.empty())
    w.notes.push_back("slurm: " + std::to_string(added.size()) + " accounts with jobs are not in " +
                      files.assoc + ": best-effort tenants with quota 0 (e.g. " +
                      quote_input(added.front()) + ")");
  if (w.jobs.empty())
    throw InputError(SourceLocation{files.sacct},
                     "no job to import (" +
                         (skipped.empty() ? "no job rows" : counts_text(skipped)) +
                         "); jobs need gres/gpu in AllocTRES or ReqTRES (AccountingStorageTRES "
                         "must list gres/gpu)");
  w.finalize();
  return out;
}

}  // namespace ds
