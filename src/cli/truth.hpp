// The simulator's ground truth of a run (`--truth KIND`, `--truth-error E`): how fast jobs
// that share a GPU really run, and Lucid's execution rules when its numbers are to be
// reproduced. The policy never sees it (docs/architecture.md); only its interference model.
//
// Kinds:
//  - measured (default): Lucid's measured pair speeds where measured (capped at 1), the
//    interference model fitted on them otherwise (sim/speed_models.hpp);
//  - fallback: the built-in util/memory model for every pair (another model family than
//    the profile model the policy fits);
//  - slicing: time slicing, each of n jobs on a GPU at 1/n;
//  - lucid: Lucid's simulator (docs/baselines.md): its pair speeds (1/1 for pairs with
//    NeuMF, ResNet50, BERT or Transformer, speeds above 1 kept, 0.5 for an unmeasured
//    pair) and its 1 s end-of-job tick (a job ends one tick after its work is done: every
//    job under srtf and tiresias, the jobs that reach a VC under lucid, i.e. larger than
//    8 GPUs or longer than its 200 s profiling run); under lucid a restart is free (a
//    profiled job restarts in its VC at no cost).
// `--truth-error E` (>= 0) then makes every shared job's slowdown (1 + E) times worse
// than the kind says: the policy's model is optimistic by E.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "model/aux_data.hpp"
#include "model/workload.hpp"
#include "policy/interference/interference.hpp"
#include "sim/simulator.hpp"

namespace CLI {
class App;
}

namespace ds {

struct TruthOptions {
  std::string kind = "measured";               // measured | fallback | slicing | lucid
  double error = 0;                            // shared jobs' slowdown x (1 + error)
  [[nodiscard]] std::string describe() const;  // "measured", "fallback, slowdown +50%"
};

// Adds --truth and --truth-error to a command.
void add_truth_options(CLI::App* cmd, TruthOptions& options);

// What a run simulates: its SimConfig settings and, for Lucid's tick, a changed copy of
// the workload. Keeps the models the speed model refers to alive.
class GroundTruth {
 public:
  // `workload` and `aux` must outlive this object. Throws InputError for an unknown kind.
  GroundTruth(const Workload& workload, const TruthOptions& options, const std::string& policy,
              const AuxData& aux);
  // The workload to simulate (the given one, or the copy with Lucid's tick).
  [[nodiscard]] const Workload& workload() const { return ticked_ ? *ticked_ : *workload_; }
  // Sets the speed model (and Lucid's restart rule) on `config`.
  void apply(SimConfig& config) const;

 private:
  const Workload* workload_;
  std::optional<Workload> ticked_;
  std::unique_ptr<InterferenceModel> model_;
  SpeedModel speed_;
  bool free_restart_ = false;
};

}  // namespace ds
