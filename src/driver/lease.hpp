// Leadership: exactly one active controller per cluster, whatever the engine (DESIGN §2a
// "one leader"; docs/slurm.md "High availability" for the Slurm controller).
//
// The lease is a lock file in the controller's state directory, held with flock(2) for
// as long as the process lives: the kernel releases it when the holder exits or is killed
// (kill -9 included), so a standby that polls try_acquire() takes over within one poll.
// Each acquisition increments an epoch persisted next to the lock (`epoch`, written to a
// temporary file, fsync'ed and renamed): the fencing token. Every record the controller
// writes into the engine carries its epoch (Slurm: `e=` in the AdminComment, slurm/record.hpp),
// and:
//  - held() re-reads the persisted epoch: a holder whose epoch was superseded (its lock
//    was lost, e.g. on a network filesystem, and another instance acquired it) is no longer
//    the holder and must not act;
//  - a controller that sees a record in the engine with a newer epoch than its own was deposed
//    by another controller (e.g. one with another state directory): it stops acting.
// Trust: the state directory is trusted only when no other local user could have made or
// changed its contents: a real directory owned by the controller's user (or root), writable
// by nobody else; its files are opened without following links and must be the user's.
// Anything else is an InputError naming the directory and what to fix (a local user who
// made /var/lib/deepshare first, or a world-writable state_dir under /tmp, could otherwise
// hold the lock forever or rewrite the epoch).
// Assumptions: the state directory is local, or on a filesystem whose flock is shared by
// every host that may run a controller (NFSv4); one Lease object per process and directory.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace ds::driver {

// What the leader fence (fence.hpp) asks of a lease, whatever holds it: a lock file (Lease,
// below, for the Slurm controller) or a coordination.k8s.io Lease object (k8s/leader.hpp).
class Leadership {
 public:
  virtual ~Leadership() = default;
  // Still the holder: nobody else may have taken it over.
  [[nodiscard]] virtual bool held() const = 0;
  // For how many more milliseconds it is held for sure (0: not held): an action handed to
  // another thread is sent only within that time (k8s/binder.hpp). A lock file is held until
  // released: no limit.
  [[nodiscard]] virtual std::int64_t held_for_ms() const {
    return held() ? std::numeric_limits<std::int64_t>::max() : 0;
  }
  // The fencing token of this holding (> 0), stamped into every record the driver writes.
  [[nodiscard]] virtual std::uint64_t epoch() const = 0;
  // Where the lease lives and who holds it now, for a log line (it was taken over...).
  [[nodiscard]] virtual std::string describe() const = 0;
};

class Lease final : public Leadership {
 public:
  explicit Lease(std::string dir);
  ~Lease();
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  // Takes the lock without blocking; on success the epoch is the stored one + 1 (persisted).
  // False while another process holds it. Throws InputError when the directory is unusable.
  bool try_acquire();
  // Still the holder: the lock is ours and the persisted epoch is still ours.
  [[nodiscard]] bool held() const override;
  [[nodiscard]] std::uint64_t epoch() const override { return epoch_; }
  // "the lease in DIR (epoch N)", N the persisted one.
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] const std::string& dir() const { return dir_; }
  // Gives the lease up (also done by the destructor and by the kernel at exit).
  void release();
  // The epoch persisted in `dir` (0: none yet).
  static std::uint64_t stored_epoch(const std::string& dir);

 private:
  std::string dir_;
  int fd_ = -1;
  std::uint64_t epoch_ = 0;
};

}  // namespace ds::driver
