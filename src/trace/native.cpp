#include "trace/native.hpp"

#include <cmath>
#include <optional>
#include <unordered_map>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/trace_util.hpp"

namespace ds {

const std::vector<NativeField>& native_fields() {
  static const std::vector<NativeField> fields = {
      {"job_id", true, "unique job name"},
      {"tenant", true, "tenant name (must be defined in the cluster file)"},
      {"submit_s", true, "submit time in seconds (decimals allowed)"},
      {"duration_s", true, "run time alone in seconds (decimals allowed)"},
      {"gpus", true, "GPUs requested (0: CPU job, skipped)"},
      {"user", false, "user name"},
      {"state", false, "final state: COMPLETED, CANCELLED, FAILED or other"},
      {"model", false, "DL model name (workload profile)"},
      {"dataset", false, "dataset of the workload profile (with model)"},
      {"batch_size", false, "batch size of the workload profile (with model)"},
      {"amp", false, "mixed precision of the workload profile: 1 or 0 (with model)"},
      {"gpu_util", false, "GPU utilization alone, percent 0..100"},
      {"gmem_mib", false, "GPU memory per GPU in MiB"},
      {"gpu_milli", false, "share of one GPU, 1..1000 (< 1000 only with gpus = 1)"},
      {"qos", false, "QoS class: LS, BE, Burstable or Guaranteed"},
      {"gpu_type", false, "GPU model the job needs (alternatives separated by '|')"},
  };
  return fields;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::string valid_fields() {
  std::string s;
  for (const auto& f : native_fields()) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

// Field name -> CSV column name, from the defaults and the --columns mappings.
std::unordered_map<std::string, std::string> column_names(const NativeOptions& o) {
  std::unordered_map<std::string, std::string> names;
  for (const auto& f : native_fields()) names[f.name] = f.name;
  std::unordered_map<std::string, std::string> given;  // field -> the mapping that set it
  for (const auto& entry : o.columns) {
    std::string_view rest = entry;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view m = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      const auto eq = m.find('=');
      const std::string field(trim(m.substr(0, eq == std::string_view::npos ? 0 : eq)));
      const std::string column(eq == std::string_view::npos ? "" : trim(m.substr(eq + 1)));
      if (eq == std::string_view::npos || field.empty())
        throw InputError("--columns " + quote_input(m) + ": expected FIELD=COLUMN, e.g. " +
                         "submit_s=SubmitTime");
      if (!names.contains(field))
        throw InputError("--columns " + quote_input(m) + ": unknown field " + quote_input(field) +
                         " (valid fields: " + valid_fields() + ")");
      // FIELD= (no column): an optional field is not read at all.
      for (const auto& f : native_fields())
        if (column.empty() && f.name == field && f.required)
          throw InputError("--columns " + quote_input(m) + ": field " + quote_input(field) +
                           " is required; map it to a column");
      if (auto [it, fresh] = given.emplace(field, std::string(m)); !fresh)
        throw InputError("--columns " + quote_input(m) + ": field " + quote_input(field) +
                         " is already mapped by " + quote_input(it->second));
      names[field] = column;
    }
  }
  return names;
}

// The columns the fields read (an optional field without a column: nullopt).
struct NativeColumns {
  std::size_t id, tenant, submit, dur, gpus;
  std::optional<std::size_t> user, state, model, util, gmem, milli, qos, dataset, batch, amp,
      gpu_type;
};

// The header's columns of the fields, checked: every required field has one, and no two
// fields read the same column.
NativeColumns find_columns(const CsvReader& csv, const std::string& path,
                           const std::unordered_map<std::string, std::string>& names) {
  std::unordered_map<std::string, std::optional<std::size_t>> col;
  std::unordered_map<std::size_t, std::string> reader;  // column -> the field that reads it
  for (const auto& f : native_fields()) {
    const std::string& name = names.at(f.name);
    col[f.name] = name.empty() ? std::nullopt : csv.find_column(name);
    // One column feeds one field: `--columns user=tenant` would else read the tenant
    // column twice, silently (map the other field elsewhere, or leave it out: user=).
    if (col[f.name])
      if (auto [it, fresh] = reader.emplace(*col[f.name], f.name); !fresh)
        throw InputError(SourceLocation{path, 1},
                         "fields " + quote_input(it->second) + " and " + quote_input(f.name) +
                             " would both read column " + quote_input(name) +
                             " (check --columns; leave an optional field out with FIELD=)");
    if (f.required && !col[f.name]) {
      throw InputError(SourceLocation{path, 1},
                       "missing column " + quote_input(name) + " for field '" + f.name +
                           "' (header has: " + csv.header_list() +
                           "; map another column with --columns " + f.name + "=COLUMN)");
    }
  }
  return {*col["job_id"],  *col["tenant"],    *col["submit_s"], *col["duration_s"],
          *col["gpus"],    col["user"],       col["state"],     col["model"],
          col["gpu_util"], col["gmem_mib"],   col["gpu_milli"], col["qos"],
          col["dataset"],  col["batch_size"], col["amp"],       col["gpu_type"]};
}

bool has(const CsvReader& csv, const std::optional<std::size_t>& c) {
  return c && !csv.empty_field(*c);
}

// What a row read before it may be skipped as CPU-only.
struct RowStart {
  std::string tenant;
  std::int64_t gpus;
};

// The fields every row must have valid, a skipped CPU-only row too: into `job` and
// `truth` (the id, the submit time, the work, the GPU share, QoS, type, utilization and
// memory); `seen` (job id -> line) catches a duplicate id.
RowStart read_checked_fields(const CsvReader& csv, const NativeColumns& c,
                             std::unordered_map<std::string, long>& seen, JobSpec& job,
                             JobTruth& truth) {
  job.name = std::string(csv.field(c.id));
  if (job.name.empty()) csv.fail(c.id, "a job id");
  if (auto [it, fresh] = seen.emplace(job.name, csv.line()); !fresh)
    throw InputError(csv.where(c.id), "field " + quote_input(csv.header()[c.id]) +
                                          ": duplicate job id " + quote_input(job.name) +
                                          " (first on line " + std::to_string(it->second) + ")");
  const std::string tenant(csv.field(c.tenant));
  if (tenant.empty()) csv.fail(c.tenant, "a tenant name");
  job.submit =
      csv.get_seconds(c.submit, -limits::kMaxAbsTime, limits::kMaxAbsTime, "a submit time");
  truth.work = csv.get_seconds(c.dur, 0, limits::kMaxDuration, "a duration");
  const auto gpus = read_gpu_count(csv, c.gpus, 0);
  if (has(csv, c.milli)) {
    const auto milli = csv.get_int_in(*c.milli, 1, kMilliPerGpu, "a GPU share");
    if (milli < kMilliPerGpu && gpus > 1)
      csv.fail(*c.milli, "1000 for a multi-GPU job (a fractional share needs gpus = 1)");
    job.gpu_milli = static_cast<int>(milli);
  }
  if (has(csv, c.qos)) {
    const auto q = parse_qos(csv.field(*c.qos));
    if (!q) csv.fail(*c.qos, "a QoS class (LS, BE, Burstable or Guaranteed)");
    job.qos = *q;
  }
  if (has(csv, c.gpu_type)) job.gpu_type = read_gpu_type(csv, *c.gpu_type);
  if (has(csv, c.util)) job.gpu_util = csv.get_double_in(*c.util, 0, 100, "a percentage");
  if (has(csv, c.gmem)) job.gpu_memory_mib = read_gpu_memory_mib(csv, *c.gmem);
  return {tenant, gpus};
}

// The rest of a GPU job's row: its user, final state and workload profile (interned in `w`).
void read_job_details(const CsvReader& csv, const NativeColumns& c, Workload& w, JobSpec& job,
                      JobTruth& truth) {
  if (has(csv, c.user)) job.user = w.intern_user(std::string(csv.field(*c.user)));
  if (has(csv, c.state)) truth.state = parse_final_state(csv.field(*c.state));
  if (has(csv, c.model)) {
    // The whole profile, as the venus importer keeps it (the interference model and the
    // predictor key on all four): same jobs, same results whatever the format.
    Profile p;
    p.model = std::string(csv.field(*c.model));
    if (has(csv, c.dataset)) p.dataset = std::string(csv.field(*c.dataset));
    if (has(csv, c.batch)) {
      const auto b = csv.get_int_lenient(*c.batch);
      if (b < 0 || b > 1'000'000) csv.fail(*c.batch, "a batch size >= 0");
      p.batch_size = static_cast<int>(b);
    }
    if (has(csv, c.amp)) {
      const auto a = csv.get_int_lenient(*c.amp);
      if (a != 0 && a != 1) csv.fail(*c.amp, "1 or 0");
      p.amp = a == 1;
    }
    job.profile = w.intern_profile(p);
  }
}

}  // namespace

Workload load_native(const std::string& path, const NativeOptions& options) {
  const auto names = column_names(options);
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const NativeColumns c = find_columns(csv, path, names);

  Workload w;
  w.name = path;
  w.format = "native";
  std::unordered_map<std::string, long> seen;  // job id -> line
  std::unordered_map<std::string, TenantId> tenant_ids;
  std::size_t cpu_only = 0;
  while (csv.next()) {
    JobSpec job;
    JobTruth truth;
    const RowStart row = read_checked_fields(csv, c, seen, job, truth);
    if (row.gpus == 0) {  // after the checks: a skipped row is still a valid row
      ++cpu_only;
      continue;
    }
    job.gpus = static_cast<int>(row.gpus);
    auto [t, fresh_tenant] = tenant_ids.try_emplace(row.tenant);
    if (fresh_tenant) t->second = add_tenant(w, row.tenant);
    job.tenant = t->second;
    read_job_details(csv, c, w, job, truth);
    w.jobs.push_back(std::move(job));
    w.truth.push_back(truth);
  }
  if (cpu_only > 0)
    w.notes.push_back("native: skipped " + std::to_string(cpu_only) + " CPU-only jobs (gpus = 0)");
  w.finalize();
  return w;
}

}  // namespace ds
