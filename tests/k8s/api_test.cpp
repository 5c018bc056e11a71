// The Kubernetes client against the REAL API server of scripts/k8s/start-cluster.sh (the
// CTest fixture k8s_cluster; label k8s): pods bound to KWOK nodes, list and watch, patches,
// resume after a bookmark, relist after 410 (etcd compacted), Eviction, Lease conflicts, Events, an
// unprivileged user's refusal, stop and transport errors. Each test works in a namespace of its
// own, so these run in parallel on one cluster (an API server restart: api_serial_test.cpp).
#include <algorithm>
#include <atomic>

#include "fixture.hpp"

namespace ds::k8s::test {
namespace {

TEST_F(KubeApi, CreateListWatchAndBindPodToKwokNode) {
  ASSERT_TRUE(create(pod("p1", 2, "2s")).ok());
  ListOptions pending;
  pending.field_selector = "spec.schedulerName=deepshare,spec.nodeName=";
  auto list = client_->list(pods_path(ns_), pending);
  ASSERT_TRUE(list.ok()) << list.error().str();
  ASSERT_EQ((*list)["items"].size(), 1U);
  EXPECT_EQ((*list)["items"][0]["metadata"]["name"], "p1");
  EXPECT_FALSE(rv_of(*list).empty());

  Seen seen;
  ListWatcher watcher(*client_, pods_path(ns_), {}, seen.handlers());
  std::jthread t([&](std::stop_token st) { watcher.run(st); });
  ASSERT_TRUE(seen.wait([&] { return !seen.syncs.empty(); }));

  auto bound = bind_pod(*client_, ns_, "p1", node(1));
  ASSERT_TRUE(bound.ok()) << bound.error().str();
  const auto twice = bind_pod(*client_, ns_, "p1", node(2));
  ASSERT_FALSE(twice.ok());
  EXPECT_TRUE(twice.error().conflict()) << twice.error().str();
  EXPECT_NE(twice.error().message.find("already assigned to node \"" + node(1) + "\""),
            std::string::npos)
      << twice.error().str();

  // KWOK plays the kubelet: Running, then Succeeded once deepshare.io/run-for elapsed.
  const auto on_node = [&](const json& o) { return o["spec"].value("nodeName", "") == node(1); };
  const auto in_phase = [](const char* ph) {
    return
        [ph](const json& o) { return o.value("status", json::object()).value("phase", "") == ph; };
  };
  EXPECT_TRUE(seen.wait([&] { return seen.has(WatchEventType::Modified, "p1", on_node); }));
  EXPECT_TRUE(
      seen.wait([&] { return seen.has(WatchEventType::Modified, "p1", in_phase("Running")); }));
  EXPECT_TRUE(
      seen.wait([&] { return seen.has(WatchEventType::Modified, "p1", in_phase("Succeeded")); }));
  EXPECT_EQ(phase("p1"), "Succeeded");
  t.request_stop();
  t.join();
  EXPECT_GE(watcher.stats().events, 3);
  EXPECT_EQ(watcher.stats().lists, 1);

  const auto dup = create(pod("p1", 1));
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(dup.error().already_exists()) << dup.error().str();
}

TEST_F(KubeApi, PatchesMergeStrategicAndJson) {
  ASSERT_TRUE(create(pod("p", 1)).ok());
  const auto path = pods_path(ns_, "p");
  ASSERT_TRUE(
      client_->patch(path, {{"metadata", {{"labels", {{"tier", "a"}}}}}}, PatchType::Merge).ok());
  ASSERT_TRUE(
      client_->patch(path, {{"metadata", {{"annotations", {{"x", "1"}}}}}}, PatchType::Strategic)
          .ok());
  auto j = client_->patch(
      path, json::array({{{"op", "add"}, {"path", "/metadata/labels/tier2"}, {"value", "b"}}}),
      PatchType::Json);
  ASSERT_TRUE(j.ok()) << j.error().str();
  EXPECT_EQ((*j)["metadata"]["labels"]["tier"], "a");
  EXPECT_EQ((*j)["metadata"]["labels"]["tier2"], "b");
  EXPECT_EQ((*j)["metadata"]["annotations"]["x"], "1");
  // A JSON patch test that fails is the API's 422 with its reason, not a transport error.
  const auto bad = client_->patch(
      path, json::array({{{"op", "test"}, {"path", "/metadata/name"}, {"value", "q"}}}),
      PatchType::Json);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::Api);
  EXPECT_FALSE(bad.error().message.empty());
  // The spec of a pod is immutable but for a few fields: the API says so.
  const auto immutable =
      client_->patch(path, {{"spec", {{"schedulerName", "default-scheduler"}}}}, PatchType::Merge);
  ASSERT_FALSE(immutable.ok());
  EXPECT_TRUE(immutable.error().invalid()) << immutable.error().str();
  EXPECT_NE(immutable.error().message.find("Forbidden"), std::string::npos)
      << immutable.error().str();
}

// A bookmark moves a watcher's resourceVersion past changes it does not watch: the API
// server's watch cache sends one at the watch's timeout when something it does not pass on
// (here: a pod outside the label selector) changed while the watch was open.
TEST_F(KubeApi, WatchResumesAfterABookmark) {
  const auto watched = [&](const std::string& name) {
    auto p = pod(name, 1);
    p["metadata"]["labels"]["tier"] = "watched";
    return p;
  };
  ASSERT_TRUE(create(watched("before")).ok());
  ASSERT_TRUE(create(pod("noise", 1)).ok());
  WatchOptions w;
  w.label_selector = "tier=watched";
  w.timeout_seconds = 5;
  ListOptions lo;
  lo.label_selector = w.label_selector;
  auto list = client_->list(pods_path(ns_), lo);
  ASSERT_TRUE(list.ok());
  w.resource_version = rv_of(*list);
  std::string bookmark;
  int others = 0;
  std::atomic<long long> noise_rv{0};
  std::jthread noise([&](std::stop_token st) {  // unwatched changes while the watch is open
    for (int i = 0; !st.stop_requested(); ++i) {
      auto p = client_->patch(pods_path(ns_, "noise"),
                              {{"metadata", {{"annotations", {{"n", std::to_string(i)}}}}}},
                              PatchType::Merge);
      if (p.ok()) noise_rv = std::stoll(rv_of(*p));
      std::this_thread::sleep_for(300ms);
    }
  });
  auto end = client_->watch(pods_path(ns_), w, [&](const WatchEvent& e) {
    if (e.type == WatchEventType::Bookmark) {
      bookmark = e.resource_version();
    } else {
      ++others;
    }
    return true;
  });
  noise.request_stop();
  noise.join();
  ASSERT_TRUE(end.ok()) << end.error().str();
  ASSERT_FALSE(bookmark.empty()) << "no bookmark within the watch's 5 s";
  EXPECT_GE(end->bookmarks, 1);
  EXPECT_EQ(others, 0);  // "before" is older than the list, "noise" is not watched
  EXPECT_GT(std::stoll(bookmark), std::stoll(w.resource_version));
  EXPECT_LE(std::stoll(bookmark), noise_rv.load());
  // Created after that watch ended: a watch from the bookmark sees it, and nothing older.
  ASSERT_TRUE(create(watched("after")).ok());
  w.resource_version = bookmark;
  std::vector<std::string> names;
  end = client_->watch(pods_path(ns_), w, [&](const WatchEvent& e) {
    if (e.type != WatchEventType::Bookmark)
      names.push_back(e.object["metadata"]["name"].get<std::string>());
    return e.type == WatchEventType::Bookmark;  // stop at the first real event
  });
  ASSERT_TRUE(end.ok()) << end.error().str();
  EXPECT_TRUE(end->stopped);
  EXPECT_EQ(names, std::vector<std::string>{"after"});
}

// Compacts etcd's history up to its current revision, through etcd's JSON gateway (what
// the API server itself does every 5 minutes).
void compact_etcd(const std::string& base) {
  Kubeconfig k;
  k.server = cluster_env(base, "DS_K8S_ETCD");
  ASSERT_FALSE(k.server.empty());
  Transport etcd(k, {});
  HttpRequest r;
  r.method = "POST";
  r.target = "/v3/kv/range";
  r.body = R"({"key":"AA==","range_end":"AA==","limit":1,"keys_only":true})";
  auto head = etcd.send(r);
  ASSERT_TRUE(head.ok()) << head.error().str();
  const auto rev = json::parse(head->body)["header"]["revision"].get<std::string>();
  r.target = "/v3/kv/compaction";
  r.body = json{{"revision", rev}, {"physical", true}}.dump();
  auto done = etcd.send(r);
  ASSERT_TRUE(done.ok() && done->status == 200) << (done.ok() ? done->body : done.error().str());
}

// Events are one resource the API server keeps no watch cache for, so a watch of them reads
// etcd's history: after a compaction, an old resourceVersion is 410 Gone (for pods the
// same happens once the watch cache moved on: api_serial_test.cpp).
TEST_F(KubeApi, CompactedVersionIsGoneAndTheWatcherRelists) {
  const auto note = [&](const std::string& name) {
    EventSpec e;
    e.regarding = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"namespace", ns_}, {"name", name}};
    e.type = "Normal";
    e.reason = "Test";
    e.action = "Testing";
    e.note = name;
    e.time = std::chrono::system_clock::now();
    return create_event(*client_, e);
  };
  ASSERT_TRUE(note("a").ok());
  auto list = client_->list(events_path(ns_));
  ASSERT_TRUE(list.ok()) << list.error().str();
  const auto old = rv_of(*list);
  ASSERT_TRUE(note("b").ok());
  ASSERT_TRUE(note("c").ok());
  compact_etcd(base_);
  WatchOptions w;
  w.resource_version = old;
  w.timeout_seconds = 30;
  const auto stale = client_->watch(events_path(ns_), w, [](const WatchEvent&) { return true; });
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(stale.error().gone()) << stale.error().str();
  EXPECT_EQ(stale.error().reason, "Expired");

  Seen seen;
  ListWatchOptions o;
  o.resume_from = old;  // as if restarted with a version kept from before the compaction
  ListWatcher watcher(*client_, events_path(ns_), o, seen.handlers());
  std::jthread t([&](std::stop_token st) { watcher.run(st); });
  ASSERT_TRUE(seen.wait([&] { return !seen.syncs.empty(); }));
  {
    const std::lock_guard lock(seen.mu);
    EXPECT_EQ(seen.syncs[0]["items"].size(), 3U);  // the whole collection, relisted
    ASSERT_FALSE(seen.errors.empty());
    EXPECT_TRUE(seen.errors[0].gone()) << seen.errors[0].str();
  }
  ASSERT_TRUE(note("d").ok());
  EXPECT_TRUE(seen.wait([&] {
    for (const auto& e : seen.events)
      if (e.type == WatchEventType::Added && e.object.value("note", "") == "d") return true;
    return false;
  }));
  t.request_stop();
  t.join();
  EXPECT_EQ(watcher.stats().gone, 1);
  EXPECT_EQ(watcher.stats().lists, 1);
  EXPECT_EQ(watcher.stats().errors, 0);
}

