// Slots of a NonIndexed Job's work items (work_slots.hpp), without a server.
#include "k8s/work_slots.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace ds::k8s {
namespace {

PodView worker(const std::string& uid, std::int64_t created_s, const std::string& job = "job-1") {
  PodView p;
  p.uid = uid;
  p.ns = "a";
  p.name = "queue-" + uid;
  p.job_uid = job;
  p.created_s = created_s;
  p.gpus = 1;
  return p;
}

JobIndex listing(const std::vector<std::string>& uids) {
  std::vector<std::shared_ptr<const json>> objects;
  for (const auto& u : uids)
    objects.push_back(std::make_shared<const json>(
        json{{"metadata", {{"uid", u}, {"namespace", "a"}, {"name", "queue-" + u}}},
             {"spec", {{"parallelism", 2}, {"completions", 5}}}}));
  JobIndex index;
  index.update(objects);
  return index;
}

// A replacement takes over the slot its predecessor left (evicted, failed, deleted), the
// lowest free one first; a slot whose pod succeeded is done: the Job's next pod is a new
// item. Slots are numbered per Job and kept while a pod of the Job or the Job is listed.
TEST(WorkSlots, ReplacementsTakeOverTheSlotTheirPredecessorLeft) {
  const JobIndex jobs = listing({"job-1", "job-2"});
  WorkSlots s;
  PodView a = worker("a", 100), b = worker("b", 100), other = worker("o", 50, "job-2");
  s.update({&b, &a, &other}, jobs);
  EXPECT_EQ(s.slot("a"), 0) << "creation order, then name";
  EXPECT_EQ(s.slot("b"), 1);
  EXPECT_EQ(s.slot("o"), 0) << "numbered per Job";
  // a is evicted (terminating) and its Job makes a replacement at once.
  a.terminating = true;
  PodView c = worker("c", 130);
  s.update({&a, &b, &c, &other}, jobs);
  EXPECT_EQ(s.slot("c"), 0) << "a's slot";
  EXPECT_EQ(s.slot("a"), 0) << "a keeps it while it is listed";
  // b fails; a is gone; b's replacement d and a new item e come in one update.
  b.phase = "Failed";
  PodView d = worker("d", 160), e = worker("e", 161);
  s.update({&b, &c, &d, &e, &other}, jobs);
  EXPECT_EQ(s.slot("d"), 1) << "b's slot";
  EXPECT_EQ(s.slot("e"), 2) << "no free slot left: a new one";
  EXPECT_EQ(s.slot("a"), -1) << "no longer listed";
  // c succeeds: slot 0 is done, so c's successor is a new item.
  c.phase = "Succeeded";
  PodView f = worker("f", 200);
  s.update({&c, &d, &e, &f, &other}, jobs);
  EXPECT_EQ(s.slot("f"), 3);
  // A pod seen first after it ended gets a slot of its own.
  PodView g = worker("g", 10);
  g.phase = "Succeeded";
  s.update({&c, &d, &e, &f, &g, &other}, jobs);
  EXPECT_EQ(s.slot("g"), 4);
  // Every pod of job-1 deleted: its slots stay while the Job is listed (a replacement may come
  // after a backoff); the Job gone too, they are forgotten.
  s.update({&other}, jobs);
  PodView h = worker("h", 300);
  s.update({&h, &other}, jobs);
  EXPECT_EQ(s.slot("h"), 1) << "the lowest open slot no live pod holds";
  EXPECT_EQ(s.jobs(), 2u);
  s.update({&other}, listing({"job-2"}));
  EXPECT_EQ(s.jobs(), 1u) << "job-1: neither a pod nor the Job listed";
  s.update({}, listing({}));
  EXPECT_EQ(s.jobs(), 0u);
}

}  // namespace
}  // namespace ds::k8s
