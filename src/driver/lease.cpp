#include "driver/lease.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace ds::driver {
namespace {

std::string sys_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

std::string octal(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

// Trusted only when no other local user could have made or changed what is in it: a real
// directory (not a link), owned by this process's user (or root), writable by nobody else.
void check_dir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) throw InputError(sys_error("state_dir " + dir));
  const std::string fix = "; the lease and journal live there: make it owned by uid " +
                          std::to_string(::geteuid()) +
                          " (the controller's user) with mode 0750 or tighter (systemd's "
                          "StateDirectory= does), or use another state_dir";
  if (!S_ISDIR(st.st_mode))
    throw InputError("state_dir " + dir + ": not a directory (a symbolic link or a file)" + fix);
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    throw InputError("state_dir " + dir + ": owned by uid " + std::to_string(st.st_uid) + fix);
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    throw InputError("state_dir " + dir + ": writable by group or others (mode " +
                     octal(st.st_mode) + ")" + fix);
}

// A file of the state directory, opened without following links; it must be ours.
int open_own(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd < 0) return fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

}  // namespace

Lease::Lease(std::string dir) : dir_(std::move(dir)) {}

Lease::~Lease() {
  release();
}

std::uint64_t Lease::stored_epoch(const std::string& dir) {
  const int fd = open_own(dir + "/epoch", O_RDONLY);
  if (fd < 0) return 0;
  char buf[32] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  return std::strtoull(buf, nullptr, 10);
}

bool Lease::try_acquire() {
  if (fd_ >= 0) return true;
  ::mkdir(dir_.c_str(), 0750);  // exists already: checked below
  check_dir(dir_);
  const std::string lock = dir_ + "/leader.lock";
  const int fd = open_own(lock, O_RDWR | O_CREAT);
  if (fd < 0) throw InputError(sys_error(lock + ": cannot open the lease file"));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return false;
    errno = err;
    throw InputError(sys_error(lock + ": cannot lock the lease file"));
  }
  const std::uint64_t next = stored_epoch(dir_) + 1;
  const std::string tmp = dir_ + "/epoch.tmp", path = dir_ + "/epoch";
  ::unlink(tmp.c_str());  // a leftover of a crash (the directory is ours: nobody else's)
  const int out = open_own(tmp, O_WRONLY | O_CREAT | O_EXCL);
  const std::string text = std::to_string(next) + "\n";
  const bool ok = out >= 0 &&
                  ::write(out, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(out) == 0;
  if (out >= 0) ::close(out);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = sys_error(path + ": cannot persist the lease epoch");
    ::close(fd);
    throw InputError(why);
  }
  if (const int d = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
    ::fsync(d);  // the rename itself
    ::close(d);
  }
  fd_ = fd;
  epoch_ = next;
  return true;
}

bool Lease::held() const {
  return fd_ >= 0 && stored_epoch(dir_) == epoch_;
}

std::string Lease::describe() const {
  return "the lease in " + dir_ + " (epoch " + std::to_string(stored_epoch(dir_)) + ")";
}

void Lease::release() {
  if (fd_ < 0) return;
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace ds::driver
