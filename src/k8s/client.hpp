// A thin client of the Kubernetes REST API: JSON in, JSON out, typed errors, no globals.
//
// Paths are the API's own ("/api/v1/namespaces/a/pods", "/apis/coordination.k8s.io/v1/...";
// objects.hpp builds them). A 2xx answer is parsed as JSON; anything else is an ApiError with
// the API's Status message. Nothing is retried here: callers (ListWatcher, the driver) decide,
// using ApiError::retryable() and Backoff. Thread-safe: requests are serialized on one
// keep-alive connection; each watch has a connection of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>

#include "k8s/errors.hpp"
#include "k8s/kubeconfig.hpp"
#include "k8s/transport.hpp"
#include "k8s/watch_stream.hpp"

namespace ds::k8s {

using nlohmann::json;

enum class PatchType {
  Merge,      // application/merge-patch+json (RFC 7386)
  Strategic,  // application/strategic-merge-patch+json (built-in types only)
  Json,       // application/json-patch+json (RFC 6902; a list of operations)
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;        // "" = most recent (a quorum read)
  std::string resource_version_match;  // "", "NotOlderThan" or "Exact"
  std::int64_t page_size = 500;        // list() follows `continue` until the last page
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // start after this version ("" = from now on)
  bool allow_bookmarks = true;
  int timeout_seconds = 300;  // the server ends the watch after this; the caller re-watches
};

// How one watch request ended, when it did not fail.
struct WatchEnd {
  std::string resource_version;  // of the last event or bookmark seen ("" if none)
  std::int64_t events = 0;       // ADDED/MODIFIED/DELETED seen
  std::int64_t bookmarks = 0;
  bool stopped = false;  // the handler returned false
};

class Client {
 public:
  explicit Client(Kubeconfig config, TransportOptions options = {});

  Result<json> get(const std::string& path);
  Result<json> post(const std::string& path, const json& body);
  Result<json> put(const std::string& path, const json& body);
  Result<json> patch(const std::string& path, const json& body, PatchType type);
  // DELETE with an optional DeleteOptions body (gracePeriodSeconds, preconditions...).
  Result<json> del(const std::string& path, const json& options = nullptr);
  // All pages of a list, as one List object: items (every page's) and metadata
  // .resourceVersion (the first page's: a consistent snapshot, as the API defines paging).
  Result<json> list(const std::string& path, const ListOptions& options = {});
  // One watch request. Every event goes to on_event (return false to end the watch); an
  // ERROR event ends it with the Status it carries (gone() for 410). Ends normally when
  // the server closes it (timeout_seconds) or on stop.
  Result<WatchEnd> watch(const std::string& path, const WatchOptions& options,
                         const std::function<bool(const WatchEvent&)>& on_event,
                         std::stop_token stop = {});
  [[nodiscard]] const Kubeconfig& config() const { return transport_.config(); }

 private:
  Result<json> call(const char* method, const std::string& path, const json* body,
                    const char* content_type);
  Transport transport_;
};

}  // namespace ds::k8s
