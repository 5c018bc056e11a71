#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/cleanup.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

constexpr std::size_t kBufferBytes = 1 << 16;

std::string temp_name(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path() / temp_name_for(p.filename().string())).string();
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), temp_(temp_name(path_)) {
  if (std::filesystem::path(path_).filename().empty())
    throw InputError(SourceLocation{path_}, "not a file name");
  cleanup_ = CleanupSlot(temp_, false);  // before it exists: a signal never misses it
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int err = errno;
    throw InputError(SourceLocation{path_},
                     std::string("cannot create a file in this folder: ") + std::strerror(err));
  }
  buffer_.reserve(kBufferBytes);
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : path_(std::move(o.path_)),
      temp_(std::move(o.temp_)),
      buffer_(std::move(o.buffer_)),
      fd_(std::exchange(o.fd_, -1)),
      finished_(o.finished_),
      committed_(std::exchange(o.committed_, true)),
      bytes_(o.bytes_),
      digest_(o.digest_),
      cleanup_(std::move(o.cleanup_)) {}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
  cleanup_.release();
  committed_ = true;  // nothing left to clean up
  throw InputError(SourceLocation{path_}, what + ": " + std::strerror(err));
}

void AtomicFile::write(std::string_view data) {
  if (finished_) throw InputError(SourceLocation{path_}, "internal: write after finish");
  bytes_ += data.size();
  digest_.add(data);
  if (buffer_.size() + data.size() > kBufferBytes) flush();
  if (data.size() >= kBufferBytes) {
    buffer_.assign(data);
    flush();
  } else {
    buffer_.append(data);
  }
}

void AtomicFile::flush() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write", n < 0 ? errno : ENOSPC);
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void AtomicFile::finish() {
  if (finished_) return;
  flush();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail("cannot write (on close)", errno);
  finished_ = true;
  // Fault injection for the bad-input corpus: a signal in the middle of the write phase,
  // at a point a test can name (tests/bad_input, the *Signal* cases).
  static const char* const fault = std::getenv("DEEPSHARE_FAULT_SIGNAL_AFTER");
  if (fault && std::filesystem::path(path_).filename() == fault) std::raise(SIGTERM);
}

void AtomicFile::commit() {
  finish();
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("cannot replace the file", errno);
  committed_ = true;
  cleanup_.release();
}

void write_file_atomic(const std::string& path, std::string_view content) {
  AtomicFile f(path);
  f.write(content);
  f.commit();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  if (!in || !(buf << in.rdbuf()) || in.bad()) {
    throw InputError(SourceLocation{path}, std::string("cannot read: ") + std::strerror(errno));
  }
  return buf.str();
}

AtomicFile& AtomicFileSet::add(const std::string& path) {
  return files_.emplace_back(path);
}

const std::deque<AtomicFile>& AtomicFileSet::finish_all() {
  for (auto& f : files_) f.finish();
  return files_;
}

void AtomicFileSet::commit() {
  for (auto& f : files_) f.finish();
  const SignalBlock block;  // all renamed, or (on a signal before this) none
  for (auto& f : files_) f.commit();
  files_.clear();
}

}  // namespace ds
