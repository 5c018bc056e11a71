// manifest.json: what an output folder holds, written last, so that a folder read back as
// input (`report`, `fidelity`) is checked rather than trusted (docs/outputs.md, "Manifest").
//
// A manifest names the command and version that wrote the folder, the run's identity
// (the workload's label, format, digest and counts; policy, load factor, seed), and every
// file with its size in bytes and FNV-1a digest; a comparison folder also lists its run
// folders (each with its own manifest). A reader checks that every listed file is there,
// whole and unchanged; the counts are then checked against the files' contents by the
// reader that knows them (report/report_runs.cpp, slurm/fidelity.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"

namespace ds {

inline constexpr const char* kManifestName = "manifest.json";
inline constexpr const char* kManifestFormat = "deepshare-output/1";

struct ManifestEntry {
  std::string name;
  std::uint64_t bytes = 0;
  std::string digest;  // "fnv1a64:..."
};

struct Manifest {
  std::string kind;     // run, comparison, pack, replay, fidelity
  std::string command;  // the command that wrote it: simulate, compare, demo, ...
  std::string version;
  nlohmann::json identity = nlohmann::json::object();
  std::vector<ManifestEntry> files;
  std::vector<std::string> folders;  // sub-folders that have their own manifest

  // The entry of a finished file.
  void add(const AtomicFile& finished);
  [[nodiscard]] const ManifestEntry* find(const std::string& name) const;
  [[nodiscard]] std::string json() const;
};

// Reads DIR/manifest.json: InputError naming it when it is missing (the folder is
// incomplete, or older than manifests), not valid JSON, or a key has the wrong type.
Manifest read_manifest(const std::filesystem::path& dir);

// Every file the manifest lists is present with its recorded size and digest (InputError
// naming the first that is not); `allowed_extra` names files that may be there unlisted
// (report.html, which `report` writes later). Any other unlisted file or folder is an
// error too: it belongs to another run.
void verify_manifest(const std::filesystem::path& dir, const Manifest& m,
                     const std::vector<std::string>& allowed_extra);

// The digest of a whole file (InputError when it cannot be read).
std::string file_digest(const std::filesystem::path& file, std::uint64_t* bytes = nullptr);

}  // namespace ds
