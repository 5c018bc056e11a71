// Interference model (interface): predicted speed of a job sharing one GPU with
// another under MPS (exclusive speed = 1). Fitted from measured pairs; profiles it
// has not seen fall back to a model on GPU utilization and memory.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "model/job.hpp"
#include "policy/interference/colocation.hpp"

namespace ds {

// What the model knows of one job: its profile (may be null) and its measured
// single-job GPU util (percent, -1 unknown) and memory (MiB, 0 unknown).
struct JobShape {
  const Profile* profile = nullptr;
  double gpu_util = -1;
  double gpu_memory_mib = 0;
};

class InterferenceModel {
 public:
  virtual ~InterferenceModel() = default;
  // Predicted speed of `job` while sharing a GPU with `other`.
  [[nodiscard]] virtual double speed(const JobShape& job, const JobShape& other) const = 0;
};

struct InterferenceFit {
  std::unique_ptr<InterferenceModel> model;
  double cv_mae = -1;  // k-fold mean absolute error of speed on held-out pairs; -1 if unfitted
  std::size_t pairs = 0;
};

// Fits on the measured pairs (when `table` is non-null) or returns the built-in
// util/memory model (coefficients documented in docs/) when there is no data.
InterferenceFit fit_interference(const ColocationTable* table);

}  // namespace ds
