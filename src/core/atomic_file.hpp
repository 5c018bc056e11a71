// Output files that are complete or absent, never half-written.
//
// Why: a run on a full disk used to print "outputs written" and exit 0 with a truncated
// jobs.csv. Every output is now written to a temporary file beside its target
// (".NAME.tmp-PID-N", same folder, so the final rename cannot cross file systems), every
// write(2) and close(2) is checked, and only a complete file is renamed over the target.
// A failure throws InputError naming the file and the system's reason (exit status 2),
// and the temporary file is removed.
//
// Assumptions: one writer per target at a time (the CLI gives every run its own folder);
// no fsync: this guards against failed writes, not against power loss.
// Test hook: with DEEPSHARE_FAULT_SIGNAL_AFTER=NAME in the environment, the process sends
// itself SIGTERM once a file named NAME is written (before it is renamed): the bad-input
// corpus uses it to check what a signal in the write phase leaves (core/cleanup.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "core/cleanup.hpp"
#include "core/digest.hpp"

namespace ds {

class AtomicFile {
 public:
  // Creates the temporary file; throws InputError when it cannot.
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  // Removes the temporary file unless it was committed.
  ~AtomicFile();

  // Buffers and writes; throws InputError on a failed write.
  void write(std::string_view data);
  // Writes what is buffered and closes the temporary file (throws on failure); the
  // target is not touched yet.
  void finish();
  // finish(), then renames the temporary file over the target.
  void commit();

  [[nodiscard]] const std::string& path() const { return path_; }
  // What was written so far: its size and digest (for manifests, core/manifest.hpp).
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }
  [[nodiscard]] const Fnv1a& digest() const { return digest_; }

 private:
  void flush();
  [[noreturn]] void fail(const std::string& what, int err);

  std::string path_;
  std::string temp_;
  std::string buffer_;
  int fd_ = -1;
  bool finished_ = false;
  bool committed_ = false;
  std::uint64_t bytes_ = 0;
  Fnv1a digest_;
  CleanupSlot cleanup_;  // a signal removes the temporary file (core/cleanup.hpp)
};

// Writes `content` to `path` atomically (AtomicFile::commit).
void write_file_atomic(const std::string& path, std::string_view content);

// The whole content of `path`; throws InputError naming the file when it cannot be read.
std::string read_file(const std::string& path);

// Several files that appear together: each is written and finished first; commit()
// then renames them in the order they were added (put the file that marks the set
// as complete, e.g. summary.json, last). If a write fails, none is renamed.
class AtomicFileSet {
 public:
  AtomicFile& add(const std::string& path);
  // Finishes every file added so far (their sizes and digests are then final), e.g. to
  // write a manifest of them as the last file of the set.
  const std::deque<AtomicFile>& finish_all();
  void commit();

 private:
  std::deque<AtomicFile> files_;  // a deque: add() returns references that stay valid
};

}  // namespace ds
