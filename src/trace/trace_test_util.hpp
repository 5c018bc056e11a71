// Helpers for the importer tests: a scratch folder for small synthetic files, the shared
// research data (tests skip when it is absent), and error-message capture.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "model/workload.hpp"

namespace ds::testing {

// The imported job named `name` (a test failure, and an empty job, when there is none).
inline const JobSpec& job(const Workload& w, const std::string& name) {
  for (const auto& j : w.jobs)
    if (j.name == name) return j;
  ADD_FAILURE() << "no job " << name;
  static const JobSpec none;
  return none;
}

// An import's notes, one per line.
inline std::string all_notes(const Workload& w) {
  std::string s;
  for (const auto& n : w.notes) s += n + "\n";
  return s;
}

// A fresh folder under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("ds_trace_" + std::string(info ? info->test_suite_name() : "x") + "_" +
             std::string(info ? info->name() : "x") + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to <dir>/<name> (creating sub-folders) and returns the full path.
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// <DEEPSHARE_SHARED_DIR>/traces/<rel>, or empty when it does not exist.
inline std::string shared_trace(const std::string& rel) {
  const std::filesystem::path p = std::filesystem::path(DEEPSHARE_SHARED_DIR) / "traces" / rel;
  return std::filesystem::exists(p) ? p.string() : std::string();
}

// The message of the InputError that `f` throws; "(no error)" when it throws none.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace ds::testing
