// The run-folder reader behind `deepshare report` (report/report_runs.hpp, report_data.hpp):
// an input is a run folder's files, separated by NUL bytes: summary.json, jobs.csv,
// timeseries.csv, then manifest.json. When the manifest part is empty, a manifest with the
// files' true sizes and digests is written instead (and the identity read from the
// summary), so that the fuzzer gets past the digest check to the readers and the count
// checks behind it; with a manifest part, that text is the manifest (its own parser).
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/manifest.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "report/report_data.hpp"

namespace {

// A manifest that matches the files as written (the identity from the summary, if any).
std::string true_manifest(const std::vector<std::string_view>& files) {
  nlohmann::json identity = nlohmann::json::object();
  const auto summary = nlohmann::json::parse(files[0], nullptr, false);
  if (summary.is_object())
    for (const char* key : {"policy", "trace", "jobs"})
      if (summary.contains(key)) identity[key] = summary[key];
  return ds::fuzz::true_manifest("run", {"summary.json", "jobs.csv", "timeseries.csv"},
                                 {files[0], files[1], files[2]}, identity.dump());
}

}  // namespace

DEEPSHARE_FUZZ_TARGET(run_folder) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const auto p = ds::fuzz::split_n(all, 4);
  const std::string dir = ds::fuzz::fresh_folder();
  ds::fuzz::write(dir, "run/summary.json", p[0]);
  ds::fuzz::write(dir, "run/jobs.csv", p[1]);
  ds::fuzz::write(dir, "run/timeseries.csv", p[2]);
  ds::fuzz::write(dir, "run/manifest.json", p[3].empty() ? true_manifest(p) : std::string(p[3]));
  try {
    (void)ds::report::build_report_data(dir + "/run");
  } catch (const ds::InputError&) {
    ds::fuzz::expected_error();
  }
  return 0;
}
