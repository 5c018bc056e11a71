#include "report/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ds {

double quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

namespace {

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Integral of a step series field over [a, b) (the value at step i holds until step i+1).
template <class F>
double integrate(const std::vector<StepPoint>& steps, Time a, Time b, F value) {
  if (b <= a) return 0;
  double sum = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Time s = std::max(a, steps[i].t);
    const Time e = std::min(b, i + 1 < steps.size() ? steps[i + 1].t : b);
    if (e > s) sum += value(steps[i]) * static_cast<double>(e - s);
  }
  return sum;
}

double lucid_occupancy(const Workload& w, const RunRecord& r, int total_gpus) {
  // Cut: the earliest "last job end" over tenants that have jobs.
  std::vector<Time> tenant_end(w.tenants.size(), -1);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const auto& o = r.jobs[i];
    const Time end = o.end != kNever ? o.end : r.end;
    auto& e = tenant_end[w.jobs[i].tenant.index()];
    e = std::max(e, end);
  }
  Time cut = kNever;
  for (Time e : tenant_end)
    if (e >= 0) cut = std::min(cut, e);
  if (cut == kNever || total_gpus == 0 || r.steps.empty()) return 0;
  const Time start = r.origin - ((r.origin % kMinute) + kMinute) % kMinute;
  if (cut < start) return 0;
  // Samples at start + k minutes, k = 0 .. (cut - start) / 1 min. Each step holds its value
  // from its time to the next step's, so it covers a whole run of samples, counted at once
  // (a loop over the minutes would take as long as the simulated span).
  const std::int64_t total = (cut - start) / kMinute + 1;
  auto samples_before = [&](Time t) {  // samples at times < t
    if (t <= start) return std::int64_t{0};
    if (t > cut) return total;
    return (t - start - 1) / kMinute + 1;
  };
  double sum = 0;
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const Time from = r.steps[i].t;
    const Time to = i + 1 < r.steps.size() ? r.steps[i + 1].t : kNever;
    const std::int64_t n = samples_before(to) - samples_before(from);
    sum += static_cast<double>(n) * r.steps[i].busy_gpus;
  }
  return sum / (static_cast<double>(total) * total_gpus);
}

// What the pass over the jobs collects besides the counts it adds to Metrics directly.
struct JobTally {
  std::vector<double> queues, jcts;                 // seconds, of started / ended jobs
  std::vector<std::vector<double>> t_queue, t_jct;  // the same, by tenant
  std::size_t compliant = 0;                        // entitled jobs within their SLO
  std::vector<std::size_t> t_compliant;             // the same, by tenant
  Time last_submit = 0, last_end = 0;
};

// The pass over the jobs: counts into `m` (overall and m.tenants[t]), the rest returned.
JobTally tally_jobs(const Workload& w, const RunRecord& r, Metrics& m) {
  JobTally tally;
  tally.t_queue.resize(w.tenants.size());
  tally.t_jct.resize(w.tenants.size());
  tally.t_compliant.assign(w.tenants.size(), 0);
  tally.last_end = r.origin;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobSpec& j = w.jobs[i];
    const JobOutcome& o = r.jobs[i];
    const Tenant& tenant = w.tenants[j.tenant.index()];
    auto& tm = m.tenants[j.tenant.index()];
    ++tm.jobs;
    tally.last_submit = std::max(tally.last_submit, j.submit);
    if (o.status == JobStatus::Rejected) ++m.jobs_rejected;
    if (o.first_start != kNever) {
      ++m.jobs_started;
      tally.queues.push_back(to_seconds(o.queue));
      tally.t_queue[j.tenant.index()].push_back(to_seconds(o.queue));
    } else if (o.status != JobStatus::Rejected) {
      ++m.jobs_never_started;
    }
    if (o.end != kNever) {
      ++m.jobs_completed;
      ++tm.completed;
      tally.jcts.push_back(to_seconds(o.end - j.submit));
      tally.t_jct[j.tenant.index()].push_back(to_seconds(o.end - j.submit));
      tally.last_end = std::max(tally.last_end, o.end);
    }
    m.preemptions += o.preemptions;
    tm.preemptions += o.preemptions;
    m.lost_gpu_hours += to_seconds(o.lost_work) * j.gpus / 3600.0;
    m.restart_overhead_gpu_hours += to_seconds(o.overhead) * j.gpus / 3600.0;
    if (o.entitled) {
      ++m.entitled_jobs;
      ++tm.entitled;
      const bool ok = o.first_start != kNever && o.first_start - j.submit <= tenant.slo_queue &&
                      o.max_slowdown <= tenant.max_slowdown + 1e-9;
      if (ok) {
        ++tally.compliant;
        ++tally.t_compliant[j.tenant.index()];
      }
    }
  }
  return tally;
}

