#include "slurm/reservations.hpp"

#include <algorithm>

namespace ds::slurm {

const ReservedWindow* blocking_reservation(const NodeInfo& node, std::int64_t now_s,
                                           std::int64_t lead_s) {
  for (const ReservedWindow& r : node.reservations) {
    if (now_s >= r.end_s) continue;  // over
    if (lead_s != kNoTimeLimit && now_s + lead_s + kReservationMarginS <= r.start_s) continue;
    return &r;
  }
  return nullptr;
}

std::int64_t start_lead_s(const std::vector<JobInfo>& jobs, const std::string& partition) {
  std::int64_t lead = 0;
  bool any = false;
  for (const JobInfo& j : jobs) {
    if (j.state != JobState::Pending || j.partition != partition) continue;
    any = true;
    if (j.time_limit_s == kNoTimeLimit) return kNoTimeLimit;
    lead = std::max(lead, j.time_limit_s);
  }
  return any ? lead : kNoTimeLimit;
}

}  // namespace ds::slurm
