// A scratch folder for the core tests, removed at the end of the test; one per process and
// prefix (CTest runs tests of one binary in parallel processes).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace ds::testing {

struct ScratchDir {
  explicit ScratchDir(const std::string& prefix)
      : path(std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path), {}));
  }
  std::filesystem::path path;
};

}  // namespace ds::testing
