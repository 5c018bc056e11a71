#include "report/outputs.hpp"

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>

#include "core/atomic_file.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/manifest.hpp"

namespace ds {
namespace fs = std::filesystem;

std::string format_seconds(Time t) {
  if (t == kNever) return "";
  char buf[48];
  char* const end = buf + sizeof buf;
  char* p = buf;
  // Whole seconds as an integer, else "%.3f" of to_seconds(t): written from the integer
  // milliseconds (the same text while the double holds them exactly, far beyond any trace's
  // times), as snprintf took a tenth of a 1M-job run (issue #27).
  constexpr Time kExact = Time{1} << 50;
  if (t % kSecond == 0) {
    p = std::to_chars(p, end, t / kSecond).ptr;
  } else if (t > -kExact && t < kExact) {
    if (t < 0) *p++ = '-';
    const Time a = t < 0 ? -t : t;
    p = std::to_chars(p, end, a / kSecond).ptr;
    const auto ms = static_cast<int>(a % kSecond);
    *p++ = '.';
    *p++ = static_cast<char>('0' + ms / 100);
    *p++ = static_cast<char>('0' + ms / 10 % 10);
    *p++ = static_cast<char>('0' + ms % 10);
  } else {
    p = std::to_chars(p, end, to_seconds(t), std::chars_format::fixed, 3).ptr;
  }
  return std::string(buf, p);
}

namespace {

// "%.6g" (std::to_chars with a precision is specified as printf's conversion).
std::string num(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
  return std::string(buf, r.ptr);
}

// One CSV record from already formatted fields (RFC 4180 quoting where needed).
class Row {
 public:
  Row& operator<<(std::string_view field) {
    if (!first_) line_ += ',';
    first_ = false;
    append_csv_field(line_, field);
    return *this;
  }
  Row& operator<<(const std::string& field) { return *this << std::string_view(field); }
  Row& operator<<(const char* field) { return *this << std::string_view(field); }
  template <class N>
  requires std::is_arithmetic_v<N> Row& operator<<(N n) { return *this << std::to_string(n); }
  void end(AtomicFile& out) {
    line_ += '\n';
    out.write(line_);
    line_.clear();
    first_ = true;
  }

