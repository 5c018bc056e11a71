// The jobs of a Slurm accounting dump: `sacct --parsable2 --allusers --duplicates
// --starttime ... --endtime ... --format JobID,JobIDRaw,Account,User,Partition,QOS,Submit,
// Start,End,Elapsed,State,AllocTRES,ReqTRES,NNodes,Timelimit` (docs/formats.md, "slurm").
//
// Assumptions:
//  1. The header decides the columns, in any order. Required: JobID, Account, Submit, Start,
//     End, State and AllocTRES or ReqTRES; optional: JobIDRaw, User, Partition, QOS,
//     Elapsed, NNodes, Timelimit. Other columns are ignored.
//  2. Rows whose JobID has a step ('.batch', '.extern', '.0') belong to their job and are
//     folded into it (counted, never read further). Array tasks ("123_4") are jobs of their
//     own; a pending array range ("123_[5-9]") never started. Heterogeneous components
//     ("123+0", "123+1") start together: they are folded into one job "123" whose GPUs are the
//     components' sum, its start the earliest and its end the latest, its account, user and
//     state component 0's.
//  3. Several rows with the same JobID are runs of one job (`--duplicates` prints a requeued
//     job's earlier runs, state REQUEUED or PREEMPTED): the job keeps the earliest Submit
//     (Slurm resets it at a requeue), and its last run is the one that counts (Start, End,
//     Elapsed, State; a requeued job starts over). An identical row seen again (overlapping
//     dumps) is counted and dropped.
//  4. GPUs: AllocTRES gres/gpu (what the job got), else its gres/gpushare (a job colocated by
//     DeepShare holds the share slots of its GPUs, docs/slurm.md §3), else ReqTRES gres/gpu.
//     A required GPU model is ReqTRES' one typed entry gres/gpu:<model>; DeepShare's index
//     types (g0, g1, ...) name GPUs, not models, and several models in one request are no
//     single constraint (counted).
//  5. A job's work is its last run's Elapsed (else End - Start). Jobs that never started
//     (Start Unknown/None), are still running (End Unknown), hold no GPU, or have no account
//     are skipped, each counted by reason.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ds {

struct SacctJob {
  std::string id;  // JobID ("123", "123_4"; a heterogeneous job's base id)
  std::string raw_id;
  std::string account;
  std::string user;
  std::string partition;
  std::string qos;
  std::string state;     // of the last run
  std::string gpu_type;  // required model; empty: any
  std::int64_t submit_s = 0;
  std::int64_t first_start_s = 0;  // of the first run (the job's first wait ended)
  std::int64_t start_s = 0;        // of the last run
  std::int64_t end_s = 0;
  std::int64_t run_s = 0;  // the last run's Elapsed
  std::optional<std::int64_t> time_limit_s;
  std::int64_t gpus = 0;
  int nodes = 1;
  int runs = 1;  // the job's rows (more than one: requeued)
  int components = 1;
  long line = 0;  // the last row of the job
};

struct SacctRead {
  std::vector<SacctJob> jobs;                  // in file order of their first row
  std::map<std::string, std::size_t> skipped;  // reason -> jobs
  std::size_t rows = 0;
  std::size_t step_rows = 0;
  std::size_t duplicate_rows = 0;
  std::size_t requeued_jobs = 0;  // jobs with more than one run
  std::size_t het_jobs = 0;
  std::size_t mixed_models = 0;  // requests naming several GPU models: no constraint
};

// Reads and folds a dump; throws InputError (file, line, column, field) on bad input.
SacctRead read_sacct(const std::string& path);

}  // namespace ds
