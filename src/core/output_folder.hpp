// An output folder that is complete or absent: the unit every command's `--out` writes.
//
// Why: commands wrote their files straight into --out. A failure or a signal in between
// left a partial folder (that `report` then turned into a report with no warning), an
// earlier run's files stayed beside the new ones (an old report.html describing another
// run), two commands could write one folder at once, and `simulate --trace o/jobs.csv
// --out o` overwrote its own input.
//
// Algorithm:
//  1. The target's parent folder is created if needed, and PARENT/.NAME.lock is locked
//     (flock, not waiting): a second command writing the same target fails at once, before
//     it computes anything. Stale staging folders of dead processes beside the target
//     (".NAME.tmp-PID-N", left by SIGKILL) are removed.
//  2. The target must be absent, an empty folder, or a folder the command may replace
//     (`replaceable` says so: it holds only what an earlier run of the command wrote);
//     otherwise an InputError names what is in the way. No input of the command may lie
//     inside a folder that would be replaced.
//  3. Everything is written into a hidden staging folder beside the target,
//     PARENT/.NAME.tmp-PID-N (registered for removal on a signal: core/cleanup.hpp).
//  4. commit(), with signals blocked: the staging folder is renamed to the target
//     atomically — renameat2(RENAME_NOREPLACE) when there was none (so a target that
//     appeared meanwhile is an error, never overwritten), RENAME_EXCHANGE over an earlier
//     folder, which is then removed. Without commit() (an error, an exception) the staging
//     folder is removed and nothing changes at the target.
// Assumptions: the parent folder is on a file system with renameat2 (ext4, xfs, btrfs,
// tmpfs, overlayfs); elsewhere a two-step rename is used (with a moment in between where
// the target is absent).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/cleanup.hpp"

namespace ds {

struct OutputRules {
  std::string option = "--out";  // names the target in messages
  // Whether an existing, non-empty target may be replaced: "" if so, else why not.
  std::function<std::string(const std::filesystem::path&)> replaceable;
  // Files and folders the command reads; none may lie inside a target that is replaced.
  std::vector<std::string> inputs;
};

class OutputFolder {
 public:
  // Steps 1-3; throws InputError.
  OutputFolder(const std::string& target, OutputRules rules);
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  ~OutputFolder();

  // The staging folder: write everything here.
  [[nodiscard]] const std::filesystem::path& dir() const { return staging_; }
  [[nodiscard]] std::filesystem::path path(const std::string& name) const {
    return staging_ / name;
  }
  // The target as given.
  [[nodiscard]] const std::string& target() const { return target_; }
  // Step 4; throws InputError when the target cannot be replaced.
  void commit();

 private:
  void lock();
  void unlock();
  void check_target(const OutputRules& rules);
  void abandon() noexcept;

  std::string target_;
  std::filesystem::path target_path_, parent_, staging_, lock_path_;
  std::vector<std::filesystem::path> created_parents_;  // deepest last
  bool replace_ = false;
  bool committed_ = false;
  int lock_fd_ = -1;
  CleanupSlot staging_slot_, lock_slot_;
};

// Whether `inner` is `outer` or lies inside it (by canonical paths; false when either
// cannot be resolved).
bool path_inside(const std::filesystem::path& inner, const std::filesystem::path& outer);

}  // namespace ds
