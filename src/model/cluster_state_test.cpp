// ClusterState's transitions for an online driver (the Slurm controller): candidates that
// stop and start being candidates, rolled-back starts, decisions not applied, slot reuse,
// GPUs blocked outside the policy's jobs and nodes without sharing. Every count must stay
// exact and the deltas must say what the policy has to learn.
#include "model/cluster_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "model/testing.hpp"

namespace ds {
namespace {

template <class Id>
bool has(std::span<const Id> v, Id id) {
  return std::find(v.begin(), v.end(), id) != v.end();
}

StartJob start_on(JobId id, int node, std::uint64_t mask, bool shared = false) {
  StartJob s;
  s.job = id;
  s.placement = {NodeAlloc{NodeId(static_cast<std::uint32_t>(node)), mask}};
  s.shared = shared;
  return s;
}

class OnlineState : public ::testing::Test {
 protected:
  OnlineState() : w(testing::make_workload(2, 1, 4)) {
    for (int i = 0; i < 4; ++i) testing::add_job(w, i % 2, 2, i, 100);
    cs = std::make_unique<ClusterState>(w.cluster, w.tenants);
    cs->set_jobs(w.jobs);  // the state's own copy
  }
  JobId id(int i) const { return JobId(static_cast<std::uint32_t>(i)); }
  const TenantUsage& u0() const { return cs->usage(TenantId(0)); }

