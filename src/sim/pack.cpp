#include "sim/pack.hpp"

#include <algorithm>

#include "sim/fragmentation.hpp"
#include "sim/simulator.hpp"

namespace ds {
namespace {

class Recording final : public Policy {
 public:
  Recording(std::unique_ptr<Policy> inner, const Workload& w, PackResult& out, Time interval)
      : inner_(std::move(inner)), w_(w), out_(out), tasks_(task_distribution(w.jobs)) {
    out_.curve.reserve(256);
    step_ = std::max<std::size_t>(1, w.jobs.size() / 200);
    horizon_ = w.jobs.empty() ? 0 : w.jobs.back().submit + interval;
  }

  Decisions decide(const ClusterSnapshot& s) override {
    if (!s.arrived.empty()) record(s, s.arrived.front().index());
    Decisions d = inner_->decide(s);
    // Periodic policies (Tiresias' 60 s rounds) would tick for the tasks' 100-year runs:
    // once the last task's interval is over, nothing is left to measure.
    if (d.wake_at > horizon_) d.wake_at = kNever;
    return d;
  }

  void telemetry(std::span<TenantTelemetry> t) const override { inner_->telemetry(t); }
  void summarize(std::map<std::string, double>& out) const override { inner_->summarize(out); }

  void record(const ClusterSnapshot& s, std::size_t arrived) {
    if (arrived % step_ != 0 && arrived + 1 != w_.jobs.size()) return;
    PackPoint p;
    p.arrived = arrived;
    p.requested_gpus = requested_until(arrived);
    double free = 0;
    for (auto f : s.gpu_free_milli) free += f;
    p.allocated_gpus = out_.capacity_gpus - free / kMilliPerGpu;
    p.fragmented_gpus = fragmented_gpus(*s.cluster, s.gpu_free_milli, tasks_);
    out_.curve.push_back(p);
  }

 private:
  double requested_until(std::size_t n) {
    while (counted_ < n) {
      const auto& j = w_.jobs[counted_++];
      requested_ += j.gpus * static_cast<double>(j.gpu_milli) / kMilliPerGpu;
    }
    return requested_;
  }

  std::unique_ptr<Policy> inner_;
  const Workload& w_;
  PackResult& out_;
  std::vector<TaskClass> tasks_;
  std::size_t step_ = 1;
  Time horizon_ = 0;
  std::size_t counted_ = 0;
  double requested_ = 0;
};

}  // namespace

PackResult run_packing(const Workload& workload, const PackPolicyFactory& make, Time interval) {
  Workload w = workload;
  constexpr Time kForever = 100LL * 365 * kDay;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    w.jobs[i].submit = static_cast<Time>(i) * interval;
    w.truth[i].work = kForever;
  }
  PackResult out;
  out.capacity_gpus = w.cluster.total_gpus();
  Recording policy(make(w), w, out, interval);
  SimConfig cfg;
  cfg.sample_interval = kForever;  // no timeseries needed
  const RunRecord r = simulate(w, policy, cfg);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobSpec& j = w.jobs[i];
    const double gpus = j.gpus * static_cast<double>(j.gpu_milli) / kMilliPerGpu;
    // Admitted: placed before the next task arrived, and never evicted afterwards.
    const bool admitted = r.jobs[i].first_start != kNever &&
                          r.jobs[i].first_start - j.submit < interval && r.jobs[i].preemptions == 0;
    for (const std::string& key : {std::string(to_string(j.qos)), std::string("all")}) {
      auto& c = out.by_qos[key.empty() ? "unspecified" : key];
      ++c.tasks;
      c.requested_gpus += gpus;
      if (admitted) {
        ++c.admitted;
        c.admitted_gpus += gpus;
      }
    }
  }
  return out;
}

}  // namespace ds
