// Pods bound beside the scheduling loop (docs/kubernetes.md §8, "Bind"): worker threads, each
// with its own connection to the API server, send the bindings a cycle decided and then their
// Scheduled Events, as kube-scheduler binds in goroutines beside its scheduling cycle. The
// loop hands a binding over and goes on; the outcomes come back at its next cycle. One
// binding per API round trip in the loop capped binding at ~40-60 pods per second here
// (a `slow_cycle` of 496 starts spent 7.8 s applying them; bench/k8s_scale.sh).
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

#include "k8s/errors.hpp"
#include "k8s/kubeconfig.hpp"
#include "k8s/objects.hpp"

namespace ds::k8s {

struct BindRequest {
  std::string uid, ns, name, node;
  std::map<std::string, std::string> annotations;  // set with the binding, in one update
  EventSpec event;                                 // sent once the binding took
  // Not sent from then on (the leader fence's window when it was handed over: the Lease may be
  // someone else's after it).
  std::chrono::steady_clock::time_point send_by = std::chrono::steady_clock::time_point::max();
};

struct BindOutcome {
  std::string uid, ref;                 // ref: NS/NAME
  std::optional<ApiError> bind_error;   // none: bound
  std::optional<ApiError> event_error;  // the Scheduled Event was refused
  bool late = false;                    // not sent: its send_by had passed
};

class Binder {
 public:
  // `workers` threads, each with a client of `config`.
  Binder(const Kubeconfig& config, int workers);
  ~Binder();  // stops the workers; bindings not sent yet are dropped
  Binder(const Binder&) = delete;
  Binder& operator=(const Binder&) = delete;
  void submit(BindRequest r);
  // The outcomes of the bindings done since the last call, in the order they finished.
  std::vector<BindOutcome> take_outcomes();
  // Bindings not sent yet are not sent (the scheduler is no longer the leader); returns
  // how many.
  std::size_t drop_queued();
  // Submitted and not yet taken back as an outcome.
  [[nodiscard]] std::size_t in_flight() const;
  // Waits until every submitted binding has its outcome (or `limit_ms` passed); false on the
  // limit. A clean stop lets the last cycle's bindings go out.
  bool wait_done(int limit_ms);

 private:
  void work(const Kubeconfig& config, std::stop_token stop);
  mutable std::mutex mu_;
  std::condition_variable_any ready_;
  std::condition_variable done_cv_;
  std::deque<BindRequest> queue_;
  std::vector<BindOutcome> done_;
  std::size_t in_flight_ = 0;
  std::vector<std::jthread> workers_;
};

}  // namespace ds::k8s
