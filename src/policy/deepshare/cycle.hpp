// One scheduling cycle of the DeepShare policy, as a value (Kueue's scheduler cycle, the
// Kubernetes framework's CycleState): DeepSharePolicy::decide() makes it from the snapshot
// and hands it to each step in order. What a step computes for a later step of the same
// cycle travels here and nowhere else; each field says which step sets it. What lasts from
// cycle to cycle is the parts' own state (deepshare.hpp lists the parts).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "model/snapshot.hpp"
#include "policy/placement.hpp"

namespace ds::deepshare {

class Assurance;

// What the lending step found (milli-GPUs, the unowned pool included).
struct Lendable {
  int lendable = 0;           // idle quota less reserves
  int idle = 0;               // idle quota with reserves (not owed to queued entitled jobs)
  bool present_risk = false;  // some tenant has entitled jobs waiting
};

struct Cycle {
  Cycle(const ClusterSnapshot& snapshot, FreeMap& map, std::uint64_t n)
      : s(snapshot), free(map), number(n), free_gpus(map.total_free_gpus()) {}
  Cycle(const Cycle&) = delete;
  Cycle& operator=(const Cycle&) = delete;

  const ClusterSnapshot& s;
  FreeMap& free;         // capacity left: starts take from it, preemptions give back
  Decisions out;         // grows step by step
  std::uint64_t number;  // 1 for the first cycle of the policy object
  // Wholly free GPUs as this cycle's whole-GPU starts, preemptions and holds left them (the
  // waiting reason NoFit / Fragmented compares a job with it).
  int free_gpus;
  Time wake = kNever;  // the earliest wake-up a step asked for
  void wake_at(Time t) { wake = std::min(wake, t); }

  // Step "assurance" (Assurance::update): every tenant's A_t and forecast as of this cycle.
  // Unset before that step.
  const Assurance* assurance = nullptr;
  [[nodiscard]] const Assurance& assured() const {
    if (!assurance) throw std::logic_error("deepshare: assurance read before its step");
    return *assurance;
  }
  // Step "lending" (Lender::compute). Unset before it.
  std::optional<Lendable> lent;
  // Step "borrowed": lent capacity still free for borrowers (milli-GPUs); time slicing may
  // start borrowed jobs on it.
  int borrow_room = 0;
  // Step "drains": free GPUs held for the drains' jobs (step "freed" offers them to entitled
  // jobs first, then holds again what is left).
  Placement held;
};

}  // namespace ds::deepshare
