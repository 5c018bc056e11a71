#include "slurm/ports.hpp"

namespace ds::slurm {

std::string JobInfo::ref() const {
  if (array_job != 0 && array_task != kNoTask)
    return std::to_string(array_job) + "_" + std::to_string(array_task);
  return std::to_string(id);
}

}  // namespace ds::slurm
