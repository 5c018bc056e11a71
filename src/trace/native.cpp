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

}  // namespace

Workload load_native(const std::string& path, const NativeOptions& options) {
  const auto names = column_names(options);
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
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
  const std::size_t c_id = *col["job_id"], c_tenant = *col["tenant"], c_submit = *col["submit_s"],
                    c_dur = *col["duration_s"], c_gpus = *col["gpus"];
  const auto c_user = col["user"], c_state = col["state"], c_model = col["model"],
             c_util = col["gpu_util"], c_gmem = col["gmem_mib"], c_milli = col["gpu_milli"],
             c_qos = col["qos"], c_dataset = col["dataset"], c_batch = col["batch_size"],
             c_amp = col["amp"];
  auto has = [&](const std::optional<std::size_t>& c) { return c && !csv.empty_field(*c); };

  Workload w;
  w.name = path;
  w.format = "native";
  std::unordered_map<std::string, long> seen;  // job id -> line
  std::unordered_map<std::string, TenantId> tenant_ids;
  std::size_t cpu_only = 0;
  while (csv.next()) {
    JobSpec job;
    JobTruth truth;
    job.name = std::string(csv.field(c_id));
    if (job.name.empty()) csv.fail(c_id, "a job id");
    if (auto [it, fresh] = seen.emplace(job.name, csv.line()); !fresh)
      throw InputError(csv.where(c_id), "field " + quote_input(csv.header()[c_id]) +
                                            ": duplicate job id " + quote_input(job.name) +
                                            " (first on line " + std::to_string(it->second) + ")");
    const std::string tenant(csv.field(c_tenant));
    if (tenant.empty()) csv.fail(c_tenant, "a tenant name");
    job.submit =
        csv.get_seconds(c_submit, -limits::kMaxAbsTime, limits::kMaxAbsTime, "a submit time");
    truth.work = csv.get_seconds(c_dur, 0, limits::kMaxDuration, "a duration");
    const auto gpus = read_gpu_count(csv, c_gpus, 0);
    if (has(c_milli)) {
      const auto milli = csv.get_int_in(*c_milli, 1, kMilliPerGpu, "a GPU share");
      if (milli < kMilliPerGpu && gpus > 1)
        csv.fail(*c_milli, "1000 for a multi-GPU job (a fractional share needs gpus = 1)");
      job.gpu_milli = static_cast<int>(milli);
    }
    if (has(c_qos)) {
      const auto q = parse_qos(csv.field(*c_qos));
      if (!q) csv.fail(*c_qos, "a QoS class (LS, BE, Burstable or Guaranteed)");
      job.qos = *q;
    }
    if (has(c_util)) job.gpu_util = csv.get_double_in(*c_util, 0, 100, "a percentage");
    if (has(c_gmem)) job.gpu_memory_mib = read_gpu_memory_mib(csv, *c_gmem);
    if (gpus == 0) {  // after the checks: a skipped row is still a valid row
      ++cpu_only;
      continue;
    }
    job.gpus = static_cast<int>(gpus);
    auto [t, fresh_tenant] = tenant_ids.try_emplace(tenant);
    if (fresh_tenant) t->second = add_tenant(w, tenant);
    job.tenant = t->second;
    if (has(c_user)) job.user = w.intern_user(std::string(csv.field(*c_user)));
    if (has(c_state)) truth.state = parse_final_state(csv.field(*c_state));
    if (has(c_model)) {
      // The whole profile, as the venus importer keeps it (the interference model and the
      // predictor key on all four): same jobs, same results whatever the format.
      Profile p;
      p.model = std::string(csv.field(*c_model));
      if (has(c_dataset)) p.dataset = std::string(csv.field(*c_dataset));
      if (has(c_batch)) {
        const auto b = csv.get_int_lenient(*c_batch);
        if (b < 0 || b > 1'000'000) csv.fail(*c_batch, "a batch size >= 0");
        p.batch_size = static_cast<int>(b);
      }
      if (has(c_amp)) {
        const auto a = csv.get_int_lenient(*c_amp);
        if (a != 0 && a != 1) csv.fail(*c_amp, "1 or 0");
        p.amp = a == 1;
      }
      job.profile = w.intern_profile(p);
    }
    w.jobs.push_back(std::move(job));
    w.truth.push_back(truth);
  }
  if (cpu_only > 0)
    w.notes.push_back("native: skipped " + std::to_string(cpu_only) + " CPU-only jobs (gpus = 0)");
  w.finalize();
  return w;
}

}  // namespace ds
