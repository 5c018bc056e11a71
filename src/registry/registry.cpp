#include "registry/registry.hpp"

#include "baselines/fifo.hpp"
#include "baselines/kueue.hpp"
#include "baselines/lucid.hpp"
#include "baselines/qssf.hpp"
#include "baselines/sjf.hpp"
#include "baselines/slurm.hpp"
#include "baselines/srtf.hpp"
#include "baselines/tiresias.hpp"
#include "core/error.hpp"
#include "policy/deepshare/deepshare.hpp"

namespace ds {

const std::vector<PolicyInfo>& policy_registry() {
  static const std::vector<PolicyInfo> table = {
      {"deepshare",
       "DeepShare: assurance-driven lending, cost-aware reclaim, predicted-runtime order, "
       "interference-aware MPS sharing",
       deepshare_options(), &make_deepshare},
      {"fifo-isolated",
       "Lucid's FIFO: each tenant on its own virtual cluster, head-of-line blocking, "
       "consolidate placement",
       "", &make_fifo_isolated},
      {"fifo-pooled", "One shared pool, FIFO order with greedy backfill", "backfill=on|off",
       &make_fifo_pooled},
      {"kueue",
       "Kubernetes Kueue: nominal quota per tenant in one cohort, borrowing of idle quota, "
       "reclaim by preempting borrowers, optional fair sharing (weighted DRS)",
       kueue_options(), &make_kueue},
      {"lucid",
       "Lucid: profiler stage, estimated-GPU-time order, prescient sharing switch, pairing "
       "by sharescore (fidelity=lucid: Lucid's estimate and forecast files, per-VC)",
       lucid_options(), &make_lucid},
      {"sjf", "Lucid's SJF: shortest true run time first (oracle), head-of-line blocking",
       "scope=isolated|pooled, backfill=on|off", &make_sjf, true},
      {"srtf",
       "Lucid's SRTF: preemptive shortest remaining true run time first (oracle), GPU budget "
       "per virtual cluster",
       "scope=isolated|pooled", &make_srtf, true},
      {"qssf",
       "Helios' QSSF as in Lucid: shortest estimated GPU time first (online predictor, or "
       "Lucid's estimates with fidelity=lucid)",
       "fidelity=lucid|off, estimates=lgb|ebm, predictor=history|tenant|global, "
       "scope=isolated|pooled, backfill=on|off",
       &make_qssf},
      {"tiresias",
       "Tiresias' discretized 2D-LAS as in Lucid: two queues split at 18,000 GPU-s, "
       "preemptive decisions every 60 s",
       "scope=isolated|pooled, threshold=GPU-SECONDS, interval=SECONDS", &make_tiresias},
      {"slurm",
       "Slurm as a GPU site runs it: multifactor priority (Fair Tree), backfill with time "
       "limits, quota per account QOS (GrpTRES), borrowing in a scavenger QOS that preempt/qos "
       "requeues",
       slurm_options(), &make_slurm},
  };
  return table;
}

const PolicyInfo* find_policy(const std::string& name) {
  for (const auto& info : policy_registry())
    if (info.name == name) return &info;
  return nullptr;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyContext& given) {
  for (const auto& info : policy_registry()) {
    if (info.name != name) continue;
    PolicyContext ctx = given;
    if (!info.oracle) ctx.oracle_work = {};
    auto policy = info.make(ctx);
    auto unused = ctx.options.unused();
    if (!unused.empty()) {
      std::string keys;
      for (const auto& k : unused) keys += (keys.empty() ? "" : ", ") + k;
      throw InputError(
          "policy '" + name + "' has no option " + keys +
          (info.options.empty() ? " (it takes none)" : " (it reads: " + info.options + ")"));
    }
    return policy;
  }
  std::string known;
  for (const auto& info : policy_registry()) known += (known.empty() ? "" : ", ") + info.name;
  throw InputError("unknown policy '" + name + "' (known: " + known + ")");
}

}  // namespace ds
