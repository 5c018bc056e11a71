// Property tests (rapidcheck): invariants that must hold for every workload and policy.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "model/testing.hpp"
#include "random_workload.hpp"
#include "registry/registry.hpp"
#include "sim/simulator.hpp"

namespace ds {
namespace {

Workload random_workload() {
  return testing::random_workload({.max_jobs = 80});
}

// Wraps a policy and checks every snapshot it is shown.
class Checked final : public Policy {
 public:
  Checked(std::unique_ptr<Policy> inner, const Workload& w) : inner_(std::move(inner)), w_(w) {}
  Decisions decide(const ClusterSnapshot& s) override {
    for (const auto& g : s.gpus) RC_ASSERT(g.jobs <= 1);  // no sharing in these policies
    for (std::size_t n = 0; n < s.node_free_gpus.size(); ++n)
      RC_ASSERT(s.node_free_gpus[n] >= 0 && s.node_free_gpus[n] <= w_.cluster.nodes[n].gpus);
    for (const auto& f : s.finished) {
      RC_ASSERT(!done_.count(f.job));  // completes exactly once
      done_.insert(f.job);
    }
    for (JobId id : s.running)
      RC_ASSERT(s.runtime[id.index()].first_start >= s.jobs[id.index()].submit);
    return inner_->decide(s);
  }
  std::set<JobId> done_;

 private:
  std::unique_ptr<Policy> inner_;
  const Workload& w_;
};

void check_policy(const std::string& name) {
  Workload w = random_workload();
  PolicyOptions o;
  Checked p(make_policy(name, PolicyContext{w.cluster, w.tenants, w.jobs, o}), w);
  RunRecord r = simulate(w, p);
  std::size_t rejected = 0;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const auto& o2 = r.jobs[i];
    if (o2.status == JobStatus::Rejected) {
      ++rejected;
      continue;
    }
    RC_ASSERT(o2.status == JobStatus::Done);
    RC_ASSERT(o2.first_start >= w.jobs[i].submit);
    RC_ASSERT(o2.end == o2.first_start + w.truth[i].work);  // no preemption, full speed
  }
  RC_ASSERT(p.done_.size() + rejected == w.jobs.size());
  for (const auto& step : r.steps) {
    RC_ASSERT(step.busy_gpus <= w.cluster.total_gpus());
    RC_ASSERT(step.allocated_gpus == step.busy_gpus);
  }
  // Determinism: the same run again gives the same outcome.
  PolicyOptions o3;
  auto again = make_policy(name, PolicyContext{w.cluster, w.tenants, w.jobs, o3});
  RunRecord r2 = simulate(w, *again);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    RC_ASSERT(r.jobs[i].first_start == r2.jobs[i].first_start);
    RC_ASSERT(r.jobs[i].end == r2.jobs[i].end);
  }
}

RC_GTEST_PROP(Properties, FifoIsolatedKeepsInvariants, ()) {
  check_policy("fifo-isolated");
}
RC_GTEST_PROP(Properties, FifoPooledKeepsInvariants, ()) {
  check_policy("fifo-pooled");
}

RC_GTEST_PROP(Properties, IsolatedTenantsOnlyUseTheirOwnNodes, ()) {
  Workload w = random_workload();
  PolicyOptions o;
  auto inner = make_policy("fifo-isolated", PolicyContext{w.cluster, w.tenants, w.jobs, o});
  struct Spy final : Policy {
    Policy* inner;
    const Workload* w;
    Decisions decide(const ClusterSnapshot& s) override {
      Decisions d = inner->decide(s);
      for (const auto& st : d.start)
        for (const auto& a : st.placement)
          RC_ASSERT(w->cluster.nodes[a.node.index()].owner == s.jobs[st.job.index()].tenant);
      return d;
    }
  } spy;
  spy.inner = inner.get();
  spy.w = &w;
  simulate(w, spy);
}

RC_GTEST_PROP(Properties, LoadFactorKeepsOrderAndFirstSubmit, ()) {
  Workload w = random_workload();
  const double f = *rc::gen::element(0.5, 1.0, 1.25, 1.5, 3.0);
  Workload s = w;
  s.scale_load(f);
  RC_ASSERT(s.jobs.front().submit == w.jobs.front().submit);
  for (std::size_t i = 1; i < s.jobs.size(); ++i)
    RC_ASSERT(s.jobs[i - 1].submit <= s.jobs[i].submit);
}

}  // namespace
}  // namespace ds
