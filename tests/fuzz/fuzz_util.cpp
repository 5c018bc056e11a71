#include "fuzz_util.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/digest.hpp"
#include "core/error.hpp"
#include "core/manifest.hpp"
#include "fuzz_target.hpp"
#include "trace/load.hpp"
#include "trace/stats.hpp"

namespace ds::fuzz {
namespace fs = std::filesystem;

std::map<std::string, Target>& registry() {
  static std::map<std::string, Target> r;
  return r;
}

const char* const kCluster =
    "nodes:\n"
    "  - {count: 2, gpus: 8, tenant: teamA}\n"
    "  - {count: 1, gpus: 4}\n"
    "tenants:\n"
    "  - {name: teamA, quota_gpus: 16}\n"
    "  - {name: teamB, quota_gpus: 4}\n"
    "  - {name: vcA, quota_gpus: 4}\n"
    "  - {name: LS, quota_gpus: 4}\n"
    "  - {name: BE, quota_gpus: 0, class: best-effort}\n";

Parts split(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const auto nul = all.find('\0');
  if (nul == std::string_view::npos) return {all, {}, false};
  return {all.substr(0, nul), all.substr(nul + 1), true};
}

std::vector<std::string_view> split_n(std::string_view all, std::size_t n) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const auto nul = all.find('\0');
    if (nul == std::string_view::npos) break;
    out.push_back(all.substr(0, nul));
    all.remove_prefix(nul + 1);
  }
  out.push_back(all);
  out.resize(n);
  return out;
}

std::string true_manifest(const std::string& kind, const std::vector<std::string>& names,
                          const std::vector<std::string_view>& texts, const std::string& identity) {
  Manifest m;
  m.kind = kind;
  m.command = "fuzz";
  m.version = "fuzz";
  m.identity = nlohmann::json::parse(identity, nullptr, false);
  if (!m.identity.is_object()) m.identity = nlohmann::json::object();
  for (std::size_t i = 0; i < names.size(); ++i) {
    Fnv1a d;
    d.add(texts[i]);
    m.files.push_back({names[i], texts[i].size(), d.text()});
  }
  return m.json();
}

namespace {

// Never destroyed, so that the exit handler still finds it (a static path would be
// destroyed before a handler registered during its construction runs).
const fs::path& base() {
  static const fs::path* b = [] {
    // $DEEPSHARE_FUZZ_TMP (scripts/fuzz.sh: a folder it removes; libFuzzer may end with
    // _Exit, skipping the exit handler below), else memory-backed /dev/shm.
    const char* env = std::getenv("DEEPSHARE_FUZZ_TMP");
    const fs::path root = env && *env                    ? fs::path(env)
                          : fs::is_directory("/dev/shm") ? fs::path("/dev/shm")
                                                         : fs::temp_directory_path();
    auto* p = new fs::path(root / ("deepshare-fuzz-" + std::to_string(::getpid())));
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(base(), ec);
    });
    return p;
  }();
  return *b;
}

}  // namespace

std::string fresh_folder() {
  fs::remove_all(base());
  fs::create_directories(base());
  return base().string();
}

std::string write(const std::string& folder, const std::string& name, std::string_view text) {
  const fs::path p = fs::path(folder) / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
  return p.string();
}

void load(const std::string& path, const std::string& format, const std::string& cluster) {
  try {
    LoadOptions o;
    o.format = format;
    o.cluster_file = cluster;
    const Workload w = load_trace(path, o);
    (void)stats_markdown(compute_stats(w));
  } catch (const InputError&) {
    expected_error();  // the expected outcome of most inputs: a clear error
  }
}

bool& strict() {
  static bool s = false;
  return s;
}

void expected_error() {
  if (strict()) throw;
}

}  // namespace ds::fuzz