  Workload w;
  std::unique_ptr<ClusterState> cs;
};

TEST_F(OnlineState, ParkAndUnparkKeepDemandAndTellThePolicy) {
  cs->unpark(id(0), 0);  // first candidacy: arrived, entitled at submit
  EXPECT_TRUE(has(cs->snapshot(0).arrived, id(0)));
  EXPECT_TRUE(cs->runtime(id(0)).entitled);
  EXPECT_EQ(u0().demand, 2000);
  EXPECT_EQ(u0().pending_jobs, 1);
  cs->park(id(0), 5);  // in the same cycle: the policy never saw it
  EXPECT_FALSE(has(cs->snapshot(5).arrived, id(0)));
  EXPECT_FALSE(has(cs->snapshot(5).withdrawn, id(0)));
  EXPECT_EQ(u0().demand, 0);
  EXPECT_EQ(u0().pending_jobs, 0);
  EXPECT_EQ(u0().queued_entitled, 0);
  cs->unpark(id(0), 10);
  cs->clear_deltas();  // the policy saw it arrive
  cs->park(id(0), 20);
  EXPECT_TRUE(has(cs->snapshot(20).withdrawn, id(0)));
  cs->clear_deltas();
  cs->unpark(id(0), 30);  // a candidate again: requeued, not arrived
  const ClusterSnapshot s = cs->snapshot(30);
  EXPECT_TRUE(has(s.requeued, id(0)));
  EXPECT_FALSE(has(s.arrived, id(0)));
  EXPECT_EQ(cs->runtime(id(0)).queued_since, 30);
  EXPECT_EQ(u0().demand, 2000);
  EXPECT_THROW(cs->unpark(id(0), 40), DecisionError);
}

TEST_F(OnlineState, UnstartRollsBackWithoutARunOrAPreemption) {
  cs->unpark(id(0), 0);
  cs->clear_deltas();
  cs->start(start_on(id(0), 0, 0b0011), 10, 10);
  EXPECT_EQ(u0().held, 2000);
  EXPECT_EQ(cs->busy_gpus(), 2);
  cs->unstart(id(0), 500);
  const JobRuntime& r = cs->runtime(id(0));
  EXPECT_EQ(r.status, JobStatus::Pending);
  EXPECT_EQ(r.attained, 0);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.first_start, kNever);
  EXPECT_EQ(u0().held, 0);
  EXPECT_EQ(u0().pending_jobs, 1);
  EXPECT_EQ(cs->busy_gpus(), 0);
  EXPECT_EQ(cs->snapshot(500).requeued.size(), 1u);
  // Started again and confirmed later: the run starts when the cluster runs it.
  cs->start(start_on(id(0), 0, 0b1100), 600, 600);
  cs->confirm_start(id(0), 900);
  EXPECT_EQ(cs->runtime(id(0)).first_start, 900);
  EXPECT_EQ(cs->runtime(id(0)).last_start, 900);
  cs->finish(id(0), 1900);
  EXPECT_EQ(cs->runtime(id(0)).attained, 1000);
}

TEST_F(OnlineState, DecisionsNotAppliedAreTold) {
  cs->unpark(id(0), 0);
  cs->unpark(id(2), 0);
  cs->start(start_on(id(0), 0, 0b0011), 0, 0);
  cs->clear_deltas();
  // The policy preempts 0 and places it again at once; the start is not applied.
  cs->requeue(id(0), 10);
  cs->start_not_applied(id(0));
  EXPECT_EQ(std::count(cs->snapshot(10).requeued.begin(), cs->snapshot(10).requeued.end(), id(0)),
            2);
  // A start not applied for a job that was not preempted: one entry.
  cs->start_not_applied(id(2));
  cs->start_not_applied(id(2));
  EXPECT_EQ(std::count(cs->snapshot(10).requeued.begin(), cs->snapshot(10).requeued.end(), id(2)),
            1);
  // The preempted job leaves before the next snapshot: its preemption is still confirmed,
  // the second entry is dropped, and it is withdrawn.
  cs->withdraw(id(0), 20);
  const ClusterSnapshot s = cs->snapshot(20);
  EXPECT_EQ(std::count(s.requeued.begin(), s.requeued.end(), id(0)), 1);
  EXPECT_TRUE(has(s.withdrawn, id(0)));
  cs->clear_deltas();
  // A preemption not applied: the job runs on, the policy learns it (adopted + requeued).
  cs->start(start_on(id(2), 0, 0b0011), 30, 30);
  cs->clear_deltas();
  cs->preempt_not_applied(id(2));
  EXPECT_TRUE(has(cs->snapshot(30).adopted, id(2)));
  EXPECT_TRUE(has(cs->snapshot(30).requeued, id(2)));
  EXPECT_EQ(cs->runtime(id(2)).status, JobStatus::Running);
  EXPECT_THROW(cs->start_not_applied(id(2)), DecisionError);
}

TEST_F(OnlineState, RequeuedByTheClusterIsNoNotice) {
  cs->unpark(id(0), 0);
  cs->start(start_on(id(0), 0, 0b0011), 0, 0);
  cs->clear_deltas();
  cs->requeue(id(0), 100, false);  // e.g. a node failure
  cs->park(id(0), 100);            // and it is no candidate now
  const ClusterSnapshot s = cs->snapshot(100);
  EXPECT_FALSE(has(s.requeued, id(0)));
  EXPECT_TRUE(has(s.withdrawn, id(0)));
  EXPECT_EQ(cs->runtime(id(0)).preemptions, 1);
  EXPECT_EQ(cs->runtime(id(0)).attained, 100);
}

TEST_F(OnlineState, RecycleReusesASlotOnlyOnceItsJobLeft) {
  cs->unpark(id(0), 0);
  EXPECT_THROW(cs->recycle(id(0)), DecisionError);
  cs->withdraw(id(0), 5);
  cs->clear_deltas();
  EXPECT_TRUE(cs->listed().empty());
  cs->recycle(id(0));
  EXPECT_EQ(cs->runtime(id(0)).status, JobStatus::Future);
  cs->unpark(id(0), 10);  // a new job in the slot: it arrives
  EXPECT_TRUE(has(cs->snapshot(10).arrived, id(0)));
  EXPECT_EQ(cs->listed().size(), 1u);
  cs->drop(id(1), 10);  // left before it was a candidate: nothing to tell
  EXPECT_EQ(cs->runtime(id(1)).status, JobStatus::Done);
  EXPECT_EQ(cs->delta_count(), 1u);
}

TEST_F(OnlineState, AdoptTakesTheRestartCountAndRelocateMovesGpus) {
  cs->adopt(id(1), 0, {NodeAlloc{NodeId(1), 0b0011}}, true, false, 0, 3);
  EXPECT_EQ(cs->runtime(id(1)).preemptions, 3);
  EXPECT_EQ(cs->usage(TenantId(1)).borrowed, 2000);
  cs->relocate(id(1), {NodeAlloc{NodeId(1), 0b1100}});
  EXPECT_EQ(cs->gpu(4).jobs, 0);
  EXPECT_EQ(cs->gpu(6).jobs, 1);
  EXPECT_EQ(cs->cluster().nodes[1].first_gpu, 4);
  EXPECT_TRUE(has(cs->snapshot(0).changed_nodes, NodeId(1)));
}

TEST_F(OnlineState, BlockedGpusAndNodesWithoutSharing) {
  w.jobs[2].gpu_memory_mib = 1000;  // (for the colocation below)
  w.jobs[0].gpu_memory_mib = 1000;
  cs->set_jobs(w.jobs);
  cs->set_held_outside({0});  // a job outside the policy's holds GPU 0
  cs->unpark(id(0), 0);
  EXPECT_EQ(cs->start_error(start_on(id(0), 0, 0b0011))->kind, Refusal::GpuUnavailable);
  EXPECT_FALSE(cs->start_error(start_on(id(0), 0, 0b0110)).has_value());
  EXPECT_EQ(cs->snapshot(0).node_free_gpus[0], 3);
  EXPECT_FALSE(cs->gpus_idle(NodeId(0), 0b0011));
  EXPECT_TRUE(cs->gpus_idle(NodeId(0), 0b0110));
  cs->set_held_outside({});
  EXPECT_EQ(cs->snapshot(0).node_free_gpus[0], 4);
  // A node that is down: none of its GPUs; held GPUs and the node's state add up.
  cs->set_held_outside({1});
  cs->set_node_usable(NodeId(0), false);
  EXPECT_EQ(cs->idle_gpus(NodeId(0)), 0);
  EXPECT_EQ(cs->gpu(1).jobs, 1);  // blocked once, though held and down
  EXPECT_EQ(cs->busy_gpus(), 0);  // no job of the policy's
  cs->set_node_usable(NodeId(0), true);
  EXPECT_EQ(cs->idle_gpus(NodeId(0)), 3);
  cs->set_held_outside({});
  EXPECT_EQ(cs->idle_gpus(NodeId(0)), 4);
  // Colocation: allowed by memory, until the node may not share.
  cs->start(start_on(id(0), 0, 0b0011), 0, 0);
  cs->unpark(id(2), 0);
  EXPECT_FALSE(cs->start_error(start_on(id(2), 0, 0b0011, true)).has_value());
  cs->set_no_sharing(NodeId(0), true);
  EXPECT_EQ(cs->gpu(0).memory_used_mib, w.cluster.nodes[0].gpu_memory_mib);
  EXPECT_EQ(cs->gpu(2).memory_used_mib, 0);  // idle GPUs show none
  EXPECT_EQ(cs->start_error(start_on(id(2), 0, 0b0011, true))->kind, Refusal::MemoryFull);
  cs->set_no_sharing(NodeId(0), false);
  EXPECT_EQ(cs->gpu(0).memory_used_mib, 1000);
  cs->start(start_on(id(2), 0, 0b0011, true), 0, 0);
  EXPECT_EQ(u0().colocated, 2000);
  EXPECT_EQ(u0().colocated_jobs, 1);
  EXPECT_EQ(u0().held, 4000);
  cs->finish(id(2), 10);
  EXPECT_EQ(u0().colocated, 0);
  EXPECT_EQ(cs->gpu(0).memory_used_mib, 1000);
}

// The job table is the state's: jobs learned online are appended, a slot whose job left is
// reused, a slot given back is emptied, and a per-job flag changes in the state only.
TEST_F(OnlineState, OwnsTheJobTable) {
  JobSpec j = w.jobs[0];
  j.name = "late";
  const JobId late = cs->add_job(j);
  EXPECT_EQ(late, id(4));
  EXPECT_EQ(cs->spec(late).id, late);
  EXPECT_EQ(cs->snapshot(0).jobs.size(), 5u);
  cs->unpark(late, 0);
  EXPECT_THROW(cs->clear_job(late), DecisionError);  // it has not left
  cs->withdraw(late, 1);
  cs->clear_job(late);
  EXPECT_TRUE(cs->spec(late).name.empty());
  j.name = "reuse";
  cs->reuse_job(late, j);
  EXPECT_EQ(cs->spec(late).name, "reuse");
  EXPECT_EQ(cs->runtime(late).status, JobStatus::Future);
  cs->set_colocatable(late, false);
  EXPECT_FALSE(cs->snapshot(0).jobs[late.index()].colocatable);
  EXPECT_TRUE(w.jobs[0].colocatable);  // the workload itself is left alone
}

// Decisions the state refuses come back typed, never as a throw.
TEST_F(OnlineState, RefusalsAreTyped) {
  cs->unpark(id(0), 0);
  EXPECT_EQ(cs->reject_error({id(1), "x"})->kind, Refusal::NotPending);
  EXPECT_EQ(cs->reject_error({id(0), ""})->kind, Refusal::NoReason);
  EXPECT_EQ(cs->reject_error({JobId(99), "x"})->kind, Refusal::UnknownJob);
  EXPECT_FALSE(cs->reject_error({id(0), "x"}).has_value());
  EXPECT_EQ(cs->preempt_error(id(0))->kind, Refusal::NotRunning);
  EXPECT_EQ(cs->start_error(start_on(id(1), 0, 0b0011))->kind, Refusal::NotPending);
  EXPECT_EQ(cs->start_error(start_on(id(0), 0, 0b0001))->kind, Refusal::BadPlacement);
  EXPECT_EQ(cs->start_error(start_on(id(0), 0, 0b110000))->kind, Refusal::BadPlacement);
  StartJob borrowed = start_on(id(0), 0, 0b0011);
  borrowed.borrowed = true;
  JobSpec fixed = w.jobs[0];
  fixed.preemptible = false;
  w.jobs[0] = fixed;
  cs->set_jobs(w.jobs);
  EXPECT_EQ(cs->start_error(borrowed)->kind, Refusal::BorrowedNotPreemptible);
  cs->start(start_on(id(0), 0, 0b0011), 0, 0);
  EXPECT_EQ(cs->preempt_error(id(0))->kind, Refusal::NotPreemptible);
  cs->unpark(id(2), 0);
  EXPECT_EQ(cs->start_error(start_on(id(2), 0, 0b0011))->kind, Refusal::GpuBusy);
  EXPECT_NE(cs->describe(*cs->start_error(start_on(id(2), 0, 0b0011))).find("job '2'"),
            std::string::npos);
}

TEST_F(OnlineState, PresentAllMarksEveryJobAsSeen) {
  cs->unpark(id(0), 0);
  cs->unpark(id(1), 0);
  cs->start(start_on(id(1), 1, 0b0011), 0, 0);
  cs->present_all();
  const ClusterSnapshot s = cs->snapshot(0);
  EXPECT_EQ(s.arrived.size(), 1u);
  EXPECT_EQ(s.adopted.size(), 1u);
  cs->clear_deltas();
  cs->park(id(0), 1);
  EXPECT_TRUE(has(cs->snapshot(1).withdrawn, id(0)));
}

}  // namespace
}  // namespace ds
