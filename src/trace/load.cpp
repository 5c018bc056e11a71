#include "trace/load.hpp"

#include "core/error.hpp"
#include "trace/venus.hpp"

namespace ds {
namespace {

Workload load_venus_format(const std::string& path, const LoadOptions&) { return load_venus(path); }

}  // namespace

const std::vector<TraceFormat>& trace_formats() {
  static const std::vector<TraceFormat> table = {
      {"venus", "Lucid-prepared Helios Venus jobs CSV, or a folder of Lucid's per-VC logs",
       &load_venus_format},
  };
  return table;
}

Workload load_trace(const std::string& path, const LoadOptions& options) {
  for (const auto& f : trace_formats()) {
    if (f.name != options.format) continue;
    Workload w = f.load(path, options);
    return w;
  }
  std::string known;
  for (const auto& f : trace_formats()) known += (known.empty() ? "" : ", ") + f.name;
  throw InputError("unknown trace format '" + options.format + "' (known: " + known + ")");
}

}  // namespace ds
