// Interference model (interface): predicted speed of a job sharing one GPU with
// another under MPS (exclusive speed = 1). Fitted from measured pairs; profiles it
// has not seen fall back to a model on GPU utilization and memory.
// The fitted model, its features and its cross-validated error: model.hpp and
// docs/interference.md.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/colocation.hpp"
#include "model/job.hpp"

namespace ds {

// What the model knows of one job: its profile (may be null) and its measured
// single-job GPU util (percent, -1 unknown) and memory (MiB, 0 unknown).
struct JobShape {
  const Profile* profile = nullptr;
  double gpu_util = -1;
  double gpu_memory_mib = 0;
};

// The shape of `job`; `profiles` is the workload's profile table (JobSpec::profile indexes it).
JobShape shape_of(std::span<const Profile> profiles, const JobSpec& job);

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
  // Same folds, other predictors (the comparison docs/interference.md reports):
  double cv_mae_mean = -1;       // trivial baseline: the training folds' mean speed
  double cv_mae_util_only = -1;  // the util/memory model alone
  // Leave-one-model-family-out: held-out pairs involve a model never seen in training,
  // so they get the util/memory fallback (what an unknown workload gets).
  double cv_mae_unseen_model = -1;
  double cv_mae_unseen_model_mean = -1;  // the mean-speed baseline on those folds
  std::size_t folds = 0;
  std::vector<double> util_coefficients;  // the fitted util/memory model (see model.hpp)
};

struct InterferenceOptions {
  std::size_t folds = 5;   // k of k-fold cross-validation (0 or 1: no cross-validation)
  std::uint64_t seed = 1;  // shuffles pairs into folds (ds::Rng)
  double ridge = 1.0;      // L2 penalty of the per-model and per-profile effects
};

// Fits on the measured pairs (when `table` is non-null and holds pairs) or returns the
// built-in util/memory model (coefficients documented in docs/) when there is no data.
InterferenceFit fit_interference(const ColocationTable* table);
InterferenceFit fit_interference(const ColocationTable* table, const InterferenceOptions& options);

// The built-in util/memory model alone (no data needed).
std::unique_ptr<InterferenceModel> builtin_interference_model();

// Speed of `job` on a GPU it shares with all of `others`: the product of its pairwise
// speeds, each capped at 1 (each partner slows it independently; the measured pairs
// have no triples), floored at 0.001. 1 with no partner. The simulator's ground truth
// (sim/speed_models.hpp) combines partners the same way.
double combined_speed(const InterferenceModel& model, const JobShape& job,
                      std::span<const JobShape> others);

}  // namespace ds
