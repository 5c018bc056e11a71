// What a signal leaves behind: nothing half-written.
//
// Why: outputs are written to hidden temporary files and staging folders and renamed into
// place once complete (atomic_file.hpp, output_folder.hpp). A process killed by SIGINT or
// SIGTERM while writing used to leave those behind (".jobs.csv.tmp-PID-N" inside a run
// folder, which then made `compare --force` refuse the folder as not its own).
//
// Algorithm:
//  1. Every temporary file, staging folder and lock file is registered here while it exists
//     (a fixed table of slots, claimed and released with atomics: no allocation, no lock,
//     so that the signal handler can read it at any moment, from any thread).
//  2. install_signal_cleanup() sets a handler for SIGINT, SIGTERM, SIGHUP and SIGQUIT that
//     removes every registered path (a staging folder with its contents) using only
//     async-signal-safe calls (unlink, rmdir, open, getdents64, close), then re-raises the
//     signal with its default action, so the exit status still tells which signal ended it.
//  3. SIGKILL (or a power cut) cannot be caught: what it leaves is named
//     ".NAME.tmp-PID-N"; is_stale_temp() recognises such a name whose process is gone, and
//     the next command that writes there removes it (output_folder.cpp, compare --force).
// Signals are blocked (SignalBlock) while a finished set of files is renamed into place,
// so that a folder is never half-renamed either.
#pragma once

#include <csignal>
#include <string>
#include <string_view>

namespace ds {

// A registered path; removed from the table when destroyed or released.
class CleanupSlot {
 public:
  CleanupSlot() = default;
  // Registers `path` (a file, or with `tree` a folder and everything in it). When the table
  // is full the path is not registered (a later run still finds it stale, step 3).
  CleanupSlot(const std::string& path, bool tree);
  CleanupSlot(const CleanupSlot&) = delete;
  CleanupSlot& operator=(const CleanupSlot&) = delete;
  CleanupSlot(CleanupSlot&& other) noexcept;
  CleanupSlot& operator=(CleanupSlot&& other) noexcept;
  ~CleanupSlot() { release(); }
  // The path no longer needs removing (it was renamed into place or removed).
  void release();

 private:
  int slot_ = -1;
};

// Step 2 (idempotent). main() calls it once.
void install_signal_cleanup();

// Blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT in this thread while it lives: a signal that
// arrives meanwhile is handled when the block ends.
class SignalBlock {
 public:
  SignalBlock();
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;
  ~SignalBlock();

 private:
  sigset_t old_{};
};

// "TMP" names: ".NAME.tmp-PID-N" (atomic_file.cpp, output_folder.cpp).
std::string temp_name_for(std::string_view name);
// Whether `name` is such a name whose process no longer runs (step 3).
bool is_stale_temp(std::string_view name);
// Whether `name` is a temporary name of any process or a lock file (".NAME.lock",
// output_folder.hpp): transient entries of a command writing beside or inside a folder,
// never part of its results.
bool is_transient_name(std::string_view name);

// Removes a file or a folder tree with async-signal-safe calls only (what the handler does).
void remove_tree_signal_safe(const char* path);

}  // namespace ds
