// The Kubernetes client's parsing and bodies, without a server (the real API server's
// tests: tests/k8s, label k8s).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "k8s/backoff.hpp"
#include "k8s/errors.hpp"
#include "k8s/kubeconfig.hpp"
#include "k8s/objects.hpp"
#include "k8s/watch_stream.hpp"
#include "trace/trace_test_util.hpp"

namespace ds::k8s {
namespace {

using ds::testing::input_error;
using ds::testing::TempDir;  // a scratch folder for the files a kubeconfig names

// "-----BEGIN CERTIFICATE-----\nAAA\n" base64-encoded, so -data fields can be checked.
constexpr const char* kPemB64 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQQo=";
constexpr const char* kPem = "-----BEGIN CERTIFICATE-----\nAAA\n";

const char* kTwoContexts = R"(apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: ca.crt
- name: other
  cluster:
    server: https://10.1.2.3:443
    insecure-skip-tls-verify: true
users:
- name: alice
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQQo=
    client-key: keys/alice.key
- name: bot
  user:
    tokenFile: token
contexts:
- name: alice@test
  context: {cluster: test, user: alice, namespace: team-a}
- name: bot@other
  context: {cluster: other, user: bot}
current-context: alice@test
)";

TEST(Kubeconfig, ReadsCurrentContextWithFilesRelativeToItsFolderAndInlineData) {
  const TempDir dir;
  dir.write("ca.crt", "CA PEM");
  dir.write("keys/alice.key", "KEY PEM");
  const auto k = load_kubeconfig(dir.write("config", kTwoContexts));
  EXPECT_EQ(k.server, "https://127.0.0.1:6443");
  EXPECT_EQ(k.ca_pem, "CA PEM");
  EXPECT_EQ(k.client_cert_pem, kPem);
  EXPECT_EQ(k.client_key_pem, "KEY PEM");
  EXPECT_EQ(k.namespace_, "team-a");
  EXPECT_EQ(k.user, "alice");
  EXPECT_FALSE(k.insecure_skip_tls_verify);
}

TEST(Kubeconfig, ChosenContextTokenFileAndDefaultNamespace) {
  const TempDir dir;
  dir.write("token", "s3cret\n");
  const auto k = parse_kubeconfig(kTwoContexts, "cfg", dir.path(), "bot@other");
  EXPECT_EQ(k.server, "https://10.1.2.3:443");
  EXPECT_TRUE(k.insecure_skip_tls_verify);
  EXPECT_EQ(k.token, "s3cret");
  EXPECT_EQ(k.namespace_, "default");
  EXPECT_TRUE(k.client_cert_pem.empty());
}

TEST(Kubeconfig, ErrorsNameFileLineAndField) {
  const std::string base = "clusters:\n- name: c\n  cluster:\n    server: https://h:1\n";
  auto msg =
      input_error([&] { parse_kubeconfig(base + "current-context: nope\n", "k.yaml", "/"); });
  EXPECT_NE(msg.find("k.yaml:1:1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no entry 'nope' in 'contexts'"), std::string::npos) << msg;

  const std::string ctx =
      "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
  msg = input_error([&] {
    parse_kubeconfig(base + ctx + "users:\n- name: u\n  user:\n    exec: {command: evil}\n",
                     "k.yaml", "/");
  });
  EXPECT_NE(msg.find("k.yaml:12:11"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'users[u].user.exec': not supported"), std::string::npos) << msg;

  msg = input_error([&] {
    parse_kubeconfig(base + ctx + "users:\n- name: u\n  user:\n    client-key-data: '!!'\n",
                     "k.yaml", "/");
  });
  EXPECT_NE(msg.find("client-key-data': not valid base64"), std::string::npos) << msg;

  msg = input_error([&] {
    parse_kubeconfig(
        base + ctx + "users:\n- name: u\n  user:\n    client-certificate-data: " + kPemB64 + "\n",
        "k.yaml", "/");
  });
  EXPECT_NE(msg.find("client-certificate and client-key go together"), std::string::npos) << msg;

  msg = input_error([&] {
    parse_kubeconfig(base + ctx + "users:\n- name: u\n  user:\n    client-key: /no/such/key\n",
                     "k.yaml", "/");
  });
  EXPECT_NE(msg.find("cannot read file '/no/such/key'"), std::string::npos) << msg;

  msg = input_error([&] { parse_kubeconfig("clusters: [\n", "k.yaml", "/"); });
  EXPECT_NE(msg.find("k.yaml:"), std::string::npos) << msg;
  msg = input_error([&] {
    parse_kubeconfig("clusters:\n- name: c\n  cluster: {server: ftp://h}\n" + ctx, "k.yaml", "/");
  });
  EXPECT_NE(msg.find("expected https://HOST:PORT"), std::string::npos) << msg;
}

TEST(Kubeconfig, DefaultPathFromEnvironment) {
  ::setenv("KUBECONFIG", "/a/one:/b/two", 1);
  EXPECT_EQ(default_kubeconfig_path(), "/a/one");
  ::unsetenv("KUBECONFIG");
  ::setenv("HOME", "/home/x", 1);
  EXPECT_EQ(default_kubeconfig_path(), "/home/x/.kube/config");
}

const std::string kStream =
    R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"gpu-é","resourceVersion":"11"}}})"
    "\n"
    R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"15"}}})"
    "\r\n\n"
    R"J({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (15)","reason":"Expired","code":410}})J"
    "\n";

