// Leader election's rules without a server (leader.hpp): when a Lease is created, renewed,
// taken over or waited for, the Lease's fields as read, and the periods' checks. The calls
// themselves (409 on a stale resourceVersion, a take-over after kill -9) run on a real
// control plane: tests/k8s/deepshare_run_test.sh.
#include "k8s/leader.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace ds::k8s {
namespace {

LeaseRecord held_by(const std::string& holder, std::int64_t duration_s = 15) {
  LeaseRecord r;
  r.exists = true;
  r.holder = holder;
  r.resource_version = "41";
  r.transitions = 2;
  r.duration_s = duration_s;
  return r;
}

TEST(K8sLeader, StepCreatesRenewsWaitsAndTakesOver) {
  EXPECT_EQ(lease_step(LeaseRecord{}, "me", 0, 0, 15000), LeaseAction::Create);
  EXPECT_EQ(lease_step(held_by("me"), "me", 0, 99999, 15000), LeaseAction::Renew);
  EXPECT_EQ(lease_step(held_by(""), "me", 1000, 1000, 15000), LeaseAction::TakeOver)
      << "given up on a clean stop: at once";
  // Another holder: taken over only once its record stayed unchanged for its own
  // leaseDurationSeconds, on the standby's clock since it first saw that record.
  EXPECT_EQ(lease_step(held_by("other", 6), "me", 1000, 6999, 15000), LeaseAction::Wait);
  EXPECT_EQ(lease_step(held_by("other", 6), "me", 1000, 7000, 15000), LeaseAction::TakeOver);
  EXPECT_EQ(lease_step(held_by("other", 0), "me", 1000, 7000, 15000), LeaseAction::Wait)
      << "no duration in the Lease: ours (15 s)";
  EXPECT_EQ(lease_step(held_by("other", 0), "me", 1000, 16000, 15000), LeaseAction::TakeOver);
}

TEST(K8sLeader, ReadsTheLease) {
  const json l = {{"metadata", {{"name", "deepshare-scheduler"}, {"resourceVersion", "77"}}},
                  {"spec",
                   {{"holderIdentity", "host_12"},
                    {"leaseDurationSeconds", 6},
                    {"leaseTransitions", 4},
                    {"renewTime", "2026-12-06T05:00:00.000000Z"}}}};
  const LeaseRecord r = lease_record(l);
  EXPECT_TRUE(r.exists);
  EXPECT_EQ(r.holder, "host_12");
  EXPECT_EQ(r.resource_version, "77");
  EXPECT_EQ(r.transitions, 4);
  EXPECT_EQ(r.duration_s, 6);
  const LeaseRecord empty = lease_record(json{{"metadata", {{"resourceVersion", "1"}}}});
  EXPECT_TRUE(empty.exists);
  EXPECT_EQ(empty.holder, "");
  EXPECT_EQ(lease_step(empty, "me", 0, 0, 15000), LeaseAction::TakeOver);
}

TEST(K8sLeader, PeriodsMustNest) {
  LeaderConfig c;
  EXPECT_NO_THROW(check_leader_config(c));  // 2 s < 10 s < 15 s, as client-go's defaults
  c.renew_deadline_ms = 15000;
  EXPECT_THROW(check_leader_config(c), InputError) << "a holder must stop before a take-over";
  c = LeaderConfig{};
  c.duration_ms = 1500;
  EXPECT_THROW(check_leader_config(c), InputError) << "leaseDurationSeconds is whole seconds";
  c = LeaderConfig{};
  c.ns.clear();
  EXPECT_THROW(check_leader_config(c), InputError);
}

}  // namespace
}  // namespace ds::k8s
