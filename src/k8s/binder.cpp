// Pods bound beside the scheduling loop (binder.hpp).
#include "k8s/binder.hpp"

#include <algorithm>

#include "k8s/api.hpp"
#include "k8s/client.hpp"

namespace ds::k8s {

Binder::Binder(const Kubeconfig& config, int workers)
    : note_workers_(static_cast<std::size_t>(std::max(1, workers / 2))) {
  for (int i = 0; i < workers; ++i)
    workers_.emplace_back([this, config](std::stop_token stop) { work(config, stop); });
}

Binder::~Binder() {
  for (auto& w : workers_) w.request_stop();
  ready_.notify_all();
  workers_.clear();  // joins
}

void Binder::submit(BindRequest r) {
  r.handed = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(r));
    ++in_flight_;
  }
  ready_.notify_one();
}

void Binder::submit(Note n) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    notes_.push_back(std::move(n));
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

std::vector<NoteOutcome> Binder::take_note_failures() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<NoteOutcome> out;
  out.swap(note_failures_);
  return out;
}

std::size_t Binder::drop_queued() {
  std::size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = queue_.size();
    queue_.clear();
    notes_.clear();
    in_flight_ -= n;
  }
  done_cv_.notify_all();
  return n;
}

std::size_t Binder::notes_queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return notes_.size();
}

std::size_t Binder::binds_queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

std::size_t Binder::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

bool Binder::wait_done(int limit_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return done_cv_.wait_for(lock, std::chrono::milliseconds(limit_ms), [&] { return idle(); });
}

void Binder::send(Client& client, Note n) {
  std::optional<NoteOutcome> failed;
  if (std::chrono::steady_clock::now() >= n.send_by) {
    failed = NoteOutcome{n.kind, n.ref(), std::nullopt};
  } else {
    auto r = n.kind == Note::Kind::Event ? create_event(client, n.event)
                                         : mark_unschedulable(client, n.ns, n.name, n.message);
    if (!r && !r.error().not_found()) failed = NoteOutcome{n.kind, n.ref(), r.error()};
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    --notes_active_;
    if (failed) note_failures_.push_back(std::move(*failed));
  }
  done_cv_.notify_all();
  ready_.notify_one();  // a note slot is free again
}

void Binder::work(const Kubeconfig& config, std::stop_token stop) {
  Client client(config);
  for (;;) {
    BindRequest r;
    {
      std::unique_lock<std::mutex> lock(mu_);
      const auto note_ready = [&] { return !notes_.empty() && notes_active_ < note_workers_; };
      if (!ready_.wait(lock, stop, [&] { return !queue_.empty() || note_ready(); })) return;
      // Bindings first: a note only when none waits.
      if (queue_.empty()) {
        Note n = std::move(notes_.front());
        notes_.pop_front();
        ++notes_active_;
        lock.unlock();
        send(client, std::move(n));
        continue;
      }
      r = std::move(queue_.front());
      queue_.pop_front();
    }
    BindOutcome o{r.uid, r.ns + "/" + r.name, std::nullopt};
    if (std::chrono::steady_clock::now() >= r.send_by) {
      o.late = true;
    } else if (auto a = allocate_claims(client, r.ns, r.name, r.uid, r.claims); !a) {
      o.bind_error = a.error();  // not bound: the claims first, as kube-scheduler's PreBind
    } else if (auto b = bind_pod(client, r.ns, r.name, r.node, r.annotations); !b) {
      o.bind_error = b.error();
    }
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.handed).count();
    const bool tell = !o.late && !o.bind_error;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (tell)  // the Scheduled Event, on the notes' lane
        notes_.push_back(Note{Note::Kind::Event, r.ns, r.name, std::move(r.event), "", r.send_by});
      done_.push_back(std::move(o));
    }
    if (tell) ready_.notify_one();
    done_cv_.notify_all();
  }
}

}  // namespace ds::k8s