// Feeds kStream cut at the given offsets and returns the parsed events.
std::vector<WatchEvent> split_and_parse(const std::vector<std::size_t>& cuts) {
  LineSplitter s;
  std::vector<WatchEvent> out;
  std::size_t from = 0;
  auto feed = [&](std::size_t to) {
    EXPECT_TRUE(s.feed(std::string_view(kStream).substr(from, to - from), [&](std::string_view l) {
      auto ev = parse_watch_event(l);
      EXPECT_TRUE(ev.ok()) << (ev.ok() ? "" : ev.error().str());
      if (ev) out.push_back(ev.value());
      return true;
    }));
    from = to;
  };
  for (const auto c : cuts) feed(c);
  feed(kStream.size());
  EXPECT_EQ(s.pending(), 0U);
  return out;
}

TEST(WatchStream, EventsSplitAtEveryByteAreTheSame) {
  const auto whole = split_and_parse({});
  ASSERT_EQ(whole.size(), 3U);
  EXPECT_EQ(whole[0].type, WatchEventType::Added);
  EXPECT_EQ(whole[0].object["metadata"]["name"], "gpu-é");
  EXPECT_EQ(whole[0].resource_version(), "11");
  EXPECT_EQ(whole[1].type, WatchEventType::Bookmark);
  EXPECT_EQ(whole[1].resource_version(), "15");
  EXPECT_EQ(whole[2].type, WatchEventType::Error);
  // one cut anywhere (inside the UTF-8 'é', the "\r\n", the empty line), and a byte a chunk
  for (std::size_t cut = 1; cut < kStream.size(); ++cut) {
    const auto got = split_and_parse({cut});
    ASSERT_EQ(got.size(), 3U) << "cut at " << cut;
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_EQ(got[i].object, whole[i].object) << "cut at " << cut;
  }
  std::vector<std::size_t> every;
  for (std::size_t i = 1; i < kStream.size(); ++i) every.push_back(i);
  EXPECT_EQ(split_and_parse(every).size(), 3U);
}

TEST(WatchStream, ErrorEventIsTheStatusItCarries) {
  const auto events = split_and_parse({});
  const auto e = error_of(events[2], "/api/v1/pods");
  EXPECT_TRUE(e.gone());
  EXPECT_EQ(e.reason, "Expired");
  EXPECT_EQ(e.message, "too old resource version: 1 (15)");
  EXPECT_EQ(e.str(), "WATCH /api/v1/pods: 410 Expired: too old resource version: 1 (15)");
}

TEST(WatchStream, BadLinesAreDecodeErrors) {
  for (const char* line : {"not json", R"({"object":{}})", R"({"type":"ADDED"})",
                           R"({"type":"SOMETHING","object":{}})"}) {
    const auto ev = parse_watch_event(line);
    ASSERT_FALSE(ev.ok()) << line;
    EXPECT_EQ(ev.error().kind, ErrorKind::Decode);
    EXPECT_NE(ev.error().message.find("watch event '"), std::string::npos) << ev.error().message;
  }
}

TEST(WatchStream, TooLongLineAndEarlyStop) {
  LineSplitter small(8);
  EXPECT_TRUE(small.feed("12345", [](std::string_view) { return true; }));
  EXPECT_FALSE(small.feed("6789", [](std::string_view) { return true; }));
  LineSplitter s;
  int seen = 0;
  EXPECT_FALSE(s.feed("a\nb\nc\n", [&](std::string_view) { return ++seen < 2; }));
  EXPECT_EQ(seen, 2);
}

TEST(Status, ApiStatusObjectGivesReasonMessageAndRetry) {
  const auto e = status_error(
      429,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget"}],"retryAfterSeconds":7},"code":429})",
      "POST", "/api/v1/namespaces/a/pods/p/eviction");
  EXPECT_EQ(e.kind, ErrorKind::Api);
  EXPECT_EQ(e.http_status, 429);
  EXPECT_EQ(e.reason, "TooManyRequests");
  EXPECT_EQ(e.retry_after_seconds, 7);
  EXPECT_TRUE(e.retryable());
  EXPECT_FALSE(e.conflict());
  EXPECT_EQ(e.str(),
            "POST /api/v1/namespaces/a/pods/p/eviction: 429 TooManyRequests: Cannot evict pod as "
            "it would violate the pod's disruption budget.");
}

