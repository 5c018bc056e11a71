// Starts the engine did not carry out (issue #24, docs/architecture.md "Online drivers"). A
// start handed over and not begun by the reconciler's timeout is rolled back; when the engine
// refuses the job for a reason the driver cannot see (Slurm: a requirement DeepShare does not
// read, such as a licence or a node setting), every later placement
// would be refused the same way, each holding its GPUs idle for the timeout. So the first
// timeout is retried at once, as before (most are passing: a slow node, a lost reply), and from
// the second in a row on the job waits outside the policy for a time that doubles with each
// (the timeout, twice it, ... up to `cap_ms`) before it is a candidate again. A start the
// engine carries out clears the job's count; a new job in the slot starts from none.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "model/snapshot.hpp"

namespace ds::driver {

class StartBackoff {
 public:
  StartBackoff(std::int64_t base_ms, std::int64_t cap_ms) : base_ms_(base_ms), cap_ms_(cap_ms) {}

  // A start of `id` timed out at wall time `wall`: the timeouts in a row, counting this one.
  int timed_out(JobId id, std::int64_t wall);
  // The wall time before which `id` is not offered to the policy (0: no wait).
  [[nodiscard]] std::int64_t until(JobId id) const;
  // It runs, or its slot goes to another job: its count starts over.
  void clear(JobId id) { jobs_.erase(id.index()); }
  [[nodiscard]] std::size_t size() const { return jobs_.size(); }

 private:
  struct Entry {
    int in_a_row = 0;
    std::int64_t until = 0;
  };
  std::int64_t base_ms_, cap_ms_;
  std::unordered_map<std::uint32_t, Entry> jobs_;  // by JobId index: jobs with a timeout
};

}  // namespace ds::driver
