// The leader fence of an online driver (DESIGN §2a "one leader"; lease.hpp): nothing goes to
// the engine unless this driver still holds its lease and has not been deposed. A driver is
// deposed when its lease was taken over, or when the engine shows a record with a newer epoch
// than its own (another driver acts on the cluster): it then stops acting for good. The engine
// adapter stamps epoch() into every record it writes (Slurm: e= in the AdminComment;
// Kubernetes: epoch= in the pod's deepshare.io/decision annotation). The lease is any
// Leadership: a lock file (Slurm) or a coordination.k8s.io Lease (k8s/leader.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "driver/journal.hpp"
#include "driver/lease.hpp"
#include "driver/log.hpp"

namespace ds::driver {

class Fence {
 public:
  Fence(Log& log, Journal& journal) : log_(log), journal_(journal) {}
  void set_lease(Leadership* lease) { lease_ = lease; }
  [[nodiscard]] Leadership* lease() const { return lease_; }
  // The lease's epoch (0: no lease).
  [[nodiscard]] std::uint64_t epoch() const { return lease_ ? lease_->epoch() : 0; }
  // Still the leader; deposes this driver when the lease was taken over.
  [[nodiscard]] bool acting();
  // Whether an action may go out now: counted as sent when it may, as fenced when not.
  [[nodiscard]] bool may_send();
  // For how many more milliseconds an action may go out (the lease's held_for_ms; no lease:
  // no limit; deposed: 0), for one sent later by another thread.
  [[nodiscard]] std::int64_t send_window_ms() const;
  // An action that was let out but not sent in time (its window ran out): counted as fenced.
  void count_late() { --sent_, ++fenced_; }
  void depose(const std::string& why);
  [[nodiscard]] bool deposed() const { return deposed_; }
  // Why the last action was not sent ("" when it was).
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::uint64_t sent() const { return sent_; }
  [[nodiscard]] std::uint64_t fenced() const { return fenced_; }

 private:
  Log& log_;
  Journal& journal_;
  Leadership* lease_ = nullptr;
  bool deposed_ = false;
  std::string error_;
  std::uint64_t sent_ = 0, fenced_ = 0;
};

}  // namespace ds::driver
