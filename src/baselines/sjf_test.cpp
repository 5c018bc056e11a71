#include "baselines/sjf.hpp"

#include <gtest/gtest.h>

#include "baselines/queue_test_util.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

using testing::add_job;
using testing::end_s;
using testing::make_workload;
using testing::run_policy;
using testing::start_s;

TEST(Sjf, StartsTheShortestTrueRunTimeFirst) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 8, 0, 100);  // holds the node until 100
  add_job(w, 0, 4, 1, 50);
  add_job(w, 0, 4, 2, 10);
  add_job(w, 0, 8, 3, 5);  // shortest: first at 100, alone on the node
  w.finalize();
  auto r = run_policy(w, &make_sjf);
  EXPECT_EQ(start_s(r, 3), 100);
  EXPECT_EQ(start_s(r, 2), 105);
  EXPECT_EQ(start_s(r, 1), 105);
  EXPECT_EQ(r.jobs[1].queue, seconds(104));
}

TEST(Sjf, EqualRunTimesKeepArrivalOrder) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 8, 0, 100);
  add_job(w, 0, 8, 1, 30);
  add_job(w, 0, 8, 1, 30);
  w.finalize();
  auto r = run_policy(w, &make_sjf);
  EXPECT_EQ(start_s(r, 1), 100);
  EXPECT_EQ(start_s(r, 2), 130);
}

TEST(Sjf, HeadOfLineBlocksUnlessBackfillIsOn) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 6, 0, 100);  // 2 GPUs stay free
  add_job(w, 0, 4, 1, 10);   // shortest, does not fit
  add_job(w, 0, 1, 2, 50);   // fits, but waits behind it (Lucid)
  w.finalize();
  auto hol = run_policy(w, &make_sjf);
  EXPECT_EQ(start_s(hol, 1), 100);
  EXPECT_EQ(start_s(hol, 2), 100);
  auto backfill = run_policy(w, &make_sjf, {"backfill=on"});
  EXPECT_EQ(start_s(backfill, 2), 2);
  EXPECT_EQ(start_s(backfill, 1), 100);
}

TEST(Sjf, IsolatedByDefaultPooledOnRequest) {
  auto w = make_workload(2, 1);
  add_job(w, 0, 8, 0, 100);
  add_job(w, 0, 8, 0, 100);  // tenant 1's node is idle
  w.finalize();
  EXPECT_EQ(start_s(run_policy(w, &make_sjf), 1), 100);
  EXPECT_EQ(start_s(run_policy(w, &make_sjf, {"scope=pooled"}), 1), 0);
}

TEST(Sjf, RejectsJobsLargerThanTheirPartition) {
  auto w = make_workload(2, 1);
  add_job(w, 0, 16, 0, 10);
  w.finalize();
  auto iso = run_policy(w, &make_sjf);
  EXPECT_EQ(iso.jobs[0].status, JobStatus::Rejected);
  EXPECT_NE(iso.jobs[0].reject_reason.find("tenant 't0' owns 8"), std::string::npos);
  auto pooled = run_policy(w, &make_sjf, {"scope=pooled"});
  EXPECT_EQ(pooled.jobs[0].status, JobStatus::Done);
  EXPECT_EQ(end_s(pooled, 0), 10);
}

TEST(Sjf, NeedsTheTrueRunTimes) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 1, 0, 10);
  w.finalize();
  PolicyOptions o;
  EXPECT_THROW(make_sjf(PolicyContext{w.cluster, w.tenants, o}), InputError);
  o.set("scope=everywhere");
  std::vector<Time> oracle{seconds(10)};
  EXPECT_THROW(make_sjf(PolicyContext{w.cluster, w.tenants, o, oracle}), InputError);
}

}  // namespace
}  // namespace ds
