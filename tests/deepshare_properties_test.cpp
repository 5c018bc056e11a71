// Property tests for the DeepShare policy (rapidcheck) on random multi-tenant
// workloads with workload profiles, so that lending, reclaim and sharing all occur:
//  - usage never exceeds capacity: at most two jobs per GPU, and their memory fits;
//  - every job completes exactly once, never before its submit time;
//  - reclaim rules: after the decisions of a cycle, no entitled job that fits its
//    tenant's quota has waited past its SLO while some node could hold it if the
//    borrowed jobs alone on that node's GPUs were preempted;
//  - determinism: the same workload gives the same schedule.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <map>
#include <set>

#include "model/testing.hpp"
#include "registry/registry.hpp"
#include "sim/simulator.hpp"

namespace ds {
namespace {

Workload random_workload() {
  const int tenants = *rc::gen::inRange(2, 5);
  Workload w = testing::make_workload(tenants, *rc::gen::inRange(1, 3), 8);
  for (auto& t : w.tenants) t.checkpoint_interval = seconds(*rc::gen::element(0, 300, 1800));
  const int jobs = *rc::gen::inRange(1, 120);
  for (int i = 0; i < jobs; ++i) {
    const int gpus = *rc::gen::element(1, 1, 1, 2, 4, 8, 16);
    testing::add_job(w, *rc::gen::inRange(0, tenants), gpus, *rc::gen::inRange(0, 4000),
                     *rc::gen::inRange(1, 3000), *rc::gen::inRange(5, 100),
                     *rc::gen::inRange(500, 16000));
  }
  w.finalize();
  return w;
}

class Checked final : public Policy {
 public:
  Checked(std::unique_ptr<Policy> inner, const Workload& w)
      : inner_(std::move(inner)), w_(w), entitled_(w.jobs.size(), false) {}

  Decisions decide(const ClusterSnapshot& s) override {
    for (std::size_t g = 0; g < s.gpus.size(); ++g) {
      RC_ASSERT(s.gpus[g].jobs <= 2);
      if (s.gpus[g].jobs >= 2) {
        const Node* node = nullptr;
        for (const auto& n : w_.cluster.nodes)
          if (static_cast<int>(g) >= n.first_gpu && static_cast<int>(g) < n.first_gpu + n.gpus)
            node = &n;
        RC_ASSERT(s.gpus[g].memory_used_mib <= node->gpu_memory_mib);
      }
    }
    for (const auto& f : s.finished) {
      RC_ASSERT(!done_.count(f.job));
      done_.insert(f.job);
    }
    // Entitlement at submit, as the metrics define it.
    for (JobId id : s.arrived) {
      const JobSpec& j = s.jobs[id.index()];
      entitled_[id.index()] = guaranteed(s, j.tenant) + queued_entitled(s, j.tenant) + j.gpus <=
                              s.tenants[j.tenant.index()].quota_gpus;
    }
    Decisions d = inner_->decide(s);
    check_reclaim_rules(s, d);
    return d;
  }
  std::set<JobId> done_;

 private:
  int guaranteed(const ClusterSnapshot& s, TenantId t) const {
    int g = 0;
    for (JobId id : s.running)
      if (s.jobs[id.index()].tenant == t && !s.runtime[id.index()].borrowed)
        g += s.jobs[id.index()].gpus;
    return g;
  }
  int queued_entitled(const ClusterSnapshot& s, TenantId t) const {
    int q = 0;
    for (JobId id : s.pending)
      if (s.jobs[id.index()].tenant == t && entitled_[id.index()]) q += s.jobs[id.index()].gpus;
    return q;
  }

  void check_reclaim_rules(const ClusterSnapshot& s, const Decisions& d) {
    // State after the decisions: running set, per-GPU job counts.
    std::set<JobId> running(s.running.begin(), s.running.end());
    std::map<JobId, Placement> where;
    std::map<JobId, bool> borrowed;
    for (JobId id : s.running) {
      where[id] = s.runtime[id.index()].placement;
      borrowed[id] = s.runtime[id.index()].borrowed;
    }
    for (const auto& p : d.preempt) running.erase(p.job);
    std::set<JobId> started;
    for (const auto& st : d.start) {
      running.insert(st.job);
      started.insert(st.job);
      where[st.job] = st.placement;
      borrowed[st.job] = st.borrowed;
    }
    std::vector<int> jobs_on(s.gpus.size(), 0);
    auto each_gpu = [&](const Placement& p, auto f) {
      for (const auto& a : p) {
        const Node& n = w_.cluster.nodes[a.node.index()];
        for (std::uint64_t m = a.gpu_mask; m; m &= m - 1)
          f(n.first_gpu + std::countr_zero(m), a.node);
      }
    };
    for (JobId id : running)
      each_gpu(where[id], [&](int g, NodeId) { ++jobs_on[static_cast<std::size_t>(g)]; });
    std::vector<int> room(w_.cluster.nodes.size(), 0);  // free + preemptible GPUs per node
    for (const auto& n : w_.cluster.nodes)
      for (int g = n.first_gpu; g < n.first_gpu + n.gpus; ++g)
        if (jobs_on[static_cast<std::size_t>(g)] == 0) ++room[n.id.index()];
    for (JobId id : running) {
      if (!borrowed[id]) continue;
      bool alone = true;
      each_gpu(where[id],
               [&](int g, NodeId) { alone = alone && jobs_on[static_cast<std::size_t>(g)] == 1; });
      if (alone) each_gpu(where[id], [&](int, NodeId n) { ++room[n.index()]; });
    }
    std::map<TenantId, int> g_after;
    for (JobId id : running)
      if (!borrowed[id]) g_after[s.jobs[id.index()].tenant] += s.jobs[id.index()].gpus;
    for (JobId id : s.pending) {
      if (started.count(id) || !entitled_[id.index()]) continue;
      const JobSpec& j = s.jobs[id.index()];
      const Tenant& t = s.tenants[j.tenant.index()];
      if (s.runtime[id.index()].first_start != kNever) continue;
      if (s.now <= j.submit + t.slo_queue || j.gpus > 8) continue;
      if (g_after[j.tenant] + j.gpus > t.quota_gpus) continue;
      for (const auto& n : w_.cluster.nodes)
        RC_ASSERT(room[n.id.index()] < j.gpus);  // else a reclaim could have placed it
    }
  }

  std::unique_ptr<Policy> inner_;
  const Workload& w_;
  std::vector<bool> entitled_;
};

RC_GTEST_PROP(DeepShareProperties, InvariantsHoldOnRandomWorkloads, ()) {
  Workload w = random_workload();
  PolicyOptions o;
  Checked p(make_policy("deepshare", PolicyContext{w.cluster, w.tenants, w.jobs, o, w.profiles}),
            w);
  SimResult r = simulate(w, p);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    RC_ASSERT(r.jobs[i].status == JobStatus::Done);
    RC_ASSERT(r.jobs[i].first_start >= w.jobs[i].submit);
  }
  RC_ASSERT(p.done_.size() == w.jobs.size());
  for (const auto& step : r.steps) RC_ASSERT(step.busy_gpus <= w.cluster.total_gpus());
  PolicyOptions o2;
  auto again =
      make_policy("deepshare", PolicyContext{w.cluster, w.tenants, w.jobs, o2, w.profiles});
  SimResult r2 = simulate(w, *again);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) RC_ASSERT(r.jobs[i].end == r2.jobs[i].end);
}

}  // namespace
}  // namespace ds
