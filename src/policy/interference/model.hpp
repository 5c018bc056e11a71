// The fitted interference model: ridge regression of a shared job's speed.
//
// Assumptions:
//  - The measured pairs (Lucid, two 1-GPU processes on one RTX 3090) carry over to MPS
//    sharing and to each GPU of a multi-GPU job (no better data is public).
//  - A job is described by its single-job profile: GPU util u (fraction), memory m
//    (GiB), AMP, model family and exact profile (model, dataset, batch, AMP).
//  - Speed is roughly linear in these features with an overload term once the two
//    jobs together want more than the whole GPU.
// Algorithm:
//  1. Util/memory features of job j sharing with partner o (all that an unknown
//     workload has): [1, u_j, u_o, u_j*u_o, max(0, u_j + u_o - 1), (m_j + m_o) / 24].
//     Unknown util counts as 100% (pessimistic: predicts more slowdown), unknown memory
//     as 0. A known profile fills missing util/memory from single_data.csv.
//  2. Profile features, used when both jobs' exact profiles appear in the training
//     pairs: the util/memory features, AMP of each, same-model and same-profile flags,
//     one-hot own model family and partner model family (sensitivity / aggressiveness),
//     one-hot own profile and partner profile, and the two interactions
//     own profile x u_o and partner profile x u_j (a profile's sensitivity to load).
//  3. Fit both by ridge least squares on every measured pair in both directions (2 rows
//     per pair), penalizing only the one-hot effects (lambda = options.ridge), so that
//     rare profiles stay near their family and family effects near zero.
//  4. Predict with the profile model when both profiles are known, else the
//     util/memory model; clamp to [0.05, 1.5] (measured speeds span 0.44..1.50).
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "policy/interference/interference.hpp"

namespace ds {

constexpr std::size_t kUtilFeatures = 6;

// The util/memory model fitted once on all 1,388 pairs of Lucid's colocate_info.csv
// (fit_interference, options as default; `interference_eval --coefficients` prints
// them). Used when no profile data is present. Order: the features of step 1.
// Reading them: two light jobs (u = 0.3, 5 GiB together) keep ~0.99 of their speed; two
// saturating jobs (u = 1, 7 GiB together) fall to ~0.61; memory adds a little slowdown.
constexpr std::array<double, kUtilFeatures> kBuiltinUtilCoefficients = {
    1.020876, 0.029331, -0.025750, -0.293226, -0.111494, -0.030072};

// One job as the model sees it (step 1's inputs, resolved).
struct ResolvedShape {
  double util = 1.0;  // fraction of the GPU's SMs it keeps busy alone
  double mem_gib = 0;
  bool amp = false;
  int family = -1;               // index of its model family in the training vocabulary
  int profile = -1;              // index of its exact profile in the training vocabulary
  std::string_view family_name;  // the profile's model (valid while the profile is)
};

std::array<double, kUtilFeatures> util_features(const ResolvedShape& j, const ResolvedShape& o);

class FittedInterference final : public InterferenceModel {
 public:
  // Fits on `pairs` (steps 1-3); `singles` supplies util/memory by profile.
  FittedInterference(const std::vector<const MeasuredPair*>& pairs, const ColocationTable& singles,
                     double ridge);
  // The util/memory model only, with fixed coefficients (the built-in fallback).
  explicit FittedInterference(const std::array<double, kUtilFeatures>& util_coefficients);

  [[nodiscard]] double speed(const JobShape& job, const JobShape& other) const override;
  // The util/memory model's prediction, even when profiles are known (for CV reports).
  [[nodiscard]] double util_speed(const JobShape& job, const JobShape& other) const;
  [[nodiscard]] const std::vector<double>& util_coefficients() const { return util_beta_; }

 private:
  [[nodiscard]] ResolvedShape resolve(const JobShape& s) const;
  [[nodiscard]] std::vector<double> profile_features(const ResolvedShape& j,
                                                     const ResolvedShape& o) const;

  // What resolve() found for a profile, by its address (checked against a copy: a profile
  // freed and another built at the same address is looked up again). Lookups only.
  struct Known {
    Profile profile;
    const std::pair<double, double>* single = nullptr;
    int index = -1, family = -1;
  };
  mutable std::unordered_map<const Profile*, Known> known_;

  std::map<std::string, int> families_;  // sorted: fixed column order, deterministic fits
  std::map<std::string, int> profiles_;  // profile_key -> column block index
  std::map<std::string, std::pair<double, double>> singles_;  // key -> (util %, MiB)
  std::vector<double> util_beta_;
  std::vector<double> profile_beta_;  // empty: util/memory model only
};

}  // namespace ds
