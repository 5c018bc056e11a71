// Helpers shared by the trace importers.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/csv.hpp"
#include "model/workload.hpp"

namespace ds {

// "COMPLETED", "CANCELLED", "FAILED" (any case); everything else is Other.
FinalState parse_final_state(std::string_view s);

// "YYYY-MM-DD" -> days since 1970-01-01 (proleptic Gregorian); nullopt when malformed.
std::optional<std::int64_t> parse_date(std::string_view s);
// "YYYY-MM-DD HH:MM:SS" (or with 'T' between) -> seconds since the Unix epoch, read as UTC
// (no time zone: only differences between times matter to a simulation); nullopt when malformed.
std::optional<std::int64_t> parse_datetime(std::string_view s);
// The inverse of parse_date, for messages.
std::string format_date(std::int64_t days);

// "LS", "BE", "Burstable", "Guaranteed" (any case); nullopt otherwise.
std::optional<Qos> parse_qos(std::string_view s);

// Largest-remainder split of `total` GPUs in proportion to `demand` (an equal split when no
// demand; ties to the lower index), so that the parts add up to `total` exactly.
std::vector<int> split_quota(int total, const std::vector<double>& demand);

// Appends a tenant with default settings and returns its id.
TenantId add_tenant(Workload& w, const std::string& name, int quota_gpus = 0,
                    TenantClass cls = TenantClass::Guaranteed);

// The first of `names` that exists beside `trace_path` (in its folder, or in that
// folder's aux/); empty when none does.
std::string find_beside(const std::string& trace_path, std::initializer_list<const char*> names);

// The required columns of a Helios-style job CSV (raw HeliosData and Lucid's Venus
// preparation share them), looked up by name; throws InputError naming a missing one.
struct HeliosJobColumns {
  std::size_t id, user, vc, gpus, state, submit, duration;
};
HeliosJobColumns require_helios_job_columns(const CsvReader& csv);

// The optional workload-profile columns of a trace (model, dataset, batchsize, amp,
// gpu_util, gmem), found by name; absent columns are left unknown.
// The checked readers every importer uses for these quantities (ranges in core/limits.hpp):
// GPU memory per GPU, 0..1 TiB in MiB; a GPU count, min..100,000 (a whole decimal such as
// "8.0" is accepted); whole seconds of a time (+-100 years) or a duration (0..1e10 s).
double read_gpu_memory_mib(const CsvReader& csv, std::size_t column);
std::int64_t read_gpu_count(const CsvReader& csv, std::size_t column, std::int64_t min);
std::int64_t read_whole_seconds(const CsvReader& csv, std::size_t column, bool duration);

// A job's required GPU model(s), JobSpec::gpu_type: "A100" or "V100M16|V100M32" (no empty
// alternative, no blank around a name).
std::string read_gpu_type(const CsvReader& csv, std::size_t column);

// Counts the nodes and GPUs an importer adds and fails, at `where`, as soon as either
// passes the limits (limits::kMaxNodes, kMaxClusterGpus): before any node is created.
class NodeTally {
 public:
  void add(const SourceLocation& where, std::int64_t nodes, std::int64_t gpus_each);

 private:
  std::int64_t nodes_ = 0;
  std::int64_t gpus_ = 0;
};

class ProfileColumns {
 public:
  explicit ProfileColumns(const CsvReader& csv);
  // Fills job.profile, job.gpu_util and job.gpu_memory_mib from the current row.
  void read(const CsvReader& csv, Workload& w, JobSpec& job) const;

 private:
  std::optional<std::size_t> model_, dataset_, batch_, amp_, util_, gmem_;
};

}  // namespace ds
