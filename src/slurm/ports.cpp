#include "slurm/ports.hpp"

#include <chrono>

namespace ds::slurm {

std::string JobInfo::ref() const {
  if (array_job != 0 && array_task != kNoTask)
    return std::to_string(array_job) + "_" + std::to_string(array_task);
  return std::to_string(id);
}

std::int64_t SystemClock::now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace ds::slurm
