// Jobs as gangs (jobs.hpp), without a server.
#include "k8s/jobs.hpp"

#include <gtest/gtest.h>

namespace ds::k8s {
namespace {

json job(const std::string& uid, const char* mode, int parallelism, int completions) {
  return {{"metadata", {{"uid", uid}, {"namespace", "a"}, {"name", "job-" + uid}}},
          {"spec",
           {{"completionMode", mode}, {"parallelism", parallelism}, {"completions", completions}}}};
}

// An Indexed Job that runs all its pods at once is a gang, and a Job of one pod a gang of one;
// a work queue (parallelism below completions) and NonIndexed Jobs of several pods leave
// their pods jobs of their own.
TEST(K8sJobs, IndexedJobRunningAllItsPodsAtOnceIsAGang) {
  EXPECT_EQ(job_shape(job("u", "Indexed", 4, 4))->gang_size, 4);
  EXPECT_EQ(job_shape(job("u", "Indexed", 1, 1))->gang_size, 1) << "one pod: a gang of one";
  EXPECT_EQ(job_shape(job("u", "NonIndexed", 1, 1))->gang_size, 1);
  EXPECT_EQ(job_shape(job("u", "NonIndexed", 1, 3))->gang_size, 0) << "three, one after another";
  EXPECT_EQ(job_shape(job("u", "Indexed", 2, 8))->gang_size, 0) << "two at a time of eight";
  EXPECT_EQ(job_shape(job("u", "NonIndexed", 4, 4))->gang_size, 0);
  EXPECT_EQ(job_shape(job("u", "Indexed", 2000, 2000))->gang_size, 0) << "over kMaxGangSize";
  json no_completions = job("u", "Indexed", 4, 4);
  no_completions["spec"].erase("completions");
  EXPECT_EQ(job_shape(no_completions)->gang_size, 0);
  const JobShape s = *job_shape(job("u", "Indexed", 2, 2));
  EXPECT_EQ(s.uid, "u");
  EXPECT_EQ(s.ns, "a");
  EXPECT_EQ(s.name, "job-u");
  EXPECT_FALSE(s.finished);
  json done = job("u", "Indexed", 2, 2);
  done["status"]["conditions"] = json::array({{{"type", "Failed"}, {"status", "True"}}});
  EXPECT_TRUE(job_shape(done)->finished);
  done["status"]["conditions"][0]["type"] = "Suspended";
  EXPECT_FALSE(job_shape(done)->finished);
  EXPECT_TRUE(job_shape(job("u", "Indexed", 2, 8))->indexed) << "its items are indices";
  EXPECT_FALSE(job_shape(job("u", "NonIndexed", 2, 8))->indexed) << "its items are slots";
  EXPECT_FALSE(job_shape(json::object()));
  EXPECT_FALSE(job_shape(json::array()));
}

// The Job's UID in the keys of its jobs: the whole Job's, an index's, a slot's.
TEST(K8sJobs, KeysNameTheirJob) {
  EXPECT_EQ(job_uid_of_key("job:1f-2e"), "1f-2e");
  EXPECT_EQ(job_uid_of_key("job:1f-2e#12"), "1f-2e");
  EXPECT_EQ(job_uid_of_key("job:1f-2e~3"), "1f-2e");
  EXPECT_EQ(job_uid_of_key("gang:a/job:x"), "");
  EXPECT_EQ(job_uid_of_key("1f-2e"), "") << "a pod's own key";
}

// The index follows the informer's objects: a changed Job (a new object) is read again, a
// Job no longer listed is gone.
TEST(K8sJobs, IndexFollowsTheListedObjects) {
  JobIndex index;
  auto a = std::make_shared<const json>(job("a", "Indexed", 2, 2));
  auto b = std::make_shared<const json>(job("b", "NonIndexed", 2, 2));
  index.update({a, b, std::make_shared<const json>(json::object())});
  ASSERT_TRUE(index.find("a"));
  EXPECT_EQ(index.find("a")->gang_size, 2);
  EXPECT_EQ(index.find("b")->gang_size, 0);
  EXPECT_EQ(index.size(), 2u) << "an object without a uid is skipped";
  index.update({std::make_shared<const json>(job("a", "Indexed", 3, 3))});
  EXPECT_EQ(index.find("a")->gang_size, 3);
  EXPECT_FALSE(index.find("b"));
}

}  // namespace
}  // namespace ds::k8s
