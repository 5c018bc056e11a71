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
};

struct TraceFormat {
  std::string name;
  std::string summary;
  Workload (*load)(const std::string& path, const LoadOptions& options);
};

const std::vector<TraceFormat>& trace_formats();
// Loads, applies the cluster file if any, and validates; throws InputError.
Workload load_trace(const std::string& path, const LoadOptions& options);

}  // namespace ds