 private:
  std::string line_;
  bool first_ = true;
};

// Rounds to 6 significant digits so that the JSON is short and stable to read.
double r6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::strtod(buf, nullptr);
}

void write_summary(AtomicFile& out, const Metrics& m, const RunInfo& info, const RunRecord& r) {
  const std::map<std::string, double>& policy_metrics = r.policy_summary;
  nlohmann::ordered_json j;
  j["policy"] = info.policy;
  j["trace"] = info.trace;
  j["format"] = info.format;
  j["load_factor"] = info.load_factor;
  j["seed"] = info.seed;
  j["options"] = info.options;
  j["jobs"] = m.jobs;
  j["jobs_started"] = m.jobs_started;
  j["jobs_completed"] = m.jobs_completed;
  j["jobs_rejected"] = m.jobs_rejected;
  j["jobs_never_started"] = m.jobs_never_started;
  j["avg_queue_s"] = r6(m.avg_queue_s);
  j["p50_queue_s"] = r6(m.p50_queue_s);
  j["p99_queue_s"] = r6(m.p99_queue_s);
  j["p999_queue_s"] = r6(m.p999_queue_s);
  j["avg_jct_s"] = r6(m.avg_jct_s);
  j["p99_jct_s"] = r6(m.p99_jct_s);
  j["gpu_occupancy_submit_window"] = r6(m.gpu_occupancy_submit_window);
  j["gpu_occupancy_full"] = r6(m.gpu_occupancy_full);
  j["gpu_occupancy_lucid"] = r6(m.gpu_occupancy_lucid);
  j["sm_utilization"] = r6(m.sm_utilization);
  j["sm_utilization_submit_window"] = r6(m.sm_utilization_submit_window);
  j["entitled_jobs"] = m.entitled_jobs;
  j["qos_compliance"] = r6(m.qos_compliance);
  j["preemptions"] = m.preemptions;
  j["lost_gpu_hours"] = r6(m.lost_gpu_hours);
  j["restart_overhead_gpu_hours"] = r6(m.restart_overhead_gpu_hours);
  j["delivered_gpu_hours"] = r6(m.delivered_gpu_hours);
  j["jain_fairness"] = r6(m.jain_fairness);
  j["worst_tenant"] = m.worst_tenant;
  j["worst_tenant_share"] = r6(m.worst_tenant_share);
  j["first_submit_s"] = m.first_submit_s;
  j["last_submit_s"] = m.last_submit_s;
  j["last_end_s"] = m.last_end_s;
  // timeseries.csv's sample interval: 600 s, doubled while the span is long (sim/sample_bound.hpp).
  j["timeseries_interval_s"] =
      r.samples.size() >= 2 ? to_seconds(r.samples[1].t - r.samples[0].t) : 0.0;
  j["oracle"] = info.oracle;
  j["truth"] = info.truth;
  auto& by_reason = j["queue_s_by_reason"] = nlohmann::ordered_json::object();
  for (int k = 0; k < kWaitReasons; ++k)
    if (m.queue_s_by_reason[static_cast<std::size_t>(k)] > 0)
      by_reason[to_string(static_cast<WaitReason>(k))] =
          r6(m.queue_s_by_reason[static_cast<std::size_t>(k)]);
  auto& pm = j["policy_metrics"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : policy_metrics) pm[k] = r6(v);
  j["version"] = info.version;
  j["wall_seconds"] = r6(info.wall_seconds);
  auto& tenants = j["tenants"] = nlohmann::ordered_json::array();
  for (const auto& t : m.tenants) {
    nlohmann::ordered_json e;
    e["name"] = t.name;
    e["quota_gpus"] = t.quota_gpus;
    e["jobs"] = t.jobs;
    e["avg_queue_s"] = r6(t.avg_queue_s);
    e["avg_jct_s"] = r6(t.avg_jct_s);
    e["entitled_jobs"] = t.entitled;
    e["qos_compliance"] = r6(t.qos_compliance);
    e["share_ratio"] = r6(t.share_ratio);
    tenants.push_back(e);
  }
  out.write(j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  out.write("\n");
}

void write_jobs(AtomicFile& out, const Workload& w, const RunRecord& r) {
  out.write(
      "job_id,tenant,user,gpus,gpu_milli,submit_s,start_s,end_s,queue_s,jct_s,preemptions,"
      "lost_work_s,max_slowdown,entitled,status,trace_state,wait_reason,reason\n");
  Row row;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobSpec& j = w.jobs[i];
    const JobOutcome& o = r.jobs[i];
    const char* status = "pending";
    switch (o.status) {
      case JobStatus::Done:
        status = "completed";
        break;
      case JobStatus::Rejected:
        status = "rejected";
        break;
      case JobStatus::Running:
        status = "running";
        break;
      default:
        status = o.first_start == kNever ? "never_started" : "pending";
        break;
    }
    row << j.name << w.tenants[j.tenant.index()].name
        << (j.user.valid() ? w.users[j.user.index()] : std::string()) << j.gpus << j.gpu_milli
        << format_seconds(j.submit) << format_seconds(o.first_start) << format_seconds(o.end)
        << (o.first_start == kNever ? "" : format_seconds(o.queue))
        << (o.end == kNever ? "" : format_seconds(o.end - j.submit)) << o.preemptions
        << format_seconds(o.lost_work) << num(o.max_slowdown) << (o.entitled ? 1 : 0) << status
        << to_string(w.truth[i].state)
        << (o.wait_reason == WaitReason::None ? "" : to_string(o.wait_reason))
        << (o.status == JobStatus::Rejected ? o.reject_reason : std::string());
    row.end(out);
  }
}

void write_tenants(AtomicFile& out, const Metrics& m) {
  out.write(
      "tenant,quota_gpus,jobs,completed,entitled_jobs,avg_queue_s,p99_queue_s,avg_jct_s,"
      "qos_compliance,received_gpu_hours,entitled_gpu_hours,share_ratio,preemptions,"
      "avg_assurance,min_assurance\n");
  Row row;
  for (const auto& t : m.tenants) {
    row << t.name << t.quota_gpus << t.jobs << t.completed << t.entitled << num(t.avg_queue_s)
        << num(t.p99_queue_s) << num(t.avg_jct_s) << num(t.qos_compliance)
        << num(t.received_gpu_hours) << num(t.entitled_gpu_hours) << num(t.share_ratio)
        << t.preemptions << (t.avg_assurance >= 0 ? num(t.avg_assurance) : "")
        << (t.min_assurance >= 0 ? num(t.min_assurance) : "");
    row.end(out);
  }
}

void write_timeseries(AtomicFile& out, const Workload& w, const RunRecord& r) {
  out.write(
      "time_s,scope,gpus,busy_gpus,allocated_gpus,occupancy,sm_util,running_jobs,"
      "pending_jobs,pending_gpus,borrowed_gpus,lent_gpus,reserve_gpus,assurance,preemptions,"
      "lost_gpu_hours\n");
  const int total = w.cluster.total_gpus();
  const std::size_t nt = w.tenants.size();
  Row row;
  for (std::size_t i = 0; i < r.samples.size(); ++i) {
    const auto& s = r.samples[i];
    const std::string t = format_seconds(s.t);
    row << t << "cluster" << total << s.busy_gpus << s.allocated_gpus
        << num(total ? static_cast<double>(s.busy_gpus) / total : 0)
        << num(total ? s.sm_sum / (100.0 * total) : 0) << s.running_jobs << s.pending_jobs
        << s.pending_gpus << ""
        << ""
        << ""
        << "" << s.preemptions << num(s.lost_gpu_hours);
    row.end(out);
    for (std::size_t k = 0; k < nt; ++k) {
      const auto& ts = r.tenant_samples[i * nt + k];
      const int quota = w.tenants[k].quota_gpus;
      row << t << w.tenants[k].name << quota << ts.held_gpus << ts.held_gpus
          << num(quota ? static_cast<double>(ts.held_gpus) / quota : 0) << "" << ts.running_jobs
          << ts.pending_jobs << ts.pending_gpus << ts.borrowed_gpus << ts.lent_gpus
          << ts.reserve_gpus << (ts.assurance >= 0 ? num(ts.assurance) : "") << ""
          << "";
      row.end(out);
    }
  }
}

}  // namespace

