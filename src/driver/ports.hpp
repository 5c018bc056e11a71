// The ports of an online driver, in no engine's vocabulary (DESIGN §2: ClusterSource,
// Actuator, Clock). An engine adapter implements them: the Slurm adapter translates Slurm's
// job records, AdminComment and GRES (src/slurm/adapter.hpp); a Kubernetes adapter would
// translate pods, bindings, evictions and watches. Everything else - the job book (intents),
// the reconciler's rules, apply(), compaction, the leader fence, the journal - is the driver
// core's (src/driver/core.hpp) and is reused as it is.
//
// What an engine must be able to say about a job (EngineJob):
//  - a stable key (Slurm: the job id, or array id + task; Kubernetes: the pod's UID) and a
//    name for logs and actions (Slurm "123_4"; Kubernetes "namespace/name");
//  - its phase: waiting, running, being requeued (still holding its GPUs), ending (still
//    holding them), ended;
//  - the GPUs it holds, when known (Slurm: the GRES allocation; Kubernetes: the devices the
//    kubelet allocated);
//  - a job that left (ended, withdrawn, refused) and that the engine lists unfinished again
//    (Slurm: its user requeued the finished job) arrives again as a new job under its key;
//  - the driver's own decision of its current run, if the engine carries one (Slurm: the pin
//    in the AdminComment, valid for its restart count; Kubernetes: an annotation written at
//    binding), and whether that start was handed over (released / bound);
//  - for a job seen the first time: what it asks for (JobSpec: tenant, GPUs, ...).
// What an engine must be able to do (Actuator): hand a decided start over when the engine can
// hold it (release / bind), take a handed-over start back, requeue or evict a running job
// (again, until it is seen waiting), tell a job why it was refused and remove it, and say
// whether a waiting job may run now (held by its user, a dependency, a begin time, a
// throttle: the engine's rules), asked at the moment the reconciler needs it.
// Assumption: one thread uses a port object at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/log.hpp"
#include "model/job.hpp"
#include "model/snapshot.hpp"

namespace ds::driver {

// How the engine shows a job now.
enum class Phase : std::uint8_t {
  Waiting,   // queued, not running (Slurm: PENDING; Kubernetes: unbound)
  Running,   // runs (Slurm: RUNNING or SUSPENDED; Kubernetes: bound, not terminating)
  Stopping,  // requeued but still holding its GPUs; it waits again next (Slurm: PENDING and
             // COMPLETING; Kubernetes: an evicted pod that is terminating and is recreated)
  Ending,    // ending for good, still holding its GPUs (Slurm: COMPLETING; Kubernetes: a
             // terminating pod)
  Ended,     // gone for good (completed, failed, cancelled) but still listed
};
const char* to_string(Phase p);

// The driver's decision of a job's current run as the engine carries it (Slurm: the pin).
struct EngineDecision {
  bool borrowed = false;
  bool shared = false;
  Placement placement;    // the GPUs the driver chose
  Time decided = kNever;  // driver time of the decision (kNever: unknown)
};

struct EngineJob {
  std::string key;  // stable for the job's whole life
  std::string ref;  // how logs and actions name it
  Phase phase = Phase::Waiting;
  std::string state;           // the engine's own word for it, for logs ("completed", ...)
  Placement placement;         // Running, Stopping, Ending: the GPUs it holds (empty: unknown)
  bool holds_shares = false;   // it holds shares of GPUs (Slurm: gpushare slots), not whole ones
  Time run_start = kNever;     // Running: driver time its run began (kNever: unknown)
  std::uint32_t restarts = 0;  // requeues the engine counted
  std::optional<EngineDecision> decision;  // the driver's decision of this run, if any
  // Waiting: the engine shows a start as handed over (Slurm: released - neither held nor
  // parked); false: it will not run the job by itself.
  bool handed_over = false;
  // Waiting: wall time (Unix ms) from which the engine would let it run (a begin time; 0:
  // none), so that a cycle runs then even when nothing else changes.
  std::int64_t wake_wall_ms = 0;
  std::string user;  // who submitted it (log context)
  JobSpec spec;      // what it asks for (read when the job is seen the first time)
  [[nodiscard]] bool ended() const { return phase == Phase::Ending || phase == Phase::Ended; }
};

// One observation of the engine: every job in the driver's scope, ordered by key.
struct Observation {
  std::vector<EngineJob> jobs;
};

struct EngineNode {
  std::string name;
  bool usable = true;   // may run jobs now (not down, drained, cordoned)
  bool shared = false;  // also serves work outside the driver: no colocation on it
  std::string state;    // the engine's word for it (log context)
};

// What the driver reads. How an engine answers is its own (Slurm: a change-only read of the
// whole job table; Kubernetes: informers' caches).
class ClusterSource {
 public:
  virtual ~ClusterSource() = default;
  // The jobs in the driver's scope; nullopt (and last_error) when the engine cannot be read.
  virtual std::optional<Observation> observe() = 0;
  // The nodes; nullopt (and last_error) on an error.
  virtual std::optional<std::vector<EngineNode>> nodes() = 0;
  [[nodiscard]] virtual const std::string& last_error() const = 0;
};

// What the driver does through an engine. The driver core calls these while it folds an
// observation in (the reconciler) and while it applies a cycle's decisions (apply()'s hooks);
// each is called for a job the book knows, with the job's state already checked.
class Actuator {
 public:
  virtual ~Actuator() = default;

