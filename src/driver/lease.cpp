#include "driver/lease.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace ds::driver {
namespace {

std::string sys_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

}  // namespace

Lease::Lease(std::string dir) : dir_(std::move(dir)) {}

Lease::~Lease() {
  release();
}

std::uint64_t Lease::stored_epoch(const std::string& dir) {
  const int fd = ::open((dir + "/epoch").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  return std::strtoull(buf, nullptr, 10);
}

bool Lease::try_acquire() {
  if (fd_ >= 0) return true;
  ::mkdir(dir_.c_str(), 0750);  // exists already: fine; unusable: open() says why
  const std::string lock = dir_ + "/leader.lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
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
  const int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
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

void Lease::release() {
  if (fd_ < 0) return;
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace ds::driver
