// The reconciler: folds one observation of the engine into the model (ClusterState) and the
// job book, whatever the engine. It is the Kubernetes scheduler cache's comparer made the
// rule of every cycle: the model is compared with what the engine shows, job by job, and every
// difference is resolved - confirmed, adopted, rolled back or counted.
//
// Statuses of a job in the model: Future (known, not a candidate), Pending (a candidate the
// policy may place), Running, Done. Rules (model status + intent, engine phase):
//   unknown          + waiting               -> Future, then a candidate when eligible
//   unknown          + running               -> adopted (flags from the engine's record)
//   unknown          + waiting, a start of this run handed over -> a start in flight (adopted)
//   Future/Pending   + waiting               -> candidate or not (Actuator::eligible)
//   Running/Start    + running               -> confirm (placement from the engine's)
//   Running/Start    + waiting               -> hand over once the engine can hold it; forget
//                                               after the timeout, or at once when a node it
//                                               needs is not usable
//   Running          + waiting or stopping   -> requeued by the engine (node failure, the
//                                               user's requeue)
//   Running          + ending / ended / gone -> finished (an ending job is never a victim;
//                                               its GPUs count as held until they are free)
//   Pending/Preempt  + waiting               -> confirm
//   Pending/Preempt  + running               -> re-issue the preemption; after the timeout:
//                                               a failed preemption (the job runs on)
//   Pending/Future   + running               -> started by someone else: adopted
//   Pending/Future   + ended / gone          -> withdrawn
// Timeouts (Timing): a start or preemption the engine has not carried out timeout_ms after it
// was made (a start: after it was handed over) is forgotten; actions are re-issued at most
// every retry_ms. A job whose start timed out twice or more in a row waits outside the policy
// for a backoff that doubles up to backoff_cap_ms (StartBackoff).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/journal.hpp"
#include "driver/log.hpp"
#include "driver/ports.hpp"
#include "driver/start_backoff.hpp"
#include "model/snapshot.hpp"

namespace ds::driver {

class Core;

struct Timing {
  std::int64_t timeout_ms = 32000;               // an intent not carried out by then is forgotten
  std::int64_t retry_ms = 3000;                  // wall ms between re-issued actions
  std::int64_t backoff_cap_ms = 30 * 60 * 1000;  // the longest wait after start timeouts
};

class Reconciler {
 public:
  Reconciler(Core& core, Actuator& engine, Log& log, Journal& journal)
      : core_(core), engine_(engine), log_(log), journal_(journal) {}
  void set_timing(Timing t) {
    timing_ = t;
    backoff_ = StartBackoff(t.timeout_ms, t.backoff_cap_ms);
  }
  [[nodiscard]] const Timing& timing() const { return timing_; }

  // The cycle's times, for what the reconciler does while the cycle's decisions are applied
  // (hand-overs, rollbacks), also in a cycle that folds nothing in (a quiet one).
  void set_time(Time now, std::int64_t wall) {
    now_ = now;
    wall_ = wall;
  }
  // Folds `obs` in at driver time `now` and wall time `wall`: every listed job in order, then
  // the known jobs it no longer lists leave. `obs` must outlive the cycle (observed()).
  void fold(const Observation& obs, Time now, std::int64_t wall);
  // The last folded observation's view of a job (nullptr: not listed).
  [[nodiscard]] const EngineJob* observed(JobId id) const;
  // What still differs between the model and the last folded observation (empty right after
  // fold(), unless an intent is in flight): jobs the model runs that the engine shows
  // elsewhere, waiting or gone; jobs the engine runs that the model does not. The cache
  // comparer of the Kubernetes scheduler, for tests and diagnostics.
  [[nodiscard]] std::vector<std::string> drift() const;

  // Used while decisions are applied, too:
  void try_hand_over(JobId id);
  void rollback_start(JobId id, const char* why);
  void preempt_failed(JobId id, const std::string& why);

 private:
  void observe_new(const EngineJob& j, std::size_t index);
  void observe_known(JobId id, const EngineJob& j);
  void known_preempting(JobId id, const EngineJob& j);
  void known_starting(JobId id, const EngineJob& j);
  void update_waiting(JobId id, const EngineJob& j);
  void adopt_running(JobId id, const EngineJob& j);
  void requeued_by_engine(JobId id, const EngineJob& j);
  void finish(JobId id);
  void withdraw(JobId id);
  void vanish(JobId id);
  void see(JobId id, std::size_t index);
  void start_timed_out(JobId id, const EngineJob& j);
  [[nodiscard]] bool timed_out(std::int64_t since) const {
    return wall_ - since > timing_.timeout_ms;
  }

  Core& core_;
  Actuator& engine_;
  Log& log_;
  Journal& journal_;
  Timing timing_;
  StartBackoff backoff_{timing_.timeout_ms, timing_.backoff_cap_ms};
  const Observation* obs_ = nullptr;
  std::vector<std::int32_t> seen_;  // per JobId: its index in obs_->jobs, -1: not listed
  Time now_ = 0;
  std::int64_t wall_ = 0;
};

}  // namespace ds::driver
