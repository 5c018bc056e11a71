// Keeps a local view of one collection in sync with the API server, as client-go's
// reflector does: list, then watch from the list's resourceVersion with bookmarks, and
// re-watch from the last version seen whenever a watch ends.
//
// - A watch the server closes (timeoutSeconds) is resumed at once from the last event's or
//   bookmark's resourceVersion: nothing is listed again, nothing is missed.
// - 410 Gone (that version is compacted away; as an HTTP status or a watch ERROR event):
//   list again at once, and hand the whole collection to on_sync, which replaces the view
//   (a second 410 in a row, with no event between, waits a backoff first).
// - Any other failure (no answer, 5xx, 429, a broken line): wait (Backoff), then resume the
//   watch from the last version seen; failures reach on_error for logs and metrics.
// Handlers run on the thread that called run(); run() returns once `stop` is requested.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>

#include "k8s/backoff.hpp"
#include "k8s/client.hpp"

namespace ds::k8s {

struct ListWatchOptions {
  std::string label_selector;
  std::string field_selector;
  int watch_timeout_seconds = 300;
  BackoffOptions backoff;
  // Start by watching from this resourceVersion (one kept across a restart) instead of
  // listing; a version too old for the server leads to a relist (410).
  std::string resume_from;
};

struct ListWatchStats {
  std::int64_t lists = 0;      // successful (re)lists
  std::int64_t watches = 0;    // watch requests that got an answer
  std::int64_t events = 0;     // ADDED/MODIFIED/DELETED handed on
  std::int64_t bookmarks = 0;  // BOOKMARK events (they only move the resourceVersion)
  std::int64_t gone = 0;       // 410 answers (each followed by a relist)
  std::int64_t errors = 0;     // other failures (each followed by a backoff)
};

class ListWatcher {
 public:
  struct Handlers {
    std::function<void(const json& list)> on_sync;          // after each (re)list: the whole List
    std::function<void(const WatchEvent& event)> on_event;  // ADDED/MODIFIED/DELETED
    std::function<void(const ApiError& error)> on_error;    // optional
  };
  ListWatcher(Client& client, std::string path, ListWatchOptions options, Handlers handlers);
  void run(std::stop_token stop);
  [[nodiscard]] ListWatchStats stats() const;
  [[nodiscard]] std::string resource_version() const;

 private:
  bool relist();
  enum class WatchOutcome { Ended, Gone, Failed };
  WatchOutcome watch_once(std::stop_token stop);
  void fail(const ApiError& e);
  void set_version(const std::string& rv);
  Client& client_;
  std::string path_;
  ListWatchOptions options_;
  Handlers handlers_;
  Backoff backoff_;
  mutable std::mutex mu_;  // guards version_ and stats_ (read from other threads)
  std::string version_;
  ListWatchStats stats_;
};

}  // namespace ds::k8s
