#include "report/outputs.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace ds {
namespace fs = std::filesystem;

std::string format_seconds(Time t) {
  if (t == kNever) return "";
  char buf[32];
  if (t % kSecond == 0) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(t / kSecond));
  } else {
    std::snprintf(buf, sizeof buf, "%.3f", to_seconds(t));
  }
  return buf;
}

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::ofstream open_out(const fs::path& p) {
  std::ofstream out(p, std::ios::binary);
  if (!out) throw InputError(SourceLocation{p.string()}, "cannot open for writing");
  return out;
}

// Rounds to 6 significant digits so that the JSON is short and stable to read.
double r6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::strtod(buf, nullptr);
}

void write_summary(const fs::path& p, const Metrics& m, const RunInfo& info,
                   const std::map<std::string, double>& policy_metrics) {
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
  auto out = open_out(p);
  out << j.dump(2) << '\n';
}

void write_jobs(const fs::path& p, const Workload& w, const RunRecord& r) {
  auto out = open_out(p);
  out << "job_id,tenant,user,gpus,gpu_milli,submit_s,start_s,end_s,queue_s,jct_s,preemptions,"
         "lost_work_s,max_slowdown,entitled,status,trace_state,wait_reason\n";
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
    out << j.name << ',' << w.tenants[j.tenant.index()].name << ','
        << (j.user.valid() ? w.users[j.user.index()] : "") << ',' << j.gpus << ',' << j.gpu_milli
        << ',' << format_seconds(j.submit) << ',' << format_seconds(o.first_start) << ','
        << format_seconds(o.end) << ',' << (o.first_start == kNever ? "" : format_seconds(o.queue))
        << ',' << (o.end == kNever ? "" : format_seconds(o.end - j.submit)) << ',' << o.preemptions
        << ',' << format_seconds(o.lost_work) << ',' << num(o.max_slowdown) << ','
        << (o.entitled ? 1 : 0) << ',' << status << ',' << to_string(w.truth[i].state) << ','
        << (o.wait_reason == WaitReason::None ? "" : to_string(o.wait_reason)) << '\n';
  }
}

void write_tenants(const fs::path& p, const Metrics& m) {
  auto out = open_out(p);
  out << "tenant,quota_gpus,jobs,completed,entitled_jobs,avg_queue_s,p99_queue_s,avg_jct_s,"
         "qos_compliance,received_gpu_hours,entitled_gpu_hours,share_ratio,preemptions,avg_"
         "assurance,"
         "min_assurance\n";
  for (const auto& t : m.tenants)
    out << t.name << ',' << t.quota_gpus << ',' << t.jobs << ',' << t.completed << ',' << t.entitled
        << ',' << num(t.avg_queue_s) << ',' << num(t.p99_queue_s) << ',' << num(t.avg_jct_s) << ','
        << num(t.qos_compliance) << ',' << num(t.received_gpu_hours) << ','
        << num(t.entitled_gpu_hours) << ',' << num(t.share_ratio) << ',' << t.preemptions << ','
        << (t.avg_assurance >= 0 ? num(t.avg_assurance) : "") << ','
        << (t.min_assurance >= 0 ? num(t.min_assurance) : "") << '\n';
}

void write_timeseries(const fs::path& p, const Workload& w, const RunRecord& r) {
  auto out = open_out(p);
  out << "time_s,scope,gpus,busy_gpus,allocated_gpus,occupancy,sm_util,running_jobs,"
         "pending_jobs,pending_gpus,borrowed_gpus,lent_gpus,reserve_gpus,assurance,preemptions,"
         "lost_gpu_hours\n";
  const int total = w.cluster.total_gpus();
  const std::size_t nt = w.tenants.size();
  for (std::size_t i = 0; i < r.samples.size(); ++i) {
    const auto& s = r.samples[i];
    const std::string t = format_seconds(s.t);
    out << t << ",cluster," << total << ',' << s.busy_gpus << ',' << s.allocated_gpus << ','
        << num(total ? static_cast<double>(s.busy_gpus) / total : 0) << ','
        << num(total ? s.sm_sum / (100.0 * total) : 0) << ',' << s.running_jobs << ','
        << s.pending_jobs << ',' << s.pending_gpus << ",,,,," << s.preemptions << ','
        << num(s.lost_gpu_hours) << '\n';
    for (std::size_t k = 0; k < nt; ++k) {
      const auto& ts = r.tenant_samples[i * nt + k];
      const int quota = w.tenants[k].quota_gpus;
      out << t << ',' << w.tenants[k].name << ',' << quota << ',' << ts.held_gpus << ','
          << ts.held_gpus << ',' << num(quota ? static_cast<double>(ts.held_gpus) / quota : 0)
          << ",," << ts.running_jobs << ',' << ts.pending_jobs << ',' << ts.pending_gpus << ','
          << ts.borrowed_gpus << ',' << ts.lent_gpus << ',' << ts.reserve_gpus << ','
          << (ts.assurance >= 0 ? num(ts.assurance) : "") << ",,\n";
    }
  }
}

}  // namespace

void write_outputs(const std::string& dir, const Workload& w, const RunRecord& r, const Metrics& m,
                   const RunInfo& info) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(SourceLocation{dir}, "cannot create output folder: " + ec.message());
  const fs::path d(dir);
  write_summary(d / "summary.json", m, info, r.policy_summary);
  write_jobs(d / "jobs.csv", w, r);
  write_tenants(d / "tenants.csv", m);
  write_timeseries(d / "timeseries.csv", w, r);
}

}  // namespace ds