TEST_F(KubeApi, EvictionDeletesWithTheGracePeriodAndRefusalsAreTyped) {
  ASSERT_TRUE(create(pod("victim", 1)).ok());
  ASSERT_TRUE(bind_pod(*client_, ns_, "victim", node(2)).ok());
  ASSERT_TRUE(eventually([&] { return phase("victim") == "Running"; })) << phase("victim");
  auto ev = evict_pod(*client_, ns_, "victim", 3);
  ASSERT_TRUE(ev.ok()) << ev.error().str();
  auto p = client_->get(pods_path(ns_, "victim"));
  // Until KWOK (the kubelet) confirms, the pod is still there, marked for deletion.
  if (p.ok()) {
    EXPECT_TRUE(p->at("metadata").contains("deletionTimestamp"));
    EXPECT_EQ(p->at("metadata").value("deletionGracePeriodSeconds", 0), 3);
  }
  EXPECT_TRUE(eventually([&] { return deleted("victim"); }));
  const auto again = evict_pod(*client_, ns_, "victim", 3);
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().not_found()) << again.error().str();

  // A PodDisruptionBudget that allows no disruption: the API refuses with 429 and says why.
  ASSERT_TRUE(create(pod("guarded", 1)).ok());
  ASSERT_TRUE(bind_pod(*client_, ns_, "guarded", node(2)).ok());
  // A Pending pod may be evicted whatever its budget says; only a running one is guarded.
  ASSERT_TRUE(eventually([&] { return phase("guarded") == "Running"; })) << phase("guarded");
  const json pdb = {
      {"apiVersion", "policy/v1"},
      {"kind", "PodDisruptionBudget"},
      {"metadata", {{"name", "keep"}, {"namespace", ns_}}},
      {"spec", {{"maxUnavailable", 0}, {"selector", {{"matchLabels", {{"app", "ds-test"}}}}}}}};
  ASSERT_TRUE(
      client_->post("/apis/policy/v1/namespaces/" + ns_ + "/poddisruptionbudgets", pdb).ok());
  const auto refused = evict_pod(*client_, ns_, "guarded", 3);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().http_status, 429) << refused.error().str();
  EXPECT_TRUE(refused.error().retryable());
  EXPECT_NE(refused.error().message.find("disruption budget"), std::string::npos)
      << refused.error().str();
  EXPECT_TRUE(client_->get(pods_path(ns_, "guarded")).ok());
}

