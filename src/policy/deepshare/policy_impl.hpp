// The DeepShare policy object (private to src/policy/deepshare): a handful of owned parts and
// the cycle over them. The parts and the order of the steps are in deepshare.hpp;
// decide() (deepshare.cpp) is that order, over one Cycle value.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "policy/deepshare/admission.hpp"
#include "policy/deepshare/assurance.hpp"
#include "policy/deepshare/book.hpp"
#include "policy/deepshare/checkpoints.hpp"
#include "policy/deepshare/colocation.hpp"
#include "policy/deepshare/config.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/deepshare/drain.hpp"
#include "policy/deepshare/handle.hpp"
#include "policy/deepshare/layout.hpp"
#include "policy/deepshare/lending.hpp"
#include "policy/deepshare/partners.hpp"
#include "policy/deepshare/prediction.hpp"
#include "policy/deepshare/reclaimer.hpp"
#include "policy/deepshare/runs.hpp"
#include "policy/deepshare/slicing.hpp"
#include "policy/deepshare/tally.hpp"
#include "policy/deepshare/twins.hpp"
#include "policy/policy.hpp"

namespace ds::deepshare {

class DeepSharePolicy final : public Policy {
 public:
  explicit DeepSharePolicy(const PolicyContext& ctx);
  DeepSharePolicy(const DeepSharePolicy&) = delete;  // the parts refer to each other
  DeepSharePolicy& operator=(const DeepSharePolicy&) = delete;
  Decisions decide(const ClusterSnapshot& s) override;
  void telemetry(std::span<TenantTelemetry> out) const override;
  void summarize(std::map<std::string, double>& out) const override;

 private:
  // Step "ingest": the snapshot's deltas become transitions of the parts.
  void ingest(Cycle& cy);
  void requeued(Cycle& cy, JobId id);
  void arrived(Cycle& cy, JobId id);
  std::optional<Colocation> make_colocation(const PolicyContext& ctx);
  Handle handle() { return {c_, book_, layout_, runs_, checkpoints_, tally_}; }

  const Config c_;
  Tally tally_;               // what is counted for summary.json (read by no decision)
  std::uint64_t cycles_ = 0;  // cycles so far (Cycle::number)
  // The parts, in the order they are made (each refers only to those above it).
  Book book_;
  Layout layout_;
  Prediction prediction_;
  Checkpoints checkpoints_;
  std::optional<Partners> partners_;  // with sharing (Runs keeps it)
  Runs runs_;
  Lender lender_;
  Assurance assurance_;
  // Chosen by the ablation switches: time_slicing (drains, slicer), sharing (colocation,
  // partners), reclaim (reclaimer).
  std::optional<Drains> drains_;
  std::optional<Colocation> colocation_;
  std::optional<Reclaimer> reclaimer_;
  std::optional<Slicer> slicer_;
  std::optional<Twins> twins_;  // twins (with prediction)
  Admission admission_;
};

}  // namespace ds::deepshare
