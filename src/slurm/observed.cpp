#include "slurm/observed.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

#include "model/execution.hpp"

namespace ds::slurm {
namespace {

struct Ev {
  Time t;
  int order;  // ends (0) before submits (1) before starts (2) at equal times
  std::size_t job;
  std::size_t run;
};

}  // namespace

RunRecord result_from_observation(const Workload& w, const std::vector<ObservedJob>& obs) {
  RunRecord r;
  const std::size_t n = w.jobs.size();
  r.jobs.resize(n);
  r.tenants.resize(w.tenants.size());
  r.origin = n ? obs[0].submit : 0;
  Time last = r.origin;
  std::vector<Ev> evs;
  for (std::size_t i = 0; i < n; ++i) {
    const ObservedJob& o = obs[i];
    r.origin = std::min(r.origin, o.submit);
    JobOutcome& out = r.jobs[i];
    evs.push_back({o.submit, 1, i, 0});
    Time waited_from = o.submit;
    for (std::size_t k = 0; k < o.runs.size(); ++k) {
      const ObservedRun& run = o.runs[k];
      out.queue += std::max<Time>(0, run.start - waited_from);
      if (out.first_start == kNever) out.first_start = run.start;
      evs.push_back({run.start, 2, i, k});
      if (run.end != kNever) {
        evs.push_back({run.end, 0, i, k});
        last = std::max(last, run.end);
        waited_from = run.end;
      }
      if (run.preempted) {
        ++out.preemptions;
        const JobSpec& j = w.jobs[i];
        const Time interval = w.tenants[j.tenant.index()].checkpoint_interval;
        const Time done = run.end - run.start;
        const Time kept = interval > 0 ? done / interval * interval : done;
        out.lost_work += done - kept;
        out.overhead += restart_overhead(j.gpus);
      }
    }
    if (o.completed && !o.runs.empty() && o.runs.back().end != kNever) out.end = o.runs.back().end;
    out.status = o.completed                                     ? JobStatus::Done
                 : o.runs.empty() || o.runs.back().end != kNever ? JobStatus::Pending
                                                                 : JobStatus::Running;
  }
  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    return a.t != b.t ? a.t < b.t : a.order != b.order ? a.order < b.order : a.job < b.job;
  });
  // Sweep: GPU occupancy, tenant shares and entitlement at submit (as the simulator).
  std::vector<int> gpu_jobs(static_cast<std::size_t>(w.cluster.total_gpus()), 0);
  std::vector<double> gpu_util(gpu_jobs.size(), 0);
  struct T {
    int held = 0, demand = 0, guaranteed = 0, queued_entitled = 0;
    Time last = 0;
  };
  std::vector<T> ts(w.tenants.size());
  for (auto& t : ts) t.last = r.origin;
  std::vector<bool> waiting_entitled(n, false);
  int busy = 0, allocated = 0;
  double sm = 0;
  auto touch = [&](std::size_t t, Time now) {
    const double dt = static_cast<double>(now - ts[t].last);
    if (dt > 0) {
      r.tenants[t].received_gpu_ms += dt * ts[t].held;
      r.tenants[t].entitled_gpu_ms += dt * std::min(w.tenants[t].quota_gpus, ts[t].demand);
      ts[t].last = now;
    }
  };
  auto gpus_of = [&](const Placement& p, auto&& f) {
    for (const auto& a : p) {
      const Node& node = w.cluster.nodes[a.node.index()];
      for (std::uint64_t m = a.gpu_mask; m; m &= m - 1)
        f(static_cast<std::size_t>(node.first_gpu + std::countr_zero(m)));
    }
  };
  for (const Ev& e : evs) {
    const JobSpec& j = w.jobs[e.job];
    const std::size_t t = j.tenant.index();
    touch(t, e.t);
    const double util = j.gpu_util >= 0 ? j.gpu_util : 100.0;
    if (e.order == 1) {  // submit
      r.jobs[e.job].entitled =
          ts[t].guaranteed + ts[t].queued_entitled + j.gpus <= w.tenants[t].quota_gpus;
      ts[t].demand += j.gpus;
      if (r.jobs[e.job].entitled) {
        ts[t].queued_entitled += j.gpus;
        waiting_entitled[e.job] = true;
      }
      continue;
    }
    const ObservedRun& run = obs[e.job].runs[e.run];
    const int sign = e.order == 2 ? 1 : -1;
    if (sign > 0 && waiting_entitled[e.job]) {
      ts[t].queued_entitled -= j.gpus;
      waiting_entitled[e.job] = false;
    }
    if (sign < 0 && run.preempted && r.jobs[e.job].entitled) {
      ts[t].queued_entitled += j.gpus;
      waiting_entitled[e.job] = true;
    }
    ts[t].held += sign * j.gpus;
    if (!run.borrowed) ts[t].guaranteed += sign * j.gpus;
    if (sign < 0 && !run.preempted) ts[t].demand -= j.gpus;
    allocated += sign * j.gpus;
    gpus_of(run.placement, [&](std::size_t g) {
      if (g >= gpu_jobs.size()) return;
      const double before = std::min(100.0, gpu_util[g]);
      if (sign > 0 && gpu_jobs[g]++ == 0) ++busy;
      if (sign < 0 && --gpu_jobs[g] == 0) --busy;
      gpu_util[g] = std::max(0.0, gpu_util[g] + sign * util);
      sm += std::min(100.0, gpu_util[g]) - before;
    });
    if (!r.steps.empty() && r.steps.back().t == e.t)
      r.steps.back() = {e.t, busy, allocated, sm};
    else
      r.steps.push_back({e.t, busy, allocated, sm});
  }
  for (std::size_t t = 0; t < ts.size(); ++t) touch(t, last);
  r.end = last;
  return r;
}

}  // namespace ds::slurm
