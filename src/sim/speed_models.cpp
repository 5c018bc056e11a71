#include "sim/speed_models.hpp"

#include <algorithm>

namespace ds {

JobShape job_shape(const Workload& w, const JobSpec& job) {
  return shape_of(w.profiles, job);
}

SpeedModel measured_speed_model(const Workload& workload, const ColocationTable* table,
                                const InterferenceModel& fallback) {
  return [&workload, table, &fallback](const JobSpec& job, std::span<const JobSpec* const> others) {
    const JobShape self = job_shape(workload, job);
    double speed = 1.0;
    for (const JobSpec* o : others) {
      const JobShape other = job_shape(workload, *o);
      std::optional<std::pair<double, double>> measured;
      if (table && self.profile && other.profile)
        measured = table->lookup(*self.profile, *other.profile);
      speed *= std::min(1.0, measured ? measured->first : fallback.speed(self, other));
    }
    return std::clamp(speed, 1e-3, 1.0);
  };
}

}  // namespace ds
