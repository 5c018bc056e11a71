#include "cli/truth.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "baselines/lucid.hpp"
#include "cli/validators.hpp"
#include "core/error.hpp"
#include "sim/speed_models.hpp"

namespace ds {

std::string TruthOptions::describe() const {
  std::string s = kind;
  if (error != 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ", slowdown +%g%%", error * 100);
    s += buf;
  }
  return s;
}

void add_truth_options(CLI::App* cmd, TruthOptions& o) {
  cmd->add_option("--truth", o.kind,
                  "Ground truth of shared GPUs: measured (Lucid's measured pairs, the fitted "
                  "model elsewhere), fallback (the util/memory model everywhere), slicing "
                  "(1/n each), lucid (Lucid's simulator: its pair speeds and 1 s tick; see "
                  "docs/baselines.md)")
      ->check(CLI::IsMember({"measured", "fallback", "slicing", "lucid"}))
      ->capture_default_str();
  cmd->add_option("--truth-error", o.error,
                  "Shared jobs run (1 + E) times slower than the ground truth says: the "
                  "policies' interference model is optimistic by E (e.g. 0.5)")
      ->check(number_in(0, 100))
      ->capture_default_str();
}

GroundTruth::GroundTruth(const Workload& workload, const TruthOptions& o, const std::string& policy,
                         const AuxData& aux)
    : workload_(&workload) {
  const ColocationTable* table = aux.colocation ? &*aux.colocation : nullptr;
  if (o.kind == "measured") {
    InterferenceOptions no_cv;
    no_cv.folds = 0;  // the truth needs the model, not its cross-validated error
    model_ = fit_interference(table, no_cv).model;
    speed_ = measured_speed_model(workload, table, *model_);
  } else if (o.kind == "fallback") {
    model_ = builtin_interference_model();
    speed_ = model_speed_model(workload, *model_);
  } else if (o.kind == "slicing") {
    speed_ = time_slicing_speed_model();
  } else if (o.kind == "lucid") {
    const Workload* w = &workload;
    if (policy == "srtf" || policy == "tiresias" || policy == "lucid") {
      ticked_ = workload;
      for (std::size_t i = 0; i < ticked_->jobs.size(); ++i)
        if (policy != "lucid" || ticked_->jobs[i].gpus > 8 || ticked_->truth[i].work > seconds(200))
          ticked_->truth[i].work += kSecond;
      w = &*ticked_;
    }
    free_restart_ = policy == "lucid";
    speed_ = [w, t = table](const JobSpec& job, std::span<const JobSpec* const> others) {
      auto profile = [w](const JobSpec& j) -> const Profile* {
        return j.profile >= 0 ? &w->profiles[static_cast<std::size_t>(j.profile)] : nullptr;
      };
      double speed = 1;
      for (const JobSpec* other : others)
        speed *= t ? lucid_colocated_speed(*t, profile(job), profile(*other), 0.5) : 0.5;
      return speed;
    };
  } else {
    throw InputError("--truth " + o.kind + ": expected measured, fallback, slicing or lucid");
  }
  if (o.error < 0) throw InputError("--truth-error must be >= 0");
  speed_ = worse_than_predicted(std::move(speed_), o.error);
}

void GroundTruth::apply(SimConfig& config) const {
  config.speed_model = speed_;
  if (free_restart_) config.restart_overhead.small = config.restart_overhead.large = 0;
}

}  // namespace ds