// Queue and JCT statistics (sorts tally.queues and tally.jcts) and the submit/end times.
void add_job_statistics(JobTally& tally, const RunRecord& r, Metrics& m) {
  m.avg_queue_s = mean(tally.queues);
  m.p50_queue_s = quantile(tally.queues, 0.5);
  m.p99_queue_s = quantile(tally.queues, 0.99);
  m.p999_queue_s = quantile(tally.queues, 0.999);
  m.avg_jct_s = mean(tally.jcts);
  m.p99_jct_s = quantile(tally.jcts, 0.99);
  m.qos_compliance = m.entitled_jobs ? static_cast<double>(tally.compliant) / m.entitled_jobs : 1.0;
  m.first_submit_s = to_seconds(r.origin);
  m.last_submit_s = to_seconds(tally.last_submit);
  m.last_end_s = to_seconds(tally.last_end);
}

// Occupancy, SM utilization and delivered GPU hours from the step series.
void add_utilization(const Workload& w, const RunRecord& r, Time last_submit, Time last_end,
                     Metrics& m) {
  const int total_gpus = w.cluster.total_gpus();
  if (total_gpus > 0) {
    auto busy = [](const StepPoint& p) { return static_cast<double>(p.busy_gpus); };
    auto sm = [](const StepPoint& p) { return p.sm_sum; };
    auto alloc = [](const StepPoint& p) { return static_cast<double>(p.allocated_gpus); };
    const double g = total_gpus;
    if (last_submit > r.origin) {
      const double window = g * static_cast<double>(last_submit - r.origin);
      m.gpu_occupancy_submit_window = integrate(r.steps, r.origin, last_submit, busy) / window;
      m.sm_utilization_submit_window =
          integrate(r.steps, r.origin, last_submit, sm) / (100.0 * window);
    }
    if (last_end > r.origin) {
      const double span = static_cast<double>(last_end - r.origin);
      m.gpu_occupancy_full = integrate(r.steps, r.origin, last_end, busy) / (g * span);
      m.sm_utilization = integrate(r.steps, r.origin, last_end, sm) / (100.0 * g * span);
    }
    m.delivered_gpu_hours = integrate(r.steps, r.origin, r.end + 1, alloc) / 3.6e6;
    m.gpu_occupancy_lucid = lucid_occupancy(w, r, total_gpus);
  }
}

// Per-tenant statistics (sorts tally.t_queue), share ratios, the worst tenant and Jain's
// fairness over the tenants with an entitlement.
void add_tenant_statistics(const Workload& w, const RunRecord& r, JobTally& tally, Metrics& m) {
  double sum = 0, sum_sq = 0;
  std::size_t counted = 0;
  m.worst_tenant_share = 0;
  for (std::size_t t = 0; t < w.tenants.size(); ++t) {
    auto& tm = m.tenants[t];
    tm.name = w.tenants[t].name;
    tm.quota_gpus = w.tenants[t].quota_gpus;
    tm.avg_queue_s = mean(tally.t_queue[t]);
    tm.p99_queue_s = quantile(tally.t_queue[t], 0.99);
    tm.avg_jct_s = mean(tally.t_jct[t]);
    tm.qos_compliance = tm.entitled ? static_cast<double>(tally.t_compliant[t]) / tm.entitled : 1.0;
    tm.received_gpu_hours = r.tenants[t].received_gpu_ms / 3.6e6;
    tm.entitled_gpu_hours = r.tenants[t].entitled_gpu_ms / 3.6e6;
    if (r.tenants[t].entitled_gpu_ms > 0) {
      tm.share_ratio = r.tenants[t].received_gpu_ms / r.tenants[t].entitled_gpu_ms;
      sum += tm.share_ratio;
      sum_sq += tm.share_ratio * tm.share_ratio;
      if (counted == 0 || tm.share_ratio < m.worst_tenant_share) {
        m.worst_tenant_share = tm.share_ratio;
        m.worst_tenant = tm.name;
      }
      ++counted;
    }
  }
  m.jain_fairness =
      counted && sum_sq > 0 ? sum * sum / (static_cast<double>(counted) * sum_sq) : 1.0;
}

// Assurance, as sampled in timeseries.csv (policies without the signal report -1).
void add_assurance(const Workload& w, const RunRecord& r, Metrics& m) {
  const std::size_t nt = w.tenants.size();
  for (std::size_t t = 0; t < nt; ++t) {
    double total = 0, lowest = 2;
    std::size_t n = 0;
    for (std::size_t i = t; i < r.tenant_samples.size(); i += nt) {
      const double a = r.tenant_samples[i].assurance;
      if (a < 0) continue;
      total += a;
      lowest = std::min(lowest, a);
      ++n;
    }
    if (n) {
      m.tenants[t].avg_assurance = total / static_cast<double>(n);
      m.tenants[t].min_assurance = lowest;
    }
  }
}

}  // namespace

Metrics compute_metrics(const Workload& w, const RunRecord& r) {
  Metrics m;
  m.jobs = w.jobs.size();
  for (std::size_t k = 0; k < m.queue_s_by_reason.size(); ++k)
    m.queue_s_by_reason[k] = r.wait_ms_by_reason[k] / kSecond;
  m.tenants.resize(w.tenants.size());
  JobTally tally = tally_jobs(w, r, m);
  add_job_statistics(tally, r, m);
  add_utilization(w, r, tally.last_submit, tally.last_end, m);
  add_tenant_statistics(w, r, tally, m);
  add_assurance(w, r, m);
  return m;
}

}  // namespace ds
