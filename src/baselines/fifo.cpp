#include "baselines/fifo.hpp"

#include "baselines/queue.hpp"

namespace ds {
namespace {

// Job ids are dense in (submit, trace order), so "FIFO" is ascending JobId: every
// job is queued under the same primary key and the id breaks the tie.
class Fifo final : public Policy {
 public:
  Fifo(const PolicyContext& ctx, Scope scope, StartRule rule)
      : queues_(Partitions(ctx.cluster, ctx.tenants.size(), scope), rule) {}

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    queues_.intake(
        s,
        [](const JobSpec&) {
          return std::pair<double, std::int64_t>{0, 0};
        },
        out);
    if (queues_.empty()) return out;
    queues_.start_all(s, out);
    return out;
  }

 private:
  OrderedQueues queues_;
};

}  // namespace

std::unique_ptr<Policy> make_fifo_isolated(const PolicyContext& ctx) {
  return std::make_unique<Fifo>(ctx, Scope::Isolated, StartRule::HeadOfLine);
}
std::unique_ptr<Policy> make_fifo_pooled(const PolicyContext& ctx) {
  return std::make_unique<Fifo>(ctx, Scope::Pooled, read_start_rule(ctx.options, Scope::Pooled));
}

}  // namespace ds
