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

SpeedModel model_speed_model(const Workload& workload, const InterferenceModel& model) {
  return [&workload, &model](const JobSpec& job, std::span<const JobSpec* const> others) {
    const JobShape self = job_shape(workload, job);
    double speed = 1.0;
    for (const JobSpec* o : others)
      speed *= std::min(1.0, model.speed(self, job_shape(workload, *o)));
    return std::clamp(speed, 1e-3, 1.0);
  };
}

SpeedModel time_slicing_speed_model() {
  return [](const JobSpec&, std::span<const JobSpec* const> others) {
    return 1.0 / static_cast<double>(others.size() + 1);
  };
}

SpeedModel worse_than_predicted(SpeedModel base, double error) {
  if (error == 0) return base;
  return
      [base = std::move(base), error](const JobSpec& job, std::span<const JobSpec* const> others) {
        const double v = base(job, others);
        return others.empty() ? v : std::clamp(v / (1.0 + error), 1e-3, 1.0);
      };
}

}  // namespace ds
