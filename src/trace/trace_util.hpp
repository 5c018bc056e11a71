// Helpers shared by the trace importers.
#pragma once

#include <optional>
#include <string_view>

#include "core/csv.hpp"
#include "model/workload.hpp"

namespace ds {

// "COMPLETED", "CANCELLED", "FAILED" (any case); everything else is Other.
FinalState parse_final_state(std::string_view s);

// The optional workload-profile columns of a trace (model, dataset, batchsize, amp,
// gpu_util, gmem), found by name; absent columns are left unknown.
class ProfileColumns {
 public:
  explicit ProfileColumns(const CsvReader& csv);
  // Fills job.profile, job.gpu_util and job.gpu_memory_mib from the current row.
  void read(const CsvReader& csv, Workload& w, JobSpec& job) const;

 private:
  std::optional<std::size_t> model_, dataset_, batch_, amp_, util_, gmem_;
};

}  // namespace ds
