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

// Per job: its outcome from its runs (queueing, preemptions with the checkpoint model's lost
// work and overhead, end, status); and every submit, start and end as an event. `last`: the
// latest end.
std::vector<Ev> outcomes(const Workload& w, const std::vector<ObservedJob>& obs, RunRecord& r,
                         Time& last) {
  const std::size_t n = w.jobs.size();
  r.jobs.resize(n);
  r.tenants.resize(w.tenants.size());
  r.origin = n ? obs[0].submit : 0;
  last = r.origin;
  std::vector<Ev> evs;
  for (std::size_t i = 0; i < n; ++i) {
    const ObservedJob& o = obs[i];
    r.origin = std::min(r.origin, o.submit);
    JobOutcome& out = r.jobs[i];
    evs.push_back({o.submit, 1, i, 0});
    // A run is taken to start no earlier than its job's submission (or its last run's end)
    // and to last at least 1 ms: an engine's clock may show a start a little before the
    // submit it saw (a Kubernetes pod can run before the POST that created its Job has
    // returned), and the sweep must see submit, start, end in that order.
    Time waited_from = o.submit, end = kNever;
    for (std::size_t k = 0; k < o.runs.size(); ++k) {
      const ObservedRun& run = o.runs[k];
      const Time start = std::max(run.start, waited_from);
      end = run.end == kNever ? kNever : std::max(run.end, start + 1);
      out.queue += start - waited_from;
      if (out.first_start == kNever) out.first_start = start;
      evs.push_back({start, 2, i, k});
      if (end != kNever) {
        evs.push_back({end, 0, i, k});
        last = std::max(last, end);
        waited_from = end;
      }
      if (run.preempted) {
        ++out.preemptions;
        const JobSpec& j = w.jobs[i];
        const Time interval = w.tenants[j.tenant.index()].checkpoint_interval;
        const Time done = end - start;
        const Time kept = interval > 0 ? done / interval * interval : done;
        out.lost_work += done - kept;
        out.overhead += restart_overhead(j.gpus);
      }
    }
    if (o.completed && !o.runs.empty() && end != kNever) out.end = end;
    out.status = o.completed                                     ? JobStatus::Done
                 : o.runs.empty() || o.runs.back().end != kNever ? JobStatus::Pending
                                                                 : JobStatus::Running;
  }
  return evs;
}

// Sweep: the runs drive a ClusterState as the simulator's events do (GPU occupancy, tenant
// shares and integrals, entitlement at submit); SM use on top.
void sweep(const Workload& w, const std::vector<ObservedJob>& obs, std::vector<Ev>& evs,
           RunRecord& r, Time last) {
  const std::size_t n = w.jobs.size();
  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    return a.t != b.t ? a.t < b.t : a.order != b.order ? a.order < b.order : a.job < b.job;
  });
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
}

}  // namespace

RunRecord result_from_observation(const Workload& w, const std::vector<ObservedJob>& obs) {
  RunRecord r;
  Time last = 0;
  std::vector<Ev> evs = outcomes(w, obs, r, last);
  sweep(w, obs, evs, r, last);
  return r;
}

}  // namespace ds::slurm
