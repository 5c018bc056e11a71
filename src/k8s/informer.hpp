// A local cache of one collection of the API (the informer of client-go, reduced to what
// `deepshare k8s run` needs): a ListWatcher (list, then watch with bookmarks, relist on 410,
// backoff) on a thread of its own keeps the objects by key; the scheduler's cycle takes a
// snapshot: shared pointers to the objects, which never change once stored (a change stores
// a new one), so that taking it costs a pointer per object and a reader can tell which
// objects changed since its last snapshot by their pointers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver/log.hpp"
#include "k8s/list_watch.hpp"
#include "k8s/wakeup.hpp"

namespace ds::k8s {

class Informer {
 public:
  // `path`: the collection ("/api/v1/pods"); objects are keyed by metadata.uid.
  Informer(Client& client, std::string path, driver::Log& log, ListWatchOptions options = {});
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;
  // `wakeup` is notified of every change the cache takes (set before start; it outlives this).
  void wake(Wakeup* wakeup) { wakeup_ = wakeup; }
  void start();
  // Waits until the first list arrived; false after `limit_s`.
  bool wait_synced(double limit_s) const;
  using Object = std::shared_ptr<const json>;
  // A copy of the objects, and how many changes the cache has taken so far.
  std::vector<json> items(std::uint64_t* changes = nullptr) const;
  // The objects as they are now, in key order, without copying them.
  std::vector<Object> snapshot() const;
  // How many changes the cache has taken so far (the count items() gives).
  [[nodiscard]] std::uint64_t changes() const;
  [[nodiscard]] ListWatchStats stats() const { return watcher_.stats(); }

 private:
  void sync(const json& list);
  void apply(const WatchEvent& e);
  driver::Log& log_;
  ListWatcher watcher_;
  mutable std::mutex mu_;
  std::map<std::string, Object> objects_;
  std::uint64_t changes_ = 0;
  bool synced_ = false;
  Wakeup* wakeup_ = nullptr;
  std::jthread thread_;
};

}  // namespace ds::k8s
