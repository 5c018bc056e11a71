// The client across an API server restart (label k8s, RUN_SERIAL: the restart takes the
// fixture's API server away from every other test for ~20 s). A ListWatcher that loses its
// server mid-watch backs off, comes back, and (its version now older than the new watch
// cache: 410) relists: its view holds every pod, the one created during its outage too.
#include "fixture.hpp"

namespace ds::k8s::test {
namespace {

TEST_F(KubeApi, WatcherSurvivesAnApiServerRestart) {
  ASSERT_TRUE(create(pod("before", 1)).ok());
  Seen seen;
  ListWatchOptions o;
  o.backoff = {std::chrono::milliseconds(200), std::chrono::milliseconds(2000), 1};
  ListWatcher watcher(*client_, pods_path(ns_), o, seen.handlers());
  std::jthread t([&](std::stop_token st) { watcher.run(st); });
  ASSERT_TRUE(seen.wait([&] { return seen.view.count("before") == 1; }));

  ASSERT_TRUE(cluster_script(base_, "component.sh", "restart kube-apiserver --wait"));
  ASSERT_TRUE(create(pod("after", 1)).ok());  // perhaps before the watcher is back
  EXPECT_TRUE(seen.wait([&] { return seen.view.count("after") == 1; }));
  {
    const std::lock_guard lock(seen.mu);
    EXPECT_EQ(seen.view.size(), 2U);
    EXPECT_EQ(seen.view.count("before"), 1U);
    ASSERT_FALSE(seen.errors.empty());  // the outage was seen, not hidden
  }
  t.request_stop();
  t.join();
  const auto s = watcher.stats();
  EXPECT_GE(s.errors + s.gone, 1);
  EXPECT_GE(s.lists, 1);
}

}  // namespace
}  // namespace ds::k8s::test
