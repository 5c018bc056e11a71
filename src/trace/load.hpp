// One entry point for every trace format, with an explicit table of importers.
#pragma once

#include <string>
#include <vector>

#include "model/workload.hpp"

namespace ds {

struct LoadOptions {
  std::string format;                // venus | helios | openb | native
  std::string cluster_file;          // optional YAML: replaces the tenants and nodes
  std::vector<std::string> columns;  // native format: "field=csv_column" mappings
  double fit_load =
      0;  // > 0: resize the cluster to this offered load (Workload::fit_cluster_to_load)
  bool profiles = true;  // false: drop_profiles() after loading
};

struct TraceFormat {
  std::string name;
  std::string summary;
  Workload (*load)(const std::string& path, const LoadOptions& options);
};

const std::vector<TraceFormat>& trace_formats();
// Loads, applies the cluster file if any, and validates; throws InputError.
Workload load_trace(const std::string& path, const LoadOptions& options);

// Forgets every job's workload profile, GPU utilization and GPU memory (`--no-profiles`):
// the workload of an operator without profiling data. No policy can share a GPU then
// (sharing needs the memory), fractional requests still pack by their share; SM
// utilization counts every job as 100 % busy. Adds a note.
void drop_profiles(Workload& w);

}  // namespace ds
