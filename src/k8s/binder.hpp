// Pods bound beside the scheduling loop (docs/kubernetes.md §8, "Bind"): worker threads, each
// with its own connection to the API server, send the bindings a cycle decided and then their
// Scheduled Events, as kube-scheduler binds in goroutines beside its scheduling cycle. The
// loop hands a binding over and goes on; the outcomes come back at its next cycle. One
// binding per API round trip in the loop capped binding at ~40-60 pods per second here
// (a `slow_cycle` of 496 starts spent 7.8 s applying them; bench/k8s_scale.sh).
// What only tells (an Event, a waiting pod's PodScheduled=False condition) goes out on a second
// lane: after every binding queued, by at most half the workers at a time, so that a binding
// never waits behind more than the notes already on the wire. Written in the loop, the waiting
// reasons (50 per cycle, one round trip each) had held cycles for 0.7-1.7 s in the churn of
// bench/k8s_scale.sh with 10,000 pods pending.
// The adapter (adapter.hpp) treats a submitted binding as accepted (the pod is bound in its
// view, its GPUs count as used) until the outcome says otherwise; a refused one is shown
// unbound again and handed over anew (or rolled back) by the driver core.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "k8s/dra.hpp"
#include "k8s/errors.hpp"
#include "k8s/kubeconfig.hpp"
#include "k8s/objects.hpp"

namespace ds::k8s {

using SendBy = std::chrono::steady_clock::time_point;
constexpr SendBy kNoDeadline = SendBy::max();

struct BindRequest {
  std::string uid, ns, name, node;
  std::map<std::string, std::string> annotations;  // set with the binding, in one update
  EventSpec event;                                 // a note once the binding took
  // Not sent from then on (the leader fence's window when it was handed over: the Lease may be
  // someone else's after it).
  SendBy send_by = kNoDeadline;
  std::vector<ClaimWrite> claims = {};                // DRA claims allocated first (dra.hpp)
  std::chrono::steady_clock::time_point handed = {};  // set by submit()
};

struct BindOutcome {
  std::string uid, ref;                // ref: NS/NAME
  std::optional<ApiError> bind_error;  // none: bound
  bool late = false;                   // not sent: its send_by had passed
  double seconds = 0;                  // from the hand-over to the API's answer
};

// A write that only tells: an Event, or a pod's PodScheduled=False condition with `message`.
struct Note {
  enum class Kind { Event, Condition };
  Kind kind = Kind::Event;
  std::string ns, name;  // the pod
  EventSpec event;       // Kind::Event
  std::string message;   // Kind::Condition
  SendBy send_by = kNoDeadline;
  [[nodiscard]] std::string ref() const { return ns + "/" + name; }
};

// Only the notes that did not go out come back (a pod gone meanwhile is no failure).
struct NoteOutcome {
  Note::Kind kind = Note::Kind::Event;
  std::string ref;
  std::optional<ApiError> error;  // none: not sent, its send_by had passed
};

class Client;

class Binder {
 public:
  // `workers` threads, each with a client of `config`.
  Binder(const Kubeconfig& config, int workers);
  ~Binder();  // stops the workers; bindings not sent yet are dropped
  Binder(const Binder&) = delete;
  Binder& operator=(const Binder&) = delete;
  void submit(BindRequest r);
  void submit(Note n);
  // The outcomes of the bindings done since the last call, in the order they finished.
  std::vector<BindOutcome> take_outcomes();
  // The notes that failed or came too late since the last call.
  std::vector<NoteOutcome> take_note_failures();
  // Bindings and notes not sent yet are not sent (the scheduler is no longer the leader);
  // returns how many bindings.
  std::size_t drop_queued();
  // Bindings submitted and not yet taken back as an outcome.
  [[nodiscard]] std::size_t in_flight() const;
  // Notes waiting for a worker (the adapter holds further waiting reasons back beyond a bound).
  [[nodiscard]] std::size_t notes_queued() const;
  // Bindings waiting for a worker.
  [[nodiscard]] std::size_t binds_queued() const;
  // Waits until every submitted binding has its outcome and every note went out (or
  // `limit_ms` passed); false on the limit. A clean stop lets the last cycle's writes go out.
  bool wait_done(int limit_ms);

 private:
  void work(const Kubeconfig& config, std::stop_token stop);
  void send(Client& client, Note n);
  bool idle() const { return done_.size() == in_flight_ && notes_.empty() && notes_active_ == 0; }
  mutable std::mutex mu_;
  std::condition_variable_any ready_;
  std::condition_variable done_cv_;
  std::deque<BindRequest> queue_;
  std::deque<Note> notes_;
  std::vector<BindOutcome> done_;
  std::vector<NoteOutcome> note_failures_;
  std::size_t in_flight_ = 0;
  std::size_t notes_active_ = 0;  // notes a worker is sending now
  std::size_t note_workers_ = 1;  // at most this many at a time: half the workers, at least one
  std::vector<std::jthread> workers_;
};

}  // namespace ds::k8s
