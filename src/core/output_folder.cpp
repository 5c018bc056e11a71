#include "core/output_folder.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.hpp"

namespace ds {
namespace fs = std::filesystem;

namespace {

std::string why(int err) {
  return std::strerror(err);
}

// rename(2) that does not replace (`exchange` false) or swaps two paths (true); falls back
// to plain rename where the file system has no renameat2. Returns 0 or an errno value.
int rename_folder(const fs::path& from, const fs::path& to, bool exchange) {
  const unsigned flags = exchange ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags) == 0) return 0;
  const int err = errno;
  if (err != EINVAL && err != ENOSYS) return err;
  // No renameat2 here: check, then rename (not atomic: documented in the header).
  std::error_code ec;
  if (!exchange) {
    if (fs::exists(to, ec)) return EEXIST;
    return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
  }
  const fs::path aside = to.parent_path() / temp_name_for(to.filename().string());
  if (::rename(to.c_str(), aside.c_str()) != 0) return errno;
  if (::rename(from.c_str(), to.c_str()) != 0) return errno;
  return ::rename(aside.c_str(), from.c_str()) == 0 ? 0 : errno;
}

}  // namespace

bool path_inside(const fs::path& inner, const fs::path& outer) {
  std::error_code ec1, ec2;
  const fs::path a = fs::weakly_canonical(inner, ec1), b = fs::weakly_canonical(outer, ec2);
  if (ec1 || ec2 || b.empty()) return false;
  auto i = a.begin();
  for (auto o = b.begin(); o != b.end(); ++o, ++i) {
    if (o->empty() && std::next(o) == b.end()) break;  // a trailing separator
    if (i == a.end() || *i != *o) return false;
  }
  return true;
}

OutputFolder::OutputFolder(const std::string& target, OutputRules rules) : target_(target) {
  if (target.empty()) throw InputError(rules.option + ": expected a folder name, got ''");
  fs::path t = fs::path(target).lexically_normal();
  if (!t.has_filename() && t.has_parent_path()) t = t.parent_path();  // "out/" -> "out"
  const std::string name = t.filename().string();
  if (name.empty() || name == "." || name == ".." || t == t.root_path())
    throw InputError(rules.option + " " + quote_input(target) +
                     ": name a folder of its own (e.g. out/run1), not '.' or '/'");
  target_path_ = t;
  parent_ = t.has_parent_path() ? t.parent_path() : fs::path(".");
  // Step 1: the parent (created if needed; removed again if this command fails), the lock.
  std::vector<fs::path> missing;
  for (fs::path p = parent_; !p.empty() && !fs::exists(p); p = p.parent_path()) {
    missing.push_back(p);
    if (!p.has_parent_path() || p.parent_path() == p) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    std::error_code ec;
    if (!fs::create_directory(*it, ec) && ec) {
      abandon();
      throw InputError(SourceLocation{target}, "cannot create the output folder's parent " +
                                                   quote_input(it->string()) + ": " + ec.message());
    }
    created_parents_.push_back(*it);
  }
  try {
    lock();
    check_target(rules);
    staging_ = parent_ / temp_name_for(name);
    staging_slot_ = CleanupSlot(staging_.string(), true);  // before it exists
    if (::mkdir(staging_.c_str(), 0777) != 0)
      throw InputError(SourceLocation{target}, "cannot create a folder beside it (" +
                                                   parent_.string() + "): " + why(errno));
  } catch (...) {
    abandon();
    throw;
  }
}

void OutputFolder::lock() {
  lock_path_ = parent_ / ("." + target_path_.filename().string() + ".lock");
  lock_slot_ = CleanupSlot(lock_path_.string(), false);
  for (int attempt = 0; attempt < 8; ++attempt) {
    lock_fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock_fd_ < 0)
      throw InputError(
          SourceLocation{target_},
          "cannot create the lock file " + quote_input(lock_path_.string()) + ": " + why(errno));
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(lock_fd_);
      lock_fd_ = -1;
      lock_slot_.release();  // another process's lock: not ours to remove
      if (err == EWOULDBLOCK)
        throw InputError(SourceLocation{target_},
                         "another deepshare command is writing this folder now (it holds " +
                             quote_input(lock_path_.string()) +
                             "); wait for it or choose another folder");
      throw InputError(SourceLocation{target_},
                       "cannot lock " + quote_input(lock_path_.string()) + ": " + why(err));
    }
    // The lock file may have been removed by its last holder between open and flock: then
    // this lock protects nothing; take the new file's.
    struct stat held {
    }, now{};
    if (::fstat(lock_fd_, &held) == 0 && ::stat(lock_path_.c_str(), &now) == 0 &&
        held.st_dev == now.st_dev && held.st_ino == now.st_ino)
      break;
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  if (lock_fd_ < 0) throw InputError(SourceLocation{target_}, "cannot lock the output folder");
  // Staging folders left by a killed process (SIGKILL: no handler ran) are removed.
  std::error_code ec;
  const std::string prefix = "." + target_path_.filename().string() + ".tmp-";
  for (const auto& e : fs::directory_iterator(parent_, ec)) {
    const std::string n = e.path().filename().string();
    if (n.starts_with(prefix) && is_stale_temp(n)) fs::remove_all(e.path(), ec);
  }
}

void OutputFolder::unlock() {
  if (lock_fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // while still held: a waiter re-checks the inode (lock())
  ::close(lock_fd_);
  lock_fd_ = -1;
  lock_slot_.release();
}

void OutputFolder::check_target(const OutputRules& rules) {
  std::error_code ec;
  const auto st = fs::symlink_status(target_path_, ec);
  if (ec || !fs::exists(st)) return;  // absent
  if (!fs::is_directory(st))
    throw InputError(SourceLocation{target_},
                     "exists and is not a folder (" + rules.option + " names a folder)");
  if (fs::is_empty(target_path_, ec)) return;
  const std::string refused =
      rules.replaceable ? rules.replaceable(target_path_) : std::string("the folder is not empty");
  if (!refused.empty()) throw InputError(SourceLocation{target_}, refused);
  for (const auto& in : rules.inputs)
    if (!in.empty() && path_inside(in, target_path_))
      throw InputError(SourceLocation{target_},
                       "holds " + quote_input(in) + ", an input of this command; replacing the " +
                           "folder would delete it: choose another " + rules.option + " folder");
  replace_ = true;
}

void OutputFolder::commit() {
  if (committed_) return;
  const SignalBlock block;  // renamed completely, or (a signal before this) not at all
  std::error_code ec;
  int err = 0;
  if (replace_) {
    err = rename_folder(staging_, target_path_, true);
    if (err == 0) fs::remove_all(staging_, ec);  // the earlier folder, swapped out
  } else {
    if (fs::is_directory(target_path_, ec) && fs::is_empty(target_path_, ec))
      fs::remove(target_path_, ec);  // an empty folder named as the target
    err = rename_folder(staging_, target_path_, false);
  }
  if (err != 0)
    throw InputError(SourceLocation{target_},
                     err == EEXIST || err == ENOTEMPTY
                         ? std::string("appeared while this command ran (another program wrote "
                                       "it); the results are not written")
                         : "cannot move the results into place: " + why(err));
  committed_ = true;
  staging_slot_.release();
  created_parents_.clear();
  unlock();
}

void OutputFolder::abandon() noexcept {
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
  staging_slot_.release();
  unlock();
  for (auto it = created_parents_.rbegin(); it != created_parents_.rend(); ++it)
    fs::remove(*it, ec);  // only if still empty
  created_parents_.clear();
}

OutputFolder::~OutputFolder() {
  if (!committed_) abandon();
}

}  // namespace ds
