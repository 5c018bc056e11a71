// Slurm reservations on DeepShare's nodes (issue #24, docs/slurm.md "Reservations"). A
// reservation (`scontrol create reservation ... nodes=... starttime=... duration=...`,
// routine maintenance with FLAGS=MAINT) holds its nodes for its window: Slurm 22.05 starts a
// job that is not in the reservation on those nodes only if the job's time limit ends before
// the window starts (a job without a time limit: never before the window ends). DeepShare
// writes the job's node list itself, so a start there would never happen (Slurm leaves the
// job pending, feasible.hpp). Instead the controller treats a
// reserved node as unusable (as a drained one: running jobs go on, nothing new is placed) from
// the moment a job it may start could reach the window until the window ends: while
//     now + lead + kReservationMarginS > start  and  now < end,
// lead being the longest time limit of the partition's pending jobs (none: unlimited; no job
// pending: unlimited, nothing is lost). The margin covers the cycles between node reads (every
// 5th cycle). Jobs that name a reservation (--reservation) are refused by the gate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "slurm/ports.hpp"

namespace ds::slurm {

inline constexpr std::int64_t kReservationMarginS = 60;
inline constexpr std::int64_t kNoTimeLimit = -1;

// The reservation that holds `node` for jobs started at `now_s` that run at most `lead_s`
// seconds (kNoTimeLimit: without limit); nullptr when none does.
const ReservedWindow* blocking_reservation(const NodeInfo& node, std::int64_t now_s,
                                           std::int64_t lead_s);

// The longest time limit (seconds) of the jobs of `partition` that are pending; kNoTimeLimit
// when one has none or when none is pending.
std::int64_t start_lead_s(const std::vector<JobInfo>& jobs, const std::string& partition);

}  // namespace ds::slurm
