#include "baselines/fifo.hpp"

#include <set>
#include <vector>

#include "policy/placement.hpp"

namespace ds {
namespace {

// Jobs ids are dense in (submit, trace order), so "FIFO" is ascending JobId.
using Queue = std::set<JobId>;

class FifoIsolated final : public Policy {
 public:
  explicit FifoIsolated(const PolicyContext& ctx)
      : nodes_(ctx.tenants.size()), capacity_(ctx.tenants.size(), 0), queues_(ctx.tenants.size()) {
    for (const auto& n : ctx.cluster.nodes) {
      if (!n.owner.valid()) continue;
      nodes_[n.owner.index()].push_back(n.id);
      capacity_[n.owner.index()] += n.gpus;
    }
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    for (JobId id : s.arrived) {
      const JobSpec& j = s.jobs[id.index()];
      const int cap = capacity_[j.tenant.index()];
      if (j.gpus > cap) {
        out.reject.push_back({id, "needs " + std::to_string(j.gpus) + " GPUs; tenant '" +
                                      s.tenants[j.tenant.index()].name + "' owns " +
                                      std::to_string(cap)});
        continue;
      }
      queues_[j.tenant.index()].insert(id);
    }
    for (JobId id : s.requeued) queues_[s.jobs[id.index()].tenant.index()].insert(id);

    std::optional<FreeMap> free;
    for (std::size_t t = 0; t < queues_.size(); ++t) {
      Queue& q = queues_[t];
      while (!q.empty()) {
        const JobSpec& j = s.jobs[q.begin()->index()];
        if (!free) free.emplace(s);
        auto p = place_job(*free, nodes_[t], j);
        if (!p) break;  // head-of-line blocking
        free->take(*p, j.gpu_milli);
        out.start.push_back(StartJob{j.id, std::move(*p)});
        q.erase(q.begin());
      }
    }
    return out;
  }

 private:
  std::vector<std::vector<NodeId>> nodes_;
  std::vector<int> capacity_;
  std::vector<Queue> queues_;
};

class FifoPooled final : public Policy {
 public:
  explicit FifoPooled(const PolicyContext& ctx)
      : backfill_(ctx.options.get_bool("backfill", true)), capacity_(ctx.cluster.total_gpus()) {
    for (const auto& n : ctx.cluster.nodes) nodes_.push_back(n.id);
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    for (JobId id : s.arrived) {
      const JobSpec& j = s.jobs[id.index()];
      if (j.gpus > capacity_) {
        out.reject.push_back({id, "needs " + std::to_string(j.gpus) +
                                      " GPUs; the cluster has " + std::to_string(capacity_)});
        continue;
      }
      queue_.insert(id);
    }
    for (JobId id : s.requeued) queue_.insert(id);
    if (queue_.empty()) return out;

    FreeMap free(s);
    int free_gpus = free.total_free_gpus(nodes_);
    for (auto it = queue_.begin(); it != queue_.end() && free_gpus > 0;) {
      const JobSpec& j = s.jobs[it->index()];
      auto p = j.gpus <= free_gpus ? place_job(free, nodes_, j) : std::nullopt;
      if (!p) {
        if (!backfill_) break;
        ++it;
        continue;
      }
      free.take(*p, j.gpu_milli);
      free_gpus = free.total_free_gpus(nodes_);
      out.start.push_back(StartJob{j.id, std::move(*p)});
      it = queue_.erase(it);
    }
    return out;
  }

 private:
  bool backfill_;
  int capacity_;
  std::vector<NodeId> nodes_;
  Queue queue_;
};

}  // namespace

std::unique_ptr<Policy> make_fifo_isolated(const PolicyContext& ctx) {
  return std::make_unique<FifoIsolated>(ctx);
}
std::unique_ptr<Policy> make_fifo_pooled(const PolicyContext& ctx) {
  return std::make_unique<FifoPooled>(ctx);
}

}  // namespace ds
