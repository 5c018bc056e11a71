// A `slurm replay` output folder read back as input (`deepshare fidelity`), checked rather
// than trusted (issue #26 item 2: a hand-edited replay.json gave exit 3 with a JSON
// exception, a hand-edited observed.csv silently wrong comparisons).
//
// Checks, each an InputError naming the file, line and field:
//  1. manifest.json (core/manifest.hpp) is there, of kind "replay", and every file it lists
//     is whole and unchanged; no entry is there but those, report.html, journal.log, work/
//     and fidelity/ (what `fidelity` and the stand-ins add).
//  2. replay.json is an object with every key of the right type and range: trace, format,
//     excerpt, config (strings), time_scale (0.001 .. 1e6), nodes (1 .. 100,000 distinct
//     names, 1 .. 64 GPUs each), jobs >= submitted >= completed (whole numbers), wall and
//     latency seconds (0 .. 1e9, finite); the counts agree with the manifest's.
//  3. observed.csv: one row per replayed job (as many as replay.json's jobs), distinct
//     non-empty names, times in controller milliseconds (-1 = never) within 0 .. 10,000
//     years with start >= submit and end >= start, queue >= 0, completed 0 or 1, runs
//     0 .. 1e6 and preemptions, shared and borrowed runs at most its runs (a job that
//     completed unseen between two polls has no start: fidelity leaves it out, as before).
//  4. summary.json's qos_compliance, when there, is a number in [0, 1].
// Whether the folder still matches its trace and controller config (the excerpt they give
// now) is checked by the caller, which builds the excerpt (replay/fidelity.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "core/types.hpp"

namespace ds::slurm {

struct LatencyStats {
  std::uint64_t n = 0;
  double mean = 0, p50 = 0, p90 = 0;
};

struct ReplayRecord {  // replay.json
  std::string trace, format, excerpt, config;
  double time_scale = 1;
  std::vector<std::pair<std::string, int>> nodes;  // name, GPUs
  std::uint64_t jobs = 0, submitted = 0, completed = 0;
  double wall_seconds = 0;
  double start_latency_wall_s = 0;
  bool has_latency = false;  // latency_wall_s present (replays since it was measured)
  LatencyStats detect, actuate, overhang;
};

struct ObservedRow {  // observed.csv
  std::string job;
  Time submit_ms = 0, first_start_ms = -1, end_ms = -1, queue_ms = 0;
  std::uint32_t runs = 0, preemptions = 0, shared_runs = 0, borrowed_runs = 0;
  bool completed = false;
};

struct ReplayFolder {
  Manifest manifest;
  ReplayRecord record;
  std::vector<ObservedRow> observed;  // in the file's order
  double real_qos = 1;                // summary.json's qos_compliance
  std::string excerpt_digest;         // the manifest's workload digest of the excerpt
};

// Steps 1-4; throws InputError.
ReplayFolder read_replay_folder(const std::filesystem::path& dir);

// The range of time_scale (trace seconds per wall second), for every tool that takes one.
inline constexpr double kMinTimeScale = 1e-3, kMaxTimeScale = 1e6;

}  // namespace ds::slurm
