// The replay-folder reader behind `deepshare fidelity` (replay/replay_folder.hpp): an input
// is replay.json, observed.csv, summary.json and manifest.json, separated by NUL bytes. An
// empty manifest part gets a manifest with the files' true sizes and digests (and the job
// count of replay.json), so that the fuzzer reaches the schema and row checks behind the
// digests; otherwise that text is the manifest.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/manifest.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "replay/replay_folder.hpp"

namespace {

std::string true_manifest(const std::vector<std::string_view>& p) {
  nlohmann::json identity = nlohmann::json::object();
  const auto rj = nlohmann::json::parse(p[0], nullptr, false);
  if (rj.is_object() && rj.contains("jobs")) identity["jobs"] = rj["jobs"];
  std::vector<std::string> names = {"replay.json", "observed.csv"};
  std::vector<std::string_view> texts = {p[0], p[1]};
  if (!p[2].empty()) {  // a replay may have no summary.json
    names.push_back("summary.json");
    texts.push_back(p[2]);
  }
  return ds::fuzz::true_manifest("replay", names, texts, identity.dump());
}

}  // namespace

DEEPSHARE_FUZZ_TARGET(replay_folder) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const auto p = ds::fuzz::split_n(all, 4);
  const std::string dir = ds::fuzz::fresh_folder() + "/replay";
  ds::fuzz::write(dir, "replay.json", p[0]);
  ds::fuzz::write(dir, "observed.csv", p[1]);
  if (!p[2].empty()) ds::fuzz::write(dir, "summary.json", p[2]);
  ds::fuzz::write(dir, "manifest.json", p[3].empty() ? true_manifest(p) : std::string(p[3]));
  try {
    (void)ds::slurm::read_replay_folder(dir);
  } catch (const ds::InputError&) {
    ds::fuzz::expected_error();
  }
  return 0;
}
