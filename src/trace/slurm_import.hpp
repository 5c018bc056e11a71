// `deepshare import slurm`: a site's own Slurm records -> a DeepShare workload (cluster,
// tenants, jobs), which write_native_trace / write_cluster_file (native_writer.hpp) save as a
// native trace and a cluster file. The parts: slurm_sacct.hpp (jobs), slurm_assoc.hpp
// (tenants), slurm_nodes.hpp (nodes); docs/formats.md, "slurm", for users.
//
// Assumptions:
//  1. Each job becomes a native job: its JobID, its account as tenant, its user, GPUs, a
//     required GPU model if it asked for one, its submit time (seconds as written), its last
//     run's Elapsed as work, its final state. What Slurm did (start, end, time limit) is kept
//     beside it (SlurmRecord), for the "as recorded" line of `whatif` and the trace's
//     reference columns.
//  2. With a partition, only jobs that ran there (and its nodes) are read; skipped jobs are
//     counted by reason. A job requiring a GPU model no node has is skipped and counted.
//  3. A job's account that the associations do not list (a deleted account) becomes a
//     best-effort tenant (quota 0), noted.
#pragma once

#include <string>
#include <vector>

#include "model/workload.hpp"
#include "trace/slurm_nodes.hpp"

namespace ds {

struct SlurmFiles {
  std::string sacct;  // sacct --parsable2 ...
  std::string assoc;  // sacctmgr show assoc --parsable2 ...
  std::string qos;    // sacctmgr show qos --parsable2 (optional)
  std::string nodes;  // scontrol show nodes
};

struct SlurmImportOptions {
  std::string partition;
  std::vector<std::string> gpu_memory;  // MODEL=GIB
};

// What Slurm recorded for a job (seconds as written), parallel to Workload::jobs.
struct SlurmRecord {
  std::int64_t first_start_s = 0;  // of its first run
  std::int64_t start_s = 0;        // of its last run
  std::int64_t end_s = 0;
  std::int64_t time_limit_s = -1;  // -1: none
  int runs = 1;
};

struct SlurmImport {
  Workload workload;
  std::vector<SlurmRecord> recorded;
};

SlurmImport import_slurm(const SlurmFiles& files, const SlurmImportOptions& options);

}  // namespace ds
