#include "replay/observed.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

#include "model/cluster_state.hpp"
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
  // Sweep: the runs drive a ClusterState as the simulator's events do (GPU occupancy,
  // tenant shares and integrals, entitlement at submit); SM use on top.
  ClusterState cs(w.cluster, w.tenants);
  cs.set_jobs(w.jobs);
  std::vector<double> gpu_util(static_cast<std::size_t>(w.cluster.total_gpus()), 0);
  double sm = 0;
  // A placement on known GPUs only (a run Slurm placed outside the workload's cluster
  // occupies nothing here).
  auto known = [&](const Placement& p) {
    Placement out;
    for (const auto& a : p) {
      if (a.node.index() >= w.cluster.nodes.size()) continue;
      const int gpus = w.cluster.nodes[a.node.index()].gpus;
      const std::uint64_t mask =
          gpus >= 64 ? a.gpu_mask : a.gpu_mask & ((std::uint64_t{1} << gpus) - 1);
      if (mask) out.push_back({a.node, mask});
    }
    return out;
  };
  for (const Ev& e : evs) {
    const JobId id(static_cast<std::uint32_t>(e.job));
    if (e.order == 1) {
      cs.submit(id, e.t);
      continue;
    }
    const ObservedRun& run = obs[e.job].runs[e.run];
    const int sign = e.order == 2 ? 1 : -1;
    const Placement placement = known(run.placement);
    if (sign > 0) {
      cs.adopt(id, e.t, placement, run.borrowed, run.shared, e.t);
    } else if (run.preempted || e.run + 1 < obs[e.job].runs.size()) {
      cs.requeue(id, e.t);
    } else {
      cs.finish(id, e.t);
    }
    const JobSpec& j = w.jobs[e.job];
    const double util = j.gpu_util >= 0 ? j.gpu_util : 100.0;
    cs.for_each_gpu(placement, [&](std::size_t g, NodeId) {
      const double before = std::min(100.0, gpu_util[g]);
      gpu_util[g] = std::max(0.0, gpu_util[g] + sign * util);
      sm += std::min(100.0, gpu_util[g]) - before;
    });
    const StepPoint p{e.t, cs.busy_gpus(), cs.allocated_gpus(), sm};
    if (!r.steps.empty() && r.steps.back().t == e.t)
      r.steps.back() = p;
    else
      r.steps.push_back(p);
    cs.clear_deltas();
  }
  cs.touch_all(last);
  for (std::size_t i = 0; i < n; ++i)
    r.jobs[i].entitled = cs.runtime(JobId(static_cast<std::uint32_t>(i))).entitled;
  r.tenants.assign(cs.tenant_totals().begin(), cs.tenant_totals().end());
  r.end = last;
  return r;
}

}  // namespace ds::slurm