TEST_F(KubeApi, LeaseRenewalAndConflictingWriter) {
  const auto now = std::chrono::system_clock::now();
  LeaseSpec mine{"deepshare-a", 15, now, now, 0};
  auto created = create_lease(*client_, ns_, "deepshare", mine);
  ASSERT_TRUE(created.ok()) << created.error().str();
  const auto rv0 = rv_of(*created);
  const auto again = create_lease(*client_, ns_, "deepshare", mine);
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.error().already_exists()) << again.error().str();

  mine.renew_time = now + 2s;
  auto renewed = update_lease(*client_, ns_, "deepshare", mine, rv0);
  ASSERT_TRUE(renewed.ok()) << renewed.error().str();
  EXPECT_NE(rv_of(*renewed), rv0);
  // A second writer still holding the old version loses: 409 Conflict, the lease unchanged.
  LeaseSpec theirs{"deepshare-b", 15, now, now + 3s, 1};
  const auto stale = update_lease(*client_, ns_, "deepshare", theirs, rv0);
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(stale.error().conflict()) << stale.error().str();
  EXPECT_EQ(stale.error().reason, "Conflict");
  EXPECT_NE(stale.error().message.find("the object has been modified"), std::string::npos)
      << stale.error().str();
  auto now_held = client_->get(leases_path(ns_, "deepshare"));
  ASSERT_TRUE(now_held.ok());
  EXPECT_EQ((*now_held)["spec"]["holderIdentity"], "deepshare-a");
}

