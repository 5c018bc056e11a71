// A local cache of one collection of the API (informer.hpp).
#include "k8s/informer.hpp"

#include <chrono>

namespace ds::k8s {
namespace {

std::string key_of(const json& o) {
  const auto m = o.find("metadata");
  if (m == o.end() || !m->is_object()) return "";
  return m->value("uid", "");
}

}  // namespace

Informer::Informer(Client& client, std::string path, driver::Log& log, ListWatchOptions options)
    : log_(log),
      watcher_(client, std::move(path), std::move(options),
               {[this](const json& list) { sync(list); }, [this](const WatchEvent& e) { apply(e); },
                [this](const ApiError& e) {
                  log_.warn("watch_failed", {{"error", e.str()}});
                }}) {}

Informer::~Informer() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

void Informer::start() {
  thread_ = std::jthread([this](std::stop_token st) { watcher_.run(st); });
}

bool Informer::wait_synced(double limit_s) const {
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(static_cast<long>(limit_s * 1000));
  while (std::chrono::steady_clock::now() < end) {
    {
      const std::lock_guard lock(mu_);
      if (synced_) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void Informer::sync(const json& list) {
  std::map<std::string, Object> fresh;
  for (const auto& o : list.value("items", json::array()))
    if (auto k = key_of(o); !k.empty()) fresh[k] = std::make_shared<const json>(o);
  {
    const std::lock_guard lock(mu_);
    objects_.swap(fresh);
    ++changes_;
    synced_ = true;
  }
  if (wakeup_) wakeup_->notify();
}

void Informer::apply(const WatchEvent& e) {
  const std::string k = key_of(e.object);
  if (k.empty()) return;
  auto object =
      e.type == WatchEventType::Deleted ? nullptr : std::make_shared<const json>(e.object);
  {
    const std::lock_guard lock(mu_);
    if (object)
      objects_[k] = std::move(object);
    else
      objects_.erase(k);
    ++changes_;
  }
  if (wakeup_) wakeup_->notify();
}

std::vector<json> Informer::items(std::uint64_t* changes) const {
  const std::lock_guard lock(mu_);
  std::vector<json> out;
  out.reserve(objects_.size());
  for (const auto& [k, o] : objects_) out.push_back(*o);
  if (changes) *changes = changes_;
  return out;
}

std::uint64_t Informer::changes() const {
  const std::lock_guard lock(mu_);
  return changes_;
}

std::vector<Informer::Object> Informer::snapshot() const {
  const std::lock_guard lock(mu_);
  std::vector<Object> out;
  out.reserve(objects_.size());
  for (const auto& [k, o] : objects_) out.push_back(o);
  return out;
}

}  // namespace ds::k8s
