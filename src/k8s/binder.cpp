// Pods bound beside the scheduling loop (binder.hpp).
#include "k8s/binder.hpp"

#include "k8s/api.hpp"
#include "k8s/client.hpp"

namespace ds::k8s {

Binder::Binder(const Kubeconfig& config, int workers) {
  for (int i = 0; i < workers; ++i)
    workers_.emplace_back([this, config](std::stop_token stop) { work(config, stop); });
}

Binder::~Binder() {
  for (auto& w : workers_) w.request_stop();
  ready_.notify_all();
  workers_.clear();  // joins
}

void Binder::submit(BindRequest r) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(r));
    ++in_flight_;
  }
  ready_.notify_one();
}

std::vector<BindOutcome> Binder::take_outcomes() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<BindOutcome> out;
  out.swap(done_);
  in_flight_ -= out.size();
  return out;
}

std::size_t Binder::drop_queued() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::size_t n = queue_.size();
  queue_.clear();
  in_flight_ -= n;
  return n;
}

std::size_t Binder::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

bool Binder::wait_done(int limit_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return done_cv_.wait_for(lock, std::chrono::milliseconds(limit_ms),
                           [&] { return done_.size() == in_flight_; });
}

void Binder::work(const Kubeconfig& config, std::stop_token stop) {
  Client client(config);
  for (;;) {
    BindRequest r;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!ready_.wait(lock, stop, [&] { return !queue_.empty(); })) return;  // stopped
      r = std::move(queue_.front());
      queue_.pop_front();
    }
    BindOutcome o{r.uid, r.ns + "/" + r.name, std::nullopt, std::nullopt};
    if (std::chrono::steady_clock::now() >= r.send_by) {
      o.late = true;
    } else if (auto b = bind_pod(client, r.ns, r.name, r.node, r.annotations); !b) {
      o.bind_error = b.error();
    } else if (auto e = create_event(client, r.event); !e) {
      o.event_error = e.error();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_.push_back(std::move(o));
    }
    done_cv_.notify_all();
  }
}

}  // namespace ds::k8s
