// Measured colocation data (Lucid's profiling, ../shared/traces/venus-sept/aux):
// colocate_info.csv (pairs of 1-GPU DL jobs on one GPU and each one's normalized
// speed) and single_data.csv (per-configuration util, memory and Lucid's sharing
// label). Used as the simulator's ground truth for measured pairs, as training data
// for the interference model, and by the Lucid baseline.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/job.hpp"

namespace ds {

struct SingleProfile {
  Profile profile;
  double speed = 0;      // exclusive throughput (samples/s)
  double gpu_util = 0;   // percent
  double gmem_util = 0;  // percent
  double gmem_mib = 0;
  int share_label = 0;  // Lucid's sharescore 0 (shares well) .. 2 (shares badly)
};

struct MeasuredPair {
  Profile a, b;
  double speed_a = 1, speed_b = 1;  // colocated / exclusive throughput
  double gpu_util = 0;              // the pair's GPU util (percent)
  double gmem_mib = 0;              // the pair's memory
};

class ColocationTable {
 public:
  // Reads colocate_info.csv and single_data.csv from `aux_dir`; throws InputError
  // (file:line:column) on malformed rows.
  static ColocationTable load(const std::string& aux_dir);
  // True when both files exist in `aux_dir`.
  static bool available(const std::string& aux_dir);
  // A table from rows already in memory (tests, cross-validation folds); a pair or
  // profile listed twice keeps its first row, as load() does.
  static ColocationTable from_rows(std::vector<MeasuredPair> pairs,
                                   std::vector<SingleProfile> singles);

  [[nodiscard]] const std::vector<MeasuredPair>& pairs() const { return pairs_; }
  [[nodiscard]] const std::vector<SingleProfile>& singles() const { return singles_; }
  // Measured speeds (of a, of b) when the pair was profiled, in either order.
  [[nodiscard]] std::optional<std::pair<double, double>> lookup(const Profile& a,
                                                                const Profile& b) const;
  [[nodiscard]] const SingleProfile* single(const Profile& p) const;

 private:
  std::vector<MeasuredPair> pairs_;
  std::vector<SingleProfile> singles_;
  std::unordered_map<std::string, std::size_t> pair_index_;    // key(a)|key(b) -> pair
  std::unordered_map<std::string, std::size_t> single_index_;  // key(p) -> single
};

// "model|dataset|batch|amp", the key used to match profiles.
std::string profile_key(const Profile& p);

}  // namespace ds
