// Importer for the raw HeliosData job log (cluster_log.csv of Venus, Earth, Saturn, Uranus).
//
// Assumptions (docs/formats.md, "helios", says the same for users):
//  1. Columns are found by name. Required: job_id, user, vc, gpu_num, state, submit_time,
//     duration. Others (jobname, cpu_num, node_num, start_time, end_time, queue) are ignored:
//     the simulator decides when jobs start.
//  2. submit_time is "YYYY-MM-DD HH:MM:SS", read as UTC and kept as seconds since the Unix
//     epoch (Helios logs local time; only differences matter to a simulation).
//  3. duration is the job's real run time in seconds, taken as its work when running alone.
//  4. Jobs with gpu_num = 0 are CPU jobs: skipped and counted in Workload::notes.
//  5. Tenants are the VCs. A VC's size is its GPU count in cluster_gpu_number.csv (GPUs per
//     VC per day; found beside the trace or in aux/ beside it) on the last date that is not
//     after the day of the last submit in the trace: the cluster as it stood when the trace
//     ended (VCs are resized over time; a later date would use capacity the trace never saw).
//     Quota = size; nodes of 8 GPUs (the last one smaller when the size is not a multiple of
//     8) with 24 GiB each, owned by the VC. VCs with neither GPUs nor jobs are left out.
//  6. A VC with jobs but no column in the sizes file is an error, unless the caller supplies
//     the cluster itself (a --cluster file): then tenants are the VCs in first-seen order,
//     without nodes, and the sizes file is not read.
#pragma once

#include <cstdint>
#include <string>

#include "model/workload.hpp"

namespace ds {

struct HeliosOptions {
  std::string gpu_numbers;           // empty: search cluster_gpu_number.csv beside the trace
  bool cluster_from_caller = false;  // true: skip the sizes; a cluster file replaces them
  int gpus_per_node = 8;
  std::int64_t gpu_memory_mib = kDefaultGpuMemoryMib;
};

Workload load_helios(const std::string& path, const HeliosOptions& options = {});

}  // namespace ds
