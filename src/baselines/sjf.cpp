#include "baselines/sjf.hpp"

#include <utility>

#include "baselines/queue.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

class Sjf final : public Policy {
 public:
  explicit Sjf(const PolicyContext& ctx)
      : work_(ctx.oracle_work),
        queues_(
            Partitions(ctx.cluster, ctx.tenants.size(), read_scope(ctx.options, Scope::Isolated)),
            read_start_rule(ctx.options, read_scope(ctx.options, Scope::Isolated))) {
    if (work_.empty())
      throw InputError("sjf needs the jobs' true run times (it is an oracle policy)");
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    // Job ids follow arrival order, so the id breaks ties of equal run times.
    queues_.intake(
        s,
        [&](const JobSpec& j) {
          return std::pair<double, std::int64_t>{static_cast<double>(oracle_work(work_, j)), 0};
        },
        out);
    if (queues_.empty()) return out;
    queues_.start_all(s, out);
    return out;
  }

 private:
  std::span<const Time> work_;
  OrderedQueues queues_;
};

}  // namespace

std::unique_ptr<Policy> make_sjf(const PolicyContext& ctx) {
  return std::make_unique<Sjf>(ctx);
}

}  // namespace ds
