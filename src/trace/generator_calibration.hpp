// Published summary statistics of the Venus September 2020 trace (Lucid-prepared,
// 23,859 jobs) that calibrate the built-in workload generator.
//
// Source: ../shared/traces/venus-sept/STATS.md (per-VC table, GPU-count mix, duration
// quantiles, final states, arrival shape) and the per-model ranges of Lucid's 66
// profiled single-job configurations (aux/single_data.csv), summarised per model.
// Only aggregate numbers live here, never trace rows. Where STATS.md gives a
// coarse description only, the finer split is noted beside the constant.
#pragma once

#include <array>
#include <cstdint>

namespace ds::venus_stats {

// One virtual cluster (tenant) of Venus: STATS.md "Cluster" table.
struct VcStats {
  const char* name;
  int nodes;            // 8-GPU nodes
  int jobs;             // jobs submitted over the 26-day trace
  int users;            // distinct users
  double mean_gpus;     // mean GPUs per job
  double multi_share;   // share of jobs with more than one GPU
  double median_s;      // median duration
  double offered_load;  // GPU-hours / (VC GPUs x 26 days x 24 h)
};

inline constexpr std::array<VcStats, 15> kVcs = {{
    {"vcJsw", 32, 1854, 8, 20.6, 0.94, 123, 0.91},
    {"vcvGl", 20, 1452, 5, 58.0, 0.96, 80, 1.09},
    {"vcKeu", 12, 2301, 29, 3.6, 0.32, 277, 0.80},
    {"vcYVn", 11, 1525, 24, 2.8, 0.27, 452, 0.84},
    {"vcefl", 10, 679, 6, 4.2, 0.85, 203, 0.92},
    {"vcEwI", 9, 7603, 13, 2.6, 0.14, 123, 0.89},
    {"vcHvQ", 8, 2654, 19, 4.2, 0.46, 351, 0.77},
    {"vcLTP", 8, 518, 11, 6.9, 0.83, 2014, 0.85},
    {"vc8Gr", 6, 710, 17, 7.1, 0.90, 183, 0.79},
    {"vcWoR", 5, 2826, 17, 2.3, 0.41, 139, 0.90},
    {"vcKrE", 4, 426, 9, 1.5, 0.49, 424, 0.84},
    {"vchbv", 4, 196, 6, 7.8, 0.82, 428, 0.77},
    {"vchA3", 3, 651, 13, 2.4, 0.32, 235, 0.62},
    {"vcvlY", 2, 415, 7, 8.7, 0.98, 192, 0.91},
    {"vcgkz", 1, 49, 4, 6.1, 0.74, 171, 1.30},
}};
inline constexpr int kGpusPerNode = 8;
inline constexpr double kTraceDays = 26;  // the span the per-VC offered loads refer to
inline constexpr int kTotalUsers = 118;   // 34 of them submit to more than one VC

// GPUs per job (STATS.md "Jobs"): the listed sizes with their job counts. STATS.md
// lumps the remaining 615 jobs as "others rare (3, 5-7, 14, 24, 40-160)"; they are
// split here over representative sizes (overall mean 7.9 GPUs; published 8.0).
struct SizeCount {
  int gpus;
  int jobs;
};
inline constexpr std::array<SizeCount, 16> kGpuMix = {{
    {1, 13488},
    {2, 1490},
    {3, 48},
    {4, 1645},
    {6, 116},
    {8, 4630},
    {16, 523},
    {24, 214},
    {32, 964},
    {48, 102},
    {64, 40},
    {96, 30},
    {120, 102},
    {128, 402},
    {136, 37},
    {160, 23},
}};

// Share of GPU time held by single-GPU jobs (STATS.md "Share of GPU time by size").
inline constexpr double kSingleGpuTimeShare = 0.041;

// Duration quantiles in seconds (STATS.md): p10, p25, p50, p75, p90, p95, p99,
// p99.9 and the maximum. The minimum (1 s) is the trace's whole-second floor.
struct Quantile {
  double q;
  double seconds;
};
inline constexpr std::array<Quantile, 10> kDurationQuantiles = {{
    {0.0, 1},
    {0.10, 24},
    {0.25, 81},
    {0.50, 193},
    {0.75, 814.5},
    {0.90, 9514},
    {0.95, 56918},
    {0.99, 264172},
    {0.999, 701707},
    {1.0, 1286670},
}};

// Final states (STATS.md): 55.7 % completed, 25.3 % cancelled, 19.0 % failed of the
// jobs, but 49.1 / 46.0 / 3.7 % of the GPU time: failures are short, cancellations
// long. Modelled as state probabilities for jobs up to / above the p75 duration.
inline constexpr double kShortJobSeconds = 814.5;
inline constexpr double kFailedShort = 0.245, kFailedLong = 0.025;
inline constexpr double kCancelledShort = 0.187, kCancelledLong = 0.45;

// Arrivals (STATS.md "Arrivals"): jobs per hour of day on an average day, anchored
// at ~10/h at 04-08 h, 63-66/h at 14-17 h and ~50/h at 19-21 h (the hours between
// follow the trace's hour-of-day profile as `deepshare trace stats` prints it).
inline constexpr std::array<double, 24> kJobsPerHourOfDay = {
    31, 29, 26, 23, 12, 10, 10, 10, 15, 26, 41, 49, 50, 50, 64, 66, 64, 64, 51, 50, 50, 55, 39, 30,
};
// Relative arrival rate per weekday, Monday first: STATS.md's jobs per weekday over
// the month (Mon 3,168, Tue 3,861, Wed 6,020, Thu 4,801, Fri 3,157, Sat 1,600,
// Sun 1,252) divided by that weekday's days in Sep 1-26, 2020 (3, 4, 4, 4, 4, 4, 3).
inline constexpr std::array<double, 7> kWeekdayRate = {1056, 965, 1505, 1200, 789, 400, 417};
// Day-to-day spread beyond the weekday shape (STATS.md: 295 to 1,992 jobs per day)
// and hour-to-hour burstiness, as log-normal factors.
inline constexpr double kDayLogSigma = 0.25;
inline constexpr double kHourLogSigma = 0.45;
// Share of zero inter-arrival gaps (same-second batches): 13.2 %. Independent arrivals
// at ~1 per 94 s already tie within a second for ~0.7 % of gaps, so a batch takes
// one more job with probability 0.125 (1 - 1 / mean batch size = 12.5 %).
inline constexpr double kBatchContinue = 0.125;

// Lucid's profiled DL jobs (aux/single_data.csv), one entry per model: batch sizes
// profiled (powers of two from..to), whether mixed precision was profiled, and the
// range of GPU utilization (%) and GPU memory (MiB) over its configurations.
struct ModelProfile {
  const char* model;
  const char* dataset;
  int batch_min, batch_max;
  bool amp;
  double util_min, util_max;
  double mem_min, mem_max;
};
inline constexpr std::array<ModelProfile, 14> kModels = {{
    {"BERT", "SQuAD", 32, 32, true, 99.6, 99.7, 16334, 20162},
    {"DCGAN", "LSUN", 32, 128, true, 35, 94, 2322, 3096},
    {"EfficientNet", "CIFAR-10", 32, 128, true, 21, 45, 2176, 2766},
    {"LSTM", "Wikitext2", 64, 128, true, 64, 97, 3750, 5616},
    {"MobileNetV2", "CIFAR-10", 32, 128, true, 29, 99, 2320, 4078},
    {"MobileNetV3", "ImageNet", 32, 128, true, 35, 100, 2382, 4428},
    {"NeuMF", "MovieLens", 64, 128, true, 10, 10.5, 2050, 2050},
    {"PPO", "LunarLander", 32, 128, false, 12, 15, 2051, 2051},
    {"PointNet", "ShapeNet", 32, 128, true, 6, 12, 3334, 10474},
    {"ResNet18", "CIFAR-10", 32, 128, true, 41, 96, 2330, 4036},
    {"ResNet50", "ImageNet", 32, 128, true, 96, 100, 3838, 13326},
    {"TD3", "BipedalWalker", 32, 128, false, 13, 14, 2059, 2059},
    {"Transformer", "Multi30k", 32, 64, false, 54, 75, 11801, 11949},
    {"VGG", "CIFAR-10", 32, 128, true, 34, 51, 2666, 3990},
}};

}  // namespace ds::venus_stats
