// Lucid's sharing decisions: the arrival forecast behind its Prescient Adaptive
// Sharing (PAS) switch, the per-job sharescore, and the pairing rule.
//
// Source: Lucid artifact (S-Lab-System-Group/Lucid @63685a3), simulation/policy/lucid.py
// (check_pas, job_pair_picker_time_aware, obtain_colocate_analysis),
// simulation/policy/policy.py (check_future_cluster_throughput) and
// simulation/profiler/profiler.py (the same forecast over GPUs, for the profiler).
//
// Assumptions:
//  - The forecast is a series of 10-minute bins (Lucid's predictor output,
//    aux/Venus_throughput_pred.csv: pred_gpu_job = GPU jobs, pred_gpu_num = GPUs submitted
//    per bin). Bin k starts at origin + k x 10 min; Lucid aligns the first row with the
//    start of its simulation window (midnight before the first submit), and so do we.
//  - Without a forecast file the policy forecasts online from the arrivals it has seen
//    (persistence: the mean of the last five finished bins); no future is read.
//  - sharescore (0 shares well .. 2 shares badly) is Lucid's label of the job's profiled
//    configuration (single_data.csv `label`). Jobs whose configuration is not profiled
//    get a score from their measured GPU utilization (< 25 % -> 0, < 60 % -> 1, else 2:
//    the thresholds that separate the labels of single_data.csv best); unknown -> 2.
//
// Algorithm:
//  1. window_mean(t): the mean of the next five bins that start strictly after t (all
//     remaining bins when fewer than six remain; none left -> "no forecast").
//  2. PAS (evaluated every 100 s on Lucid's clock, held in between): sharing is off when
//     window_mean(pred_gpu_job) <= threshold (2), on otherwise or without a forecast.
//  3. Pairing: a queued job of <= 8 GPUs shares the GPUs of the FIRST job in start order
//     that runs alone, has the same GPU count, leaves room for both jobs' memory
//     (gmem_target < GPU memory - gmem_job), has sharescore sum <= 2 and whose
//     estimated GPU time is at least half the job's (job.priority <= 2 x target.priority).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/aux_data.hpp"
#include "model/colocation.hpp"
#include "model/job.hpp"

namespace ds {

class ThroughputForecast {
 public:
  enum class Field : std::uint8_t { Jobs, Gpus };

  // Lucid's forecast file (model/aux_data.hpp); once anchored, row k's bin starts at the
  // origin + (its time - the first row's time).
  static ThroughputForecast from_rows(const ForecastFile& file);
  // An online forecast over 10-minute bins counted from the origin.
  static ThroughputForecast online();
  // Sets the origin (Lucid: midnight before the first submit; the policy anchors a
  // forecast at its first arrival, since it learns jobs online).
  ThroughputForecast& anchor(Time origin);

  [[nodiscard]] bool is_online() const { return online_; }
  [[nodiscard]] bool anchored() const { return anchored_; }
  // Records a submission (online mode; ignored otherwise).
  void observe_arrival(Time t, int gpus);
  // Step 1; nullopt when no forecast is left.
  [[nodiscard]] std::optional<double> window_mean(Time t, Field f) const;
  // Earliest time > t at which window_mean may change (bin boundary), kNever when none.
  [[nodiscard]] Time next_change(Time t) const;

 private:
  bool online_ = false;
  bool anchored_ = false;
  Time origin_ = 0;
  std::vector<Time> offset_;  // file mode: bin start - first bin start, ascending
  std::vector<Time> start_;   // file mode, once anchored: bin start times
  std::vector<double> jobs_, gpus_;
};

// Lucid's sharescore of a job (see the assumptions above).
int lucid_share_score(const ColocationTable* table, const Profile* profile, double gpu_util);

// What the pairing rule looks at for one job.
struct PairView {
  int gpus = 0;
  double gmem_mib = 0;
  int score = 2;
  double priority = 0;  // estimated GPU time
};

// Step 3 for `job` over running candidates in start order (only those running alone);
// returns the index of the partner in `candidates`, or nullopt.
std::optional<std::size_t> lucid_pick_partner(const PairView& job,
                                              std::span<const PairView> candidates,
                                              double gpu_memory_mib);

// Step 3's test for one candidate.
bool lucid_can_pair(const PairView& job, const PairView& target, double gpu_memory_mib);

}  // namespace ds