nlohmann::json run_identity(const Workload& w, const RunInfo& info) {
  return {{"command", info.command},
          {"policy", info.policy},
          {"trace", info.trace},
          {"format", info.format},
          {"load_factor", info.load_factor},
          {"seed", info.seed},
          {"workload_digest", info.workload_digest.empty() ? w.digest() : info.workload_digest},
          {"jobs", w.jobs.size()},
          {"tenants", w.tenants.size()},
          {"gpus", w.cluster.total_gpus()}};
}

void write_outputs(const std::string& dir, const Workload& w, const RunRecord& r, const Metrics& m,
                   const RunInfo& info) {
  if (dir.empty()) throw InputError("the output folder name is empty");
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) throw InputError(SourceLocation{dir}, "cannot create output folder: " + ec.message());
  const fs::path d(dir);
  try {
    // All four files are written in full before any replaces an older one; summary.json,
    // which marks a folder as a run (report), comes last.
    AtomicFileSet files;
    write_jobs(files.add((d / "jobs.csv").string()), w, r);
    write_tenants(files.add((d / "tenants.csv").string()), m);
    write_timeseries(files.add((d / "timeseries.csv").string()), w, r);
    write_summary(files.add((d / "summary.json").string()), m, info, r);
    for (const auto& [name, text] : info.extra_files) files.add((d / name).string()).write(text);
    Manifest manifest;
    manifest.kind = info.kind;
    manifest.command = info.command;
    manifest.version = info.version;
    manifest.identity = run_identity(w, info);
    manifest.identity.update(info.extra_identity);
    for (const AtomicFile& f : files.finish_all()) manifest.add(f);
    files.add((d / kManifestName).string()).write(manifest.json());
    files.commit();
  } catch (...) {
    if (!existed) fs::remove(d, ec);  // a folder this call created, and left empty
    throw;
  }
}

}  // namespace ds
