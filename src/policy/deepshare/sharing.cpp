#include "policy/deepshare/sharing.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "policy/placement.hpp"

namespace ds::deepshare {

double sharing_budget(const Tenant& t, double assurance, const Config& c) {
  const double cap = std::max(1.0, std::min(c.sharing_budget, t.max_slowdown));
  if (!c.sharing) return 1.0;
  if (!c.assurance) return cap;
  if (assurance < c.sharing_min_assurance) return 1.0;
  const double span = 1.0 - c.sharing_min_assurance;
  const double f = span <= 0 ? 1.0 : (assurance - c.sharing_min_assurance) / span;
  return 1.0 + (cap - 1.0) * std::clamp(f, 0.0, 1.0);
}

namespace {

bool memory_fits(const ClusterSnapshot& s, const Placement& p, double extra_mib) {
  for (const auto& a : p) {
    const Node& n = s.cluster->nodes[a.node.index()];
    for (std::uint64_t m = a.gpu_mask; m != 0; m &= m - 1) {
      const auto g = static_cast<std::size_t>(n.first_gpu + std::countr_zero(m));
      if (s.gpus[g].jobs != 1) return false;  // at most two jobs per GPU
      if (s.gpus[g].memory_used_mib + extra_mib > static_cast<double>(n.gpu_memory_mib))
        return false;
    }
  }
  return true;
}

}  // namespace

std::optional<ShareChoice> choose_partner(const ClusterSnapshot& s, const JobSpec& job,
                                          std::span<const JobId> partners,
                                          std::span<const double> budgets,
                                          const InterferenceModel& model, double slowdown_scale) {
  // Unknown memory cannot be checked, so such jobs never share.
  if (job.gpu_memory_mib <= 0 || job.gpu_milli < kMilliPerGpu || !job.colocatable)
    return std::nullopt;
  const double own_budget = budgets[job.tenant.index()];
  if (own_budget <= 1.0) return std::nullopt;
  const JobShape me = shape_of(s.profiles, job);
  std::optional<ShareChoice> best;
  double best_total = 0;
  for (JobId pid : partners) {
    const JobSpec& p = s.jobs[pid.index()];
    const JobRuntime& prt = s.runtime[pid.index()];
    if (p.gpus != job.gpus || prt.status != JobStatus::Running || prt.shared || !p.colocatable)
      continue;
    const double partner_budget = budgets[p.tenant.index()];
    if (partner_budget <= 1.0 || p.gpu_memory_mib <= 0) continue;
    if (!placement_accepts(*s.cluster, prt.placement, job)) continue;  // another GPU model
    if (!memory_fits(s, prt.placement, job.gpu_memory_mib)) continue;
    const JobShape them = shape_of(s.profiles, p);
    const double v_me = model.speed(me, them);
    const double v_them = model.speed(them, me);
    if (v_me <= 0 || v_them <= 0) continue;
    // No job runs faster shared than alone: a predicted speed above 1 is a slowdown of 1.
    if (slowdown_scale * std::max(1.0, 1.0 / v_me) > own_budget ||
        slowdown_scale * std::max(1.0, 1.0 / v_them) > partner_budget)
      continue;
    const double total = v_me + v_them;
    if (!best || total > best_total || (total == best_total && pid < best->partner)) {
      ShareChoice c;
      c.partner = pid;
      c.placement = prt.placement;
      c.speed = v_me;
      c.partner_speed = v_them;
      const double u_me = job.gpu_util > 0 ? job.gpu_util : 50.0;
      const double u_them = p.gpu_util > 0 ? p.gpu_util : 50.0;
      c.thread_percent =
          std::clamp(static_cast<int>(std::lround(100.0 * u_me / (u_me + u_them))) + 10, 10, 100);
      c.memory_limit_mib = static_cast<std::int64_t>(std::ceil(job.gpu_memory_mib));
      best = std::move(c);
      best_total = total;
    }
  }
  return best;
}

}  // namespace ds::deepshare