  // --- the book ---
  // A job entered the book (its id is new or reused): the engine's own state for it starts.
  virtual void admitted(JobId, const EngineJob&) {}
  // A known job is observed again (before the reconciler's rules run for it).
  virtual void observed(JobId, const EngineJob&) {}
  // A job left the book (compacted): its id may go to another job.
  virtual void forgotten(JobId) {}

  // --- reconciling ---
  // Whether a waiting job may be placed by the policy now: None when the engine would let it
  // run, else why it waits outside the policy's sight (WaitReason::Held: held by its user or
  // an administrator; Dependency: a dependency or begin time not met; Quota: a throttle such
  // as an array's %N; NoFit: the engine could not hold any placement of it now).
  virtual WaitReason eligible(JobId, const EngineJob&) = 0;
  // A waiting job without a start in flight: keep the engine from starting it by itself
  // (Slurm: park it again should it have lost its parking; an engine that never starts a job
  // on its own does nothing).
  virtual void hold_back(JobId, const EngineJob&) {}
  // It became a candidate (after eligible() said so).
  virtual void became_candidate(JobId) {}
  // The engine shows the driver's preemption done (the job waits again).
  virtual void preempt_confirmed(JobId, const EngineJob&) {}
  // The engine requeued a running job by itself (a node failure, its user's requeue).
  virtual void requeued_by_engine(JobId, const EngineJob&) {}
  // A running job taken into the model without a start of this driver object.
  virtual void adopted(JobId, const EngineJob&) {}
  // A running job's run is borrowed from now on (its tenant's quota was cut): record it where
  // a restarted driver reads it (Slurm: the pin's b=1).
  virtual void lent_out(JobId) {}
  enum class Handover : std::uint8_t {
    Sent,     // the engine has the start now
    NotYet,   // it cannot hold it yet (a victim or an ending job still holds its GPUs)
    Failed,   // the call failed (logged by the adapter)
    Refused,  // the job's user holds it now: the start is rolled back, the hold stays theirs
  };
  // Hand a decided start over (release, bind); retried every cycle until Sent or forgotten.
  virtual Handover hand_over(JobId) = 0;
  // Take back a start that was handed over (it must not run as decided).
  virtual void take_back(JobId) = 0;
  // Re-issue a preemption the engine has not carried out yet.
  virtual void repeat_preempt(JobId) = 0;
  // Log context of a start (e.g. what the engine holds on its GPUs), for a rollback.
  [[nodiscard]] virtual Log::Fields start_details(JobId) const { return {}; }

  // --- applying (the state has accepted the decision) ---
  // Tell the job why it can never run, and remove it; false: the call failed.
  virtual bool reject(JobId, const std::string& reason) = 0;
  enum class Preemption : std::uint8_t {
    Sent,     // the engine requeues / evicts it
    Refused,  // the engine refused: the victim runs on
    Ended,    // the job had ended on its own before the request reached the engine (its end
              // raced the preemption): its end stands, nothing is requeued
  };
  // Requeue / evict a running job.
  virtual Preemption preempt(JobId, const EngineJob&) = 0;
  // After the state requeued the victim.
  virtual void preempted(JobId) {}
  // Where the engine can hold a start: the decided placement, another one (it moved it), or
  // nullopt: not this cycle (deferred; the adapter logs why).
  virtual std::optional<Placement> place(const StartJob& d) { return d.placement; }
  // The start is applied in the model: record the decision in the engine if it can carry one
  // (Slurm: the pin), and log it. The core hands it over next.
  virtual void decided(const StartJob& applied, Time queued_since, bool moved) = 0;
};

}  // namespace ds::driver
