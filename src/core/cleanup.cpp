#include "core/cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace ds {
namespace {

constexpr int kSlots = 512;
constexpr std::size_t kPathBytes = 4096;

// A slot: 0 free, 1 being filled, 2 registered (the handler reads only these).
struct Slot {
  std::atomic<int> state{0};
  bool tree = false;
  char path[kPathBytes];
};
Slot g_slots[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the handler reads the slots lock-free");

std::atomic<unsigned> g_temp_counter{0};
std::atomic<bool> g_installed{false};
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Appends `name` to `dir` in `out` (kPathBytes); false when it does not fit.
bool join(char* out, const char* dir, const char* name) {
  const std::size_t a = std::strlen(dir), b = std::strlen(name);
  if (a + 1 + b + 1 > kPathBytes) return false;
  std::memcpy(out, dir, a);
  out[a] = '/';
  std::memcpy(out + a + 1, name, b + 1);
  return true;
}

void remove_tree_at(const char* path, int depth) {
  if (::unlink(path) == 0 || errno == ENOENT) return;
  if (depth > 8) return;  // our folders are two levels deep (a comparison's run folders)
  // A folder: empty it (several passes, since removing entries while reading the folder
  // may skip some), then remove it.
  for (int pass = 0; pass < 4; ++pass) {
    const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    alignas(8) char buf[4096];
    for (;;) {
      const ssize_t n = ::getdents64(fd, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t off = 0; off < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
        off += d->d_reclen;
        if (std::strcmp(d->d_name, ".") == 0 || std::strcmp(d->d_name, "..") == 0) continue;
        if (::unlinkat(fd, d->d_name, 0) == 0) continue;
        char child[kPathBytes];
        if (join(child, path, d->d_name)) remove_tree_at(child, depth + 1);
      }
    }
    ::close(fd);
    if (::rmdir(path) == 0 || errno == ENOENT) return;
  }
}

extern "C" void on_fatal_signal(int sig) {
  const int saved = errno;
  for (Slot& s : g_slots) {
    if (s.state.load(std::memory_order_acquire) != 2) continue;
    if (s.tree)
      remove_tree_at(s.path, 0);
    else
      ::unlink(s.path);
  }
  errno = saved;
  std::signal(sig, SIG_DFL);  // re-raised below with its default action (the exit status)
  std::raise(sig);
}

}  // namespace

CleanupSlot::CleanupSlot(const std::string& path, bool tree) {
  if (path.size() + 1 > kPathBytes) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
    g_slots[i].tree = tree;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2, std::memory_order_release);
    slot_ = i;
    return;
  }
}

CleanupSlot::CleanupSlot(CleanupSlot&& o) noexcept : slot_(o.slot_) {
  o.slot_ = -1;
}

CleanupSlot& CleanupSlot::operator=(CleanupSlot&& o) noexcept {
  if (this != &o) {
    release();
    slot_ = o.slot_;
    o.slot_ = -1;
  }
  return *this;
}

void CleanupSlot::release() {
  if (slot_ < 0) return;
  g_slots[slot_].state.store(0, std::memory_order_release);
  slot_ = -1;
}

void install_signal_cleanup() {
  if (g_installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);  // one cleanup at a time
  for (int s : kSignals) {
    struct sigaction old {};
    // A signal ignored by whoever started us (nohup) stays ignored.
    if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(s, &sa, nullptr);
  }
}

SignalBlock::SignalBlock() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kSignals) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, &old_);
}

SignalBlock::~SignalBlock() {
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

std::string temp_name_for(std::string_view name) {
  return "." + std::string(name) + ".tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(g_temp_counter++);
}

bool is_stale_temp(std::string_view name) {
  if (!name.starts_with('.')) return false;
  const auto tmp = name.rfind(".tmp-");
  if (tmp == std::string_view::npos || tmp == 0) return false;
  const std::string_view rest = name.substr(tmp + 5);  // PID-N
  const auto dash = rest.find('-');
  if (dash == std::string_view::npos) return false;
  long pid = 0;
  unsigned long n = 0;
  const auto a = std::from_chars(rest.data(), rest.data() + dash, pid);
  const auto b = std::from_chars(rest.data() + dash + 1, rest.data() + rest.size(), n);
  if (a.ec != std::errc() || a.ptr != rest.data() + dash || b.ec != std::errc() ||
      b.ptr != rest.data() + rest.size() || pid <= 0)
    return false;
  if (pid == static_cast<long>(::getpid())) return false;  // this process's own
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

bool is_transient_name(std::string_view name) {
  if (!name.starts_with('.')) return false;
  if (name.size() > 6 && name.ends_with(".lock")) return true;
  const auto tmp = name.rfind(".tmp-");
  return tmp != std::string_view::npos && tmp > 0;
}

void remove_tree_signal_safe(const char* path) {
  remove_tree_at(path, 0);
}

}  // namespace ds
