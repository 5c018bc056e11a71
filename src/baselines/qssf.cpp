#include "baselines/qssf.hpp"

#include <algorithm>
#include <utility>

#include "baselines/qssf_estimates.hpp"
#include "baselines/queue.hpp"
#include "core/error.hpp"
#include "policy/predict/predictor.hpp"

namespace ds {
namespace {

class Qssf final : public Policy {
 public:
  explicit Qssf(const PolicyContext& ctx)
      : queues_(
            Partitions(ctx.cluster, ctx.tenants.size(), read_scope(ctx.options, Scope::Isolated)),
            read_start_rule(ctx.options, read_scope(ctx.options, Scope::Isolated))),
        fresh_(queues_.partitions().size(), 0) {
    const std::string fidelity = ctx.options.get("fidelity", "off");
    const std::string estimates = ctx.options.get("estimates", "");
    PredictorConfig pc;
    pc.kind = ctx.options.get("predictor", pc.kind);
    if (fidelity == "lucid") {
      file_kind_ = parse_estimate_file(estimates.empty() ? "lgb" : estimates);
      file_estimates_ = &estimate_file(ctx.aux, file_kind_);
    } else if (fidelity == "off") {
      if (!estimates.empty())
        throw InputError("--set estimates=" + estimates + " needs --set fidelity=lucid");
      predictor_ = make_predictor(pc);
    } else {
      throw InputError("--set fidelity: expected lucid or off, got '" + fidelity + "'");
    }
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    for (const auto& f : s.finished) {
      accuracy_.finished(f.job, f.runtime);
      if (predictor_) predictor_->observe(s.jobs[f.job.index()], f.runtime);
    }
    const std::size_t rejected_before = out.reject.size();
    queues_.intake(
        s,
        [&](const JobSpec& j) {
          return std::pair<double, std::int64_t>{priority(j), j.gpus};
        },
        out);
    if (queues_.empty()) return out;
    // Which partitions hold only jobs that arrived in this cycle (Lucid's
    // `len(que_list) > new_job_num` test, per virtual cluster).
    for (JobId id : s.arrived) ++fresh_[queues_.partitions().of(s.jobs[id.index()])];
    for (std::size_t k = rejected_before; k < out.reject.size(); ++k)
      --fresh_[queues_.partitions().of(s.jobs[out.reject[k].job.index()])];

    for (const std::uint32_t p : queues_.changed()) {
      const auto& q = queues_.queue(p);
      if (q.empty()) continue;
      if (q.size() > static_cast<std::size_t>(fresh_[p])) {
        queues_.start(p, s, out);
        continue;
      }
      // Only new jobs: Lucid has not given them priorities yet and sorts by GPUs.
      order_.clear();
      for (const auto& k : q) order_.push_back(k.job);
      std::stable_sort(order_.begin(), order_.end(), [&](JobId a, JobId b) {
        const int ga = s.jobs[a.index()].gpus, gb = s.jobs[b.index()].gpus;
        return ga != gb ? ga < gb : a < b;
      });
      queues_.start_in_order(p, order_, s, out);
      // The next cycle orders these jobs by priority: it may decide differently.
      queues_.revisit(p);
    }
    for (JobId id : s.arrived) fresh_[queues_.partitions().of(s.jobs[id.index()])] = 0;
    return out;
  }

  void summarize(std::map<std::string, double>& out) const override {
    accuracy_.summarize(out, "predictor_");
  }

 private:
  // Estimated GPU time of a job, fixed when it arrives.
  double priority(const JobSpec& j) {
    const Time estimate =
        predictor_ ? predictor_->predict(j) : lucid_estimate(*file_estimates_, file_kind_, j);
    accuracy_.predicted(j.id, estimate);
    return to_seconds(estimate) * j.gpus;
  }

  OrderedQueues queues_;
  std::vector<int> fresh_;  // per partition: jobs queued in this cycle
  std::vector<JobId> order_;
  const EstimateFile* file_estimates_ = nullptr;  // fidelity mode (AuxData, outlives us)
  LucidEstimateFile file_kind_ = LucidEstimateFile::Lgb;
  std::unique_ptr<RuntimePredictor> predictor_;
  AccuracyTracker accuracy_;
};

}  // namespace

std::unique_ptr<Policy> make_qssf(const PolicyContext& ctx) {
  return std::make_unique<Qssf>(ctx);
}

}  // namespace ds
