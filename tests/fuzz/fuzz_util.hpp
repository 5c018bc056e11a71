// Helpers for the trace-importer fuzz targets: the importers read files (and look for
// their sizing files beside the trace), so each input is written to a private folder
// and loaded through load_trace, the same entry point as the CLI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ds::fuzz {

// The input split at its first NUL byte: the trace, then a side file (a sizing file or a
// cluster file), which is absent (has_side false) when the input holds no NUL.
struct Parts {
  std::string_view trace;
  std::string_view side;
  bool has_side = false;
};
Parts split(const std::uint8_t* data, std::size_t size);
// A manifest (core/manifest.hpp) of `kind` whose entries are these files with their true
// sizes and digests, and `identity`: what the folder targets write when the input brings
// no manifest, so that the readers behind the digest check are reached.
std::string true_manifest(const std::string& kind, const std::vector<std::string>& names,
                          const std::vector<std::string_view>& texts, const std::string& identity);

// `all` split at its first n - 1 NUL bytes into n parts (missing parts are empty).
std::vector<std::string_view> split_n(std::string_view all, std::size_t n);

// A folder of this process (under $DEEPSHARE_FUZZ_TMP, else /dev/shm), emptied on every
// call; removed at exit.
std::string fresh_folder();
// Writes `text` to folder/name (creating sub-folders); returns the path.
std::string write(const std::string& folder, const std::string& name, std::string_view text);

// A valid cluster file with tenants teamA, teamB, vcA and LS/BE (the seeds' names).
extern const char* const kCluster;

bool& strict();
// Rethrows the InputError being handled when strict() is set.
void expected_error();

// load_trace(path, {format, cluster}) plus the trace statistics of the result; bad input
// (InputError) is the expected outcome for most inputs and is swallowed here, unless
// strict() is set: fuzz_regression_test sets it for the seeds, which must be valid.
void load(const std::string& path, const std::string& format, const std::string& cluster);

}  // namespace ds::fuzz
