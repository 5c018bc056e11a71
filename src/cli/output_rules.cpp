#include "cli/output_rules.hpp"

#include <algorithm>
#include <functional>

#include "cli/trace_args.hpp"
#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "core/manifest.hpp"

namespace ds {
namespace fs = std::filesystem;

namespace {

bool one_of(const std::string& name, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

bool is_run_file(const std::string& name) {
  return one_of(name, {"summary.json", "jobs.csv", "tenants.csv", "timeseries.csv", kManifestName,
                       "report.html"}) ||
         is_stale_temp(name);
}

// The entries of `dir` sorted, for messages that name the first.
std::vector<fs::path> entries_of(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// "" when every entry of `dir` is ours (`ours`), else a message naming the first that is not.
std::string only_ours(const fs::path& dir, const std::function<bool(const fs::path&)>& ours,
                      const std::string& flag_hint) {
  for (const auto& p : entries_of(dir))
    if (!ours(p))
      return flag_hint + "the folder holds " + quote_input(p.filename().string()) +
             ", which DeepShare does not write; refusing to delete it (choose a new folder)";
  return {};
}

}  // namespace

bool is_run_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "summary.json", ec)) return false;
  for (const auto& p : entries_of(dir))
    if (!fs::is_regular_file(p, ec) || !is_run_file(p.filename().string())) return false;
  return true;
}

namespace {

// What one kind of folder may hold: these files, and folders for which `folder_ok` holds
// (temporary names of dead processes always count as ours).
struct Ours {
  std::initializer_list<const char*> files;
  bool (*folder_ok)(const fs::path&) = nullptr;
};

OutputRules rules(std::vector<std::string> inputs, Ours ours, std::string hint = "") {
  OutputRules r;
  r.inputs = std::move(inputs);
  const std::vector<std::string> files(ours.files.begin(), ours.files.end());
  r.replaceable = [files, folder_ok = ours.folder_ok, hint](const fs::path& dir) {
    return only_ours(
        dir,
        [&](const fs::path& p) {
          const std::string n = p.filename().string();
          std::error_code ec;
          if (is_stale_temp(n)) return true;
          if (fs::is_directory(p, ec)) return folder_ok && folder_ok(p);
          return std::find(files.begin(), files.end(), n) != files.end();
        },
        hint);
  };
  return r;
}

constexpr std::initializer_list<const char*> kRunFiles = {
    "summary.json", "jobs.csv", "tenants.csv", "timeseries.csv", kManifestName, "report.html"};

}  // namespace

OutputRules run_folder_rules(std::vector<std::string> inputs) {
  return rules(std::move(inputs), {kRunFiles});
}

OutputRules comparison_rules(bool force, std::vector<std::string> inputs) {
  OutputRules r =
      rules(std::move(inputs),
            {{"comparison.csv", "comparison.md", "report.html", "workload.md", kManifestName},
             [](const fs::path& p) { return is_run_folder(p); }},
            "--force: ");
  if (!force)
    r.replaceable = [](const fs::path& dir) -> std::string {
      const auto all = entries_of(dir);
      return "the output folder is not empty (it holds " +
             quote_input(all.front().filename().string()) +
             (all.size() > 1 ? " and " + std::to_string(all.size() - 1) + " more" : std::string()) +
             "): choose a new folder, or pass --force to replace its results";
    };
  return r;
}

OutputRules pack_rules(std::vector<std::string> inputs) {
  return rules(std::move(inputs), {{"pack.csv", "pack.md", kManifestName}});
}

OutputRules replay_rules(std::vector<std::string> inputs) {
  return rules(std::move(inputs),
               {{"summary.json", "jobs.csv", "tenants.csv", "timeseries.csv", kManifestName,
                 "report.html", "observed.csv", "replay.json", "journal.log"},
                [](const fs::path& p) {
                  const std::string n = p.filename().string();
                  return n == "work" || n == "fidelity";
                }});
}

OutputRules fidelity_rules(std::vector<std::string> inputs) {
  return rules(std::move(inputs),
               {{"fidelity.json", "fidelity.md", "fidelity_jobs.csv", kManifestName},
                [](const fs::path& p) { return p.filename() == "sim" && is_run_folder(p); }});
}

std::vector<std::string> inputs_of(const TraceArgs& a) {
  std::vector<std::string> in;
  for (const std::string* p : {&a.trace, &a.cluster, &a.aux})
    if (!p->empty() && *p != "none") in.push_back(*p);
  return in;
}

}  // namespace ds
