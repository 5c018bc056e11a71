// Importer for the Lucid-prepared Helios Venus trace.
//
// Accepts either
//  - the per-job file (venus_sept_23859_jobs.csv: job_id,user,vc,gpu_num,state,
//    submit_time,duration, the workload profile columns and optionally lucid_vc_order), or
//  - a folder of Lucid's per-VC simulator logs (fifo_consolidate_<vc>_log.csv), whose
//    first columns are the same input fields; a job's order in its VC is its row.
// Tenants are the VCs, with quotas and nodes (8 GPUs, 24 GiB each, owned by the VC)
// from vc_config.csv (looked for in aux/ beside the trace or beside its folder, or
// given explicitly). Jobs with equal submit seconds keep Lucid's order in their VC.
// When the caller supplies the cluster (a --cluster file), vc_config.csv is not read:
// tenants are the jobs' VCs in first-seen order, without nodes.
#pragma once

#include <string>

#include "model/workload.hpp"

namespace ds {

struct VenusOptions {
  std::string vc_config;             // empty: search aux/vc_config.csv beside the trace
  bool cluster_from_caller = false;  // true: skip vc_config.csv; a cluster file replaces it
  int gpus_per_node = 8;
  std::int64_t gpu_memory_mib = kDefaultGpuMemoryMib;  // Lucid assumes RTX 3090-class 24 GiB GPUs
};

Workload load_venus(const std::string& path, const VenusOptions& options = {});

// Finds aux/vc_config.csv for a trace path; empty when there is none.
std::string find_vc_config(const std::string& trace_path);

}  // namespace ds
