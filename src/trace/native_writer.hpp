// Writes a workload as DeepShare's own files: a native trace (docs/formats.md, "native") and a
// cluster file ("Cluster file"), so that an imported site (`deepshare import slurm`) is a pair
// of plain files the operator can read, edit and replay with `--format native --cluster`.
//
// Assumptions:
//  1. Reading the two files back (load_trace with --format native --cluster) gives the same
//     jobs, tenants and nodes (node names aside: the cluster file numbers nodes per group, so
//     the names are kept in a comment beside each group). Times keep their milliseconds.
//  2. Optional native columns are written only when some job has a value; `extra` columns
//     (e.g. what Slurm recorded) follow them: the native importer ignores unknown columns.
#pragma once

#include <string>
#include <vector>

#include "model/workload.hpp"

namespace ds {

struct ExtraColumn {
  std::string name;
  std::vector<std::string> values;  // one per job, in job order
};

std::string native_trace_csv(const Workload& w, const std::vector<ExtraColumn>& extra = {});
// `comment` heads the file (one '#' line per line of it).
std::string cluster_file_yaml(const Workload& w, const std::string& comment = "");

// Milliseconds as seconds with at most three decimals ("12", "-1.5", "0.001").
std::string seconds_text(Time ms);

}  // namespace ds
