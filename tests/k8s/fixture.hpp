// What the tests against the real API server share (api_test.cpp, api_serial_test.cpp): a
// namespace of their own on the fixture's cluster (DS_K8S_BASE), pods for DeepShare, and a
// recorder of what a ListWatcher delivers. Without DS_K8S_BASE every test is skipped.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "k8s/api.hpp"
#include "k8s/client.hpp"
#include "k8s/list_watch.hpp"

namespace ds::k8s::test {

using namespace std::chrono_literals;

inline std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// Polls `pred` every 100 ms until it holds or `limit` passes (generous: a loaded machine).
inline bool eventually(const std::function<bool()>& pred, std::chrono::seconds limit = 90s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return pred();
}

// A value of the cluster's env.sh (start-cluster.sh): DS_K8S_ETCD, DS_K8S_API...
inline std::string cluster_env(const std::string& base, const std::string& key) {
  std::ifstream in(base + "/env.sh");
  const std::string prefix = "export " + key + "=";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  return "";
}

// Runs scripts/k8s/SCRIPT ARGS on the fixture's cluster; true when it exits 0.
inline bool cluster_script(const std::string& base, const std::string& script,
                           const std::string& args) {
  const std::string cmd = "BASE='" + base + "' '" DEEPSHARE_SOURCE_DIR "/scripts/k8s/" + script +
                          "' " + args + " >/dev/null";
  return std::system(cmd.c_str()) == 0;
}

inline std::string rv_of(const json& o) {
  return o["metadata"]["resourceVersion"].get<std::string>();
}

class KubeApi : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = env("DS_K8S_BASE");
    if (base_.empty()) GTEST_SKIP() << "no cluster: DS_K8S_BASE unset (ctest -L k8s starts one)";
    client_ = std::make_unique<Client>(load_kubeconfig(base_ + "/admin.kubeconfig"));
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    ns_ = "t-" + lower(info->name()).substr(0, 40) + "-" + std::to_string(::getpid());
    auto created =
        client_->post("/api/v1/namespaces",
                      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}});
    ASSERT_TRUE(created.ok()) << created.error().str();
    // Pods are refused until the serviceaccount controller made `default` (ServiceAccount
    // admission), as in any cluster.
    ASSERT_TRUE(eventually([&] { return client_->get(sa_path()).ok(); }));
  }
  void TearDown() override {
    if (client_ && !ns_.empty()) (void)client_->del("/api/v1/namespaces/" + ns_);
  }
  static std::string lower(std::string s) {
    for (auto& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return s;
  }
  [[nodiscard]] std::string sa_path() const {
    return "/api/v1/namespaces/" + ns_ + "/serviceaccounts/default";
  }
  [[nodiscard]] std::string node(int i) const {
    return cluster_env(base_, "DS_K8S_NODE_PREFIX") + std::to_string(i);
  }
  // A pod for DeepShare asking for `gpus`; with run_for, KWOK ends it that long after start.
  json pod(const std::string& name, int gpus, const std::string& run_for = "") const {
    json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns_}, {"labels", {{"app", "ds-test"}}}}},
              {"spec",
               {{"schedulerName", "deepshare"},
                {"terminationGracePeriodSeconds", 30},
                {"containers",
                 json::array({{{"name", "main"},
                               {"image", "registry.invalid/train:1"},
                               {"resources",
                                {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}}};
    if (!run_for.empty()) p["metadata"]["annotations"] = {{"deepshare.io/run-for", run_for}};
    return p;
  }
  Result<json> create(const json& p) { return client_->post(pods_path(ns_), p); }
  std::string phase(const std::string& name) {
    auto p = client_->get(pods_path(ns_, name));
    return p ? p->value("status", json::object()).value("phase", "") : "(" + p.error().str() + ")";
  }
  // The pod is gone from the API (404), not just marked for deletion.
  bool deleted(const std::string& name) {
    const auto p = client_->get(pods_path(ns_, name));
    return !p.ok() && p.error().not_found();
  }

  std::string base_;
  std::string ns_;
  std::unique_ptr<Client> client_;
};

// Collects what a ListWatcher delivers, for a test thread to wait on.
struct Seen {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<WatchEvent> events;
  std::vector<json> syncs;
  std::vector<ApiError> errors;
  std::map<std::string, json> view;  // name -> object: the last sync, then the events since
  ListWatcher::Handlers handlers() {
    return {[this](const json& l) {
              add([&] {
                syncs.push_back(l);
                view.clear();
                for (const auto& o : l["items"]) view[o["metadata"]["name"].get<std::string>()] = o;
              });
            },
            [this](const WatchEvent& e) {
              add([&] {
                events.push_back(e);
                const auto name = e.object["metadata"]["name"].get<std::string>();
                if (e.type == WatchEventType::Deleted) {
                  view.erase(name);
                } else {
                  view[name] = e.object;
                }
              });
            },
            [this](const ApiError& e) { add([&] { errors.push_back(e); }); }};
  }
  void add(const std::function<void()>& f) {
    {
      const std::lock_guard lock(mu);
      f();
    }
    cv.notify_all();
  }
  bool wait(const std::function<bool()>& pred, std::chrono::seconds limit = 90s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, limit, pred);
  }
  // An event of `type` about pod `name` for which `test(object)` holds.
  bool has(
      WatchEventType type, const std::string& name,
      const std::function<bool(const json&)>& test = [](const json&) { return true; }) {
    for (const auto& e : events)
      if (e.type == type && e.object["metadata"]["name"] == name && test(e.object)) return true;
    return false;
  }
};

}  // namespace ds::k8s::test
