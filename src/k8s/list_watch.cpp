#include "k8s/list_watch.hpp"

#include <condition_variable>

namespace ds::k8s {
namespace {

// Sleeps `d`, or less when `stop` is requested.
void pause(std::stop_token stop, std::chrono::milliseconds d) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait_for(lock, stop, d, [] { return false; });
}

}  // namespace

ListWatcher::ListWatcher(Client& client, std::string path, ListWatchOptions options,
                         Handlers handlers)
    : client_(client),
      path_(std::move(path)),
      options_(std::move(options)),
      handlers_(std::move(handlers)),
      backoff_(options_.backoff),
      version_(options_.resume_from) {}

ListWatchStats ListWatcher::stats() const {
  const std::lock_guard lock(mu_);
  return stats_;
}

std::string ListWatcher::resource_version() const {
  const std::lock_guard lock(mu_);
  return version_;
}

void ListWatcher::set_version(const std::string& rv) {
  const std::lock_guard lock(mu_);
  version_ = rv;
}

void ListWatcher::fail(const ApiError& e) {
  {
    const std::lock_guard lock(mu_);
    ++stats_.errors;
  }
  if (handlers_.on_error) handlers_.on_error(e);
}

bool ListWatcher::relist() {
  ListOptions o;
  o.label_selector = options_.label_selector;
  o.field_selector = options_.field_selector;
  auto list = client_.list(path_, o);
  if (!list) {
    fail(list.error());
    return false;
  }
  const auto& meta = list->contains("metadata") ? (*list)["metadata"] : json::object();
  set_version(meta.value("resourceVersion", ""));
  {
    const std::lock_guard lock(mu_);
    ++stats_.lists;
  }
  if (handlers_.on_sync) handlers_.on_sync(list.value());
  return true;
}

// One watch from the current version.
ListWatcher::WatchOutcome ListWatcher::watch_once(std::stop_token stop) {
  WatchOptions w;
  w.label_selector = options_.label_selector;
  w.field_selector = options_.field_selector;
  w.resource_version = resource_version();
  w.allow_bookmarks = true;
  w.timeout_seconds = options_.watch_timeout_seconds;
  auto end = client_.watch(
      path_, w,
      [&](const WatchEvent& ev) {
        if (const auto rv = ev.resource_version(); !rv.empty()) set_version(rv);
        const bool bookmark = ev.type == WatchEventType::Bookmark;
        {
          const std::lock_guard lock(mu_);
          ++(bookmark ? stats_.bookmarks : stats_.events);
        }
        if (!bookmark && handlers_.on_event) handlers_.on_event(ev);
        return true;
      },
      stop);
  if (end || end.error().kind != ErrorKind::Stopped) {
    const std::lock_guard lock(mu_);
    ++stats_.watches;
  }
  if (end || end.error().kind == ErrorKind::Stopped) return WatchOutcome::Ended;
  if (end.error().gone()) {
    {
      const std::lock_guard lock(mu_);
      ++stats_.gone;
    }
    if (handlers_.on_error) handlers_.on_error(end.error());
    return WatchOutcome::Gone;
  }
  fail(end.error());
  return WatchOutcome::Failed;
}

void ListWatcher::run(std::stop_token stop) {
  bool need_list = options_.resume_from.empty();
  int gone_in_a_row = 0;
  while (!stop.stop_requested()) {
    if (need_list) {
      if (!relist()) {
        pause(stop, backoff_.next());
        continue;
      }
      need_list = false;
    }
    const auto events_before = stats().events;
    switch (watch_once(stop)) {
      case WatchOutcome::Ended:
        backoff_.reset();
        gone_in_a_row = 0;
        break;
      case WatchOutcome::Gone:
        // The server is fine, our version is too old: relist now, unless that just happened.
        gone_in_a_row = stats().events > events_before ? 1 : gone_in_a_row + 1;
        if (gone_in_a_row > 1) pause(stop, backoff_.next());
        need_list = true;
        break;
      case WatchOutcome::Failed:
        pause(stop, backoff_.next());
        break;
    }
  }
}

}  // namespace ds::k8s