TEST_F(KubeApi, EventsAreRecordedForThePod) {
  auto p = create(pod("waiting", 64));
  ASSERT_TRUE(p.ok());
  EventSpec e;
  e.regarding = {{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"namespace", ns_},
                 {"name", "waiting"},
                 {"uid", (*p)["metadata"]["uid"]}};
  e.type = "Warning";
  e.reason = "FailedScheduling";
  e.action = "Scheduling";
  e.note = "0/4 nodes have 64 free GPUs";
  e.time = std::chrono::system_clock::now();
  auto made = create_event(*client_, e);
  ASSERT_TRUE(made.ok()) << made.error().str();
  auto core = client_->list("/api/v1/namespaces/" + ns_ + "/events");  // as kubectl describe reads
  ASSERT_TRUE(core.ok());
  bool found = false;
  for (const auto& item : (*core)["items"])
    found = found || (item.value("reason", "") == "FailedScheduling" &&
                      item["involvedObject"].value("name", "") == "waiting" &&
                      item.value("message", "") == e.note);
  EXPECT_TRUE(found) << core->dump();
}

TEST_F(KubeApi, UnprivilegedUserIsRefusedWithTheApisReason) {
  const std::string user = "u" + std::to_string(::getpid());
  ASSERT_TRUE(cluster_script(base_, "add-user.sh", user + " tenant-alpha"));
  Client as_user(load_kubeconfig(base_ + "/users/" + user + ".kubeconfig"));
  const auto l = as_user.list(pods_path(ns_));
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(l.error().forbidden()) << l.error().str();
  EXPECT_NE(l.error().message.find("User \"" + user + "\" cannot list resource \"pods\""),
            std::string::npos)
      << l.error().str();
  const auto b = bind_pod(as_user, ns_, "x", node(1));
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(b.error().forbidden()) << b.error().str();
  // Who the API server thinks the user is: the certificate's CN and O.
  auto review =
      as_user.post("/apis/authentication.k8s.io/v1/selfsubjectreviews",
                   {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}});
  ASSERT_TRUE(review.ok()) << review.error().str();
  EXPECT_EQ((*review)["status"]["userInfo"]["username"], user);
  const auto groups = (*review)["status"]["userInfo"]["groups"];
  EXPECT_NE(std::find(groups.begin(), groups.end(), "tenant-alpha"), groups.end()) << groups.dump();
}

TEST_F(KubeApi, StopEndsAWatchAndNoServerIsATransportError) {
  std::jthread t([&](std::stop_token st) {
    WatchOptions w;
    w.timeout_seconds = 600;
    const auto end = client_->watch(
        pods_path(ns_), w, [](const WatchEvent&) { return true; }, st);
    EXPECT_FALSE(end.ok());
    if (!end.ok()) {
      EXPECT_EQ(end.error().kind, ErrorKind::Stopped) << end.error().str();
    }
  });
  std::this_thread::sleep_for(500ms);
  t.request_stop();
  t.join();  // returns within about a second (curl's progress callback)

  auto k = client_->config();
  k.server = "https://127.0.0.1:1";  // nothing listens there
  Client nowhere(k, {std::chrono::milliseconds(2000), std::chrono::milliseconds(5000), "test"});
  const auto r = nowhere.get("/version");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::Transport);
  EXPECT_TRUE(r.error().retryable());
  // The server's certificate is checked: without our CA, the system's CAs refuse it.
  auto untrusted = client_->config();
  untrusted.ca_pem.clear();
  Client wary(untrusted);
  const auto w = wary.get("/version");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().kind, ErrorKind::Transport);
  EXPECT_NE(w.error().message.find("certificate"), std::string::npos) << w.error().str();
}

}  // namespace
}  // namespace ds::k8s::test