TEST(Status, PredicatesAndNonStatusBodies) {
  const auto conflict = status_error(
      409,
      R"({"kind":"Status","reason":"AlreadyExists","message":"pods \"x\" already exists","code":409})",
      "POST", "/p");
  EXPECT_TRUE(conflict.conflict());
  EXPECT_TRUE(conflict.already_exists());
  EXPECT_FALSE(conflict.retryable());
  EXPECT_TRUE(status_error(404, "{}", "GET", "/p").not_found());
  EXPECT_TRUE(status_error(403, "", "GET", "/p").forbidden());
  EXPECT_EQ(status_error(403, "", "GET", "/p").message, "(empty body)");
  EXPECT_TRUE(status_error(503, "<html>busy</html>", "GET", "/p").retryable());
  EXPECT_EQ(status_error(502, "<html>bad\ngateway</html>", "GET", "/p").message,
            "'<html>bad\\ngateway</html>'");
  ApiError t;
  t.kind = ErrorKind::Transport;
  t.method = "GET";
  t.path = "/x";
  t.message = "Connection refused";
  EXPECT_TRUE(t.retryable());
  EXPECT_FALSE(t.gone());
  EXPECT_EQ(t.str(), "GET /x: no answer: Connection refused");
}

TEST(Objects, PathsAndQueries) {
  EXPECT_EQ(pods_path("a", "p", "binding"), "/api/v1/namespaces/a/pods/p/binding");
  EXPECT_EQ(nodes_path(), "/api/v1/nodes");
  EXPECT_EQ(leases_path("kube-system", "deepshare"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/deepshare");
  EXPECT_EQ(query({{"labelSelector", "app in (a,b),!x"}, {"limit", ""}, {"watch", "1"}}),
            "?labelSelector=app%20in%20%28a%2Cb%29%2C%21x&watch=1");
  EXPECT_EQ(query({}), "");
  EXPECT_EQ(url_encode("spec.schedulerName=deepshare"), "spec.schedulerName%3Ddeepshare");
}

TEST(Objects, BodiesAsTheApiDefinesThem) {
  using std::chrono::microseconds;
  const std::chrono::system_clock::time_point t(microseconds(1764618000123456LL));
  EXPECT_EQ(micro_time(t), "2025-12-01T19:40:00.123456Z");
  EXPECT_EQ(
      binding("p", "n1").dump(),
      R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"apiVersion":"v1","kind":"Node","name":"n1"}})");
  EXPECT_EQ(binding("p", "n1", {{"deepshare.io/gpus", "n1:0"}})["metadata"]["annotations"],
            json({{"deepshare.io/gpus", "n1:0"}}));
  EXPECT_EQ(eviction("a", "p", 5)["deleteOptions"]["gracePeriodSeconds"], 5);
  EXPECT_FALSE(eviction("a", "p", std::nullopt).contains("deleteOptions"));
  LeaseSpec s{"me", 15, t, t, 3};
  const auto l = lease("kube-system", "ds", s, "42");
  EXPECT_EQ(l["metadata"]["resourceVersion"], "42");
  EXPECT_EQ(l["spec"]["renewTime"], "2025-12-01T19:40:00.123456Z");
  EXPECT_EQ(l["spec"]["leaseTransitions"], 3);
  EXPECT_FALSE(lease("kube-system", "ds", s)["metadata"].contains("resourceVersion"));
  EventSpec e;
  e.regarding = {{"kind", "Pod"}, {"namespace", "a"}, {"name", "p"}};
  e.type = "Warning";
  e.reason = "FailedScheduling";
  e.time = t;
  const auto ev = event(e);
  EXPECT_EQ(ev["metadata"]["namespace"], "a");
  EXPECT_EQ(ev["metadata"]["name"].get<std::string>().rfind("p.", 0), 0U);
  EXPECT_EQ(ev["reportingController"], "deepshare");
  EXPECT_EQ(events_path("a"), "/apis/events.k8s.io/v1/namespaces/a/events");
}

TEST(Backoff, DoublesToTheCapWithBoundedJitterAndResets) {
  Backoff b({std::chrono::milliseconds(100), std::chrono::milliseconds(1000), 7});
  const std::vector<long> caps = {100, 200, 400, 800, 1000, 1000};
  for (const long cap : caps) {
    EXPECT_EQ(b.ceiling().count(), cap);
    const auto w = b.next().count();
    EXPECT_GE(w, cap / 2);
    EXPECT_LE(w, cap);
  }
  EXPECT_EQ(b.failures(), 6);
  b.reset();
  EXPECT_EQ(b.ceiling().count(), 100);
  Backoff x({std::chrono::milliseconds(100), std::chrono::milliseconds(1000), 7});
  Backoff y({std::chrono::milliseconds(100), std::chrono::milliseconds(1000), 7});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(x.next(), y.next());
}

}  // namespace
}  // namespace ds::k8s
