#include "trace/slurm_assoc.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/slurm_text.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace {

constexpr const char* kAssocCommand =
    "sacctmgr show assoc --parsable2 format=Cluster,Account,User,Partition,ParentName,Share,"
    "GrpTRES,QOS,DefaultQOS";
constexpr const char* kQosCommand = "sacctmgr show qos --parsable2 format=Name,GrpTRES";

struct Account {
  std::string name;
  std::string parent;  // empty: top level
  std::optional<std::int64_t> grp_gpus;
  std::optional<double> share;  // nullopt: "parent"
  std::string own_qos;          // default QOS, else the only allowed one
  long line = 0;
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const auto comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (!item.empty()) out.emplace_back(item);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
  }
  return out;
}

std::optional<std::int64_t> grp_gpus(const PipeTable& t, std::optional<std::size_t> column) {
  if (!column) return std::nullopt;
  const GpuTres tres = slurm_tres(t, *column);
  return tres.has_gpus ? std::optional<std::int64_t>(tres.gpus) : std::nullopt;
}

std::optional<double> share(const PipeTable& t, std::optional<std::size_t> column) {
  if (!column || t.field(*column).empty()) return 1.0;
  if (lower(t.field(*column)) == "parent") return std::nullopt;
  const auto v = parse_int(t.field(*column));
  if (!v || *v < 0 || *v > 1'000'000'000) t.fail(*column, "a fair-share value 0..1e9 or parent");
  return *v == 0 ? 1.0 : static_cast<double>(*v);
}

// Assumption 1: the account rows, in file order.
std::vector<Account> read_accounts(const std::string& path) {
  PipeTable t = PipeTable::open(path, kAssocCommand);
  const std::size_t c_account = t.require({"Account"});
  const auto c_user = t.find({"User"}), c_part = t.find({"Partition"}),
             c_cluster = t.find({"Cluster"}), c_grp = t.find({"GrpTRES"}),
             c_share = t.find({"Share", "Fairshare"}), c_qos = t.find({"QOS"}),
             c_def = t.find({"Def QOS", "DefaultQOS"}),
             c_parent = t.find({"Par Name", "ParentName"});
  std::vector<Account> out;
  std::vector<std::pair<std::size_t, std::string>> path_by_depth;  // `tree`: open ancestors
  std::unordered_map<std::string, long> seen;
  std::string cluster;
  while (t.next()) {
    if (c_cluster && !t.field(*c_cluster).empty()) {
      if (cluster.empty()) cluster = std::string(t.field(*c_cluster));
      if (t.field(*c_cluster) != cluster)
        t.fail(*c_cluster, "one cluster per file (first " + quote_input(cluster) +
                               "; dump one with `sacctmgr show assoc cluster=NAME`)");
    }
    const std::string_view raw = t.field(c_account);
    const std::size_t depth = raw.find_first_not_of(' ');
    if (depth == std::string_view::npos) t.fail(c_account, "an account name");
    if ((c_user && !t.field(*c_user).empty()) || (c_part && !t.field(*c_part).empty())) continue;
    Account a;
    a.name = lower(raw.substr(depth));
    a.line = t.line();
    if (auto [it, fresh] = seen.emplace(a.name, t.line()); !fresh)
      throw InputError(t.where(c_account), "field 'Account': account " + quote_input(a.name) +
                                               " is listed twice (first on line " +
                                               std::to_string(it->second) + ")");
    while (!path_by_depth.empty() && path_by_depth.back().first >= depth) path_by_depth.pop_back();
    if (c_parent && !t.field(*c_parent).empty()) {
      a.parent = lower(t.field(*c_parent));
    } else if (!path_by_depth.empty()) {
      a.parent = path_by_depth.back().second;
    }
    path_by_depth.emplace_back(depth, a.name);
    a.grp_gpus = grp_gpus(t, c_grp);
    a.share = share(t, c_share);
    const std::string def = c_def ? lower(t.field(*c_def)) : "";
    const auto allowed = c_qos ? split_list(lower(t.field(*c_qos))) : std::vector<std::string>{};
    a.own_qos = !def.empty() ? def : allowed.size() == 1 ? allowed[0] : "";
    if (a.parent == "root") a.parent.clear();
    out.push_back(std::move(a));
  }
  return out;
}

std::unordered_map<std::string, std::optional<std::int64_t>> read_qos(const std::string& path) {
  std::unordered_map<std::string, std::optional<std::int64_t>> out;
  if (path.empty()) return out;
  PipeTable t = PipeTable::open(path, kQosCommand);
  const std::size_t c_name = t.require({"Name"});
  const auto c_grp = t.find({"GrpTRES"});
  while (t.next()) {
    const std::string name = lower(t.field(c_name));
    if (name.empty()) t.fail(c_name, "a QOS name");
    if (!out.emplace(name, grp_gpus(t, c_grp)).second)
      t.fail(c_name, "a QOS listed once (" + quote_input(name) + " is listed twice)");
  }
  return out;
}

// Assumption 2: each account's own limit (association or its own QOS).
std::vector<std::optional<std::int64_t>> own_limits(
    const std::vector<Account>& accounts,
    const std::unordered_map<std::string, std::optional<std::int64_t>>& qos,
    std::vector<std::string>& notes) {
  std::unordered_map<std::string, int> holders;  // QOS -> accounts that have it as their own
  for (const auto& a : accounts)
    if (!a.own_qos.empty()) ++holders[a.own_qos];
  std::vector<std::optional<std::int64_t>> out;
  for (const auto& a : accounts) {
    std::optional<std::int64_t> limit = a.grp_gpus;
    const auto q = qos.find(a.own_qos);
    if (q != qos.end() && q->second && holders[a.own_qos] == 1) {
      notes.push_back("slurm: account " + quote_input(a.name) + ": quota " +
                      std::to_string(*q->second) + " GPUs from its QOS " + quote_input(a.own_qos) +
                      " (GrpTRES gres/gpu)" +
                      (a.grp_gpus && *a.grp_gpus != *q->second
                           ? "; its association's " + std::to_string(*a.grp_gpus) +
                                 " does not apply (a QOS limit comes first)"
                           : ""));
      limit = q->second;
    } else if (q != qos.end() && q->second && !a.grp_gpus) {
      notes.push_back("slurm: account " + quote_input(a.name) + ": QOS " + quote_input(a.own_qos) +
                      " limits several accounts together: not a quota of one (quota 0)");
    }
    out.push_back(limit);
  }
  return out;
}

// Assumption 3, top-down: children's quotas fit in their parent's limit; the parent keeps the
// rest. `quota[i]` holds each account's limit on entry (-1: none), its tenant quota on return.
void fit_subtrees(const std::vector<Account>& accounts, std::vector<std::int64_t>& quota,
                  std::vector<std::string>& notes) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < accounts.size(); ++i) index.emplace(accounts[i].name, i);
  std::vector<std::vector<std::size_t>> children(accounts.size());
  std::vector<std::size_t> order;  // parents before children
  for (std::size_t i = 0; i < accounts.size(); ++i) {
    const auto p = index.find(accounts[i].parent);
    if (p != index.end() && p->second != i) children[p->second].push_back(i);
  }
  for (std::size_t i = 0; i < accounts.size(); ++i)
    if (!index.contains(accounts[i].parent) || index.at(accounts[i].parent) == i)
      order.push_back(i);
  for (std::size_t k = 0; k < order.size(); ++k)
    for (std::size_t c : children[order[k]]) order.push_back(c);
  for (std::size_t i : order) {
    if (quota[i] < 0) continue;
    std::vector<std::size_t> limited;
    std::int64_t sum = 0;
    for (std::size_t c : children[i]) {
      if (quota[c] < 0) continue;
      if (quota[c] > quota[i]) quota[c] = quota[i];  // never more than the parent's limit
      limited.push_back(c);
      sum += quota[c];
    }
    if (sum > quota[i]) {
      std::vector<double> demand;
      for (std::size_t c : limited) demand.push_back(static_cast<double>(quota[c]));
      const auto fit = split_quota(static_cast<int>(quota[i]), demand);
      std::string list;
      for (std::size_t k = 0; k < limited.size(); ++k) {
        list += (list.empty() ? "" : ", ") + accounts[limited[k]].name + " " +
                std::to_string(quota[limited[k]]) + " -> " + std::to_string(fit[k]);
        quota[limited[k]] = fit[k];
      }
      notes.push_back("slurm: account " + quote_input(accounts[i].name) + " limits its " +
                      "sub-accounts to " + std::to_string(quota[i]) + " GPUs: their quotas " +
                      "scaled to fit (" + list + ")");
      sum = quota[i];
    }
    if (sum > 0)
      notes.push_back("slurm: account " + quote_input(accounts[i].name) + ": " +
                      std::to_string(sum) + " of its " + std::to_string(quota[i]) +
                      " GPUs go to its sub-accounts, it keeps " + std::to_string(quota[i] - sum));
    quota[i] -= sum;
  }
}

}  // namespace

SlurmTenants read_slurm_tenants(const std::string& assoc_path, const std::string& qos_path) {
  const std::vector<Account> accounts = read_accounts(assoc_path);
  const auto qos = read_qos(qos_path);
  SlurmTenants out;
  const auto limits_of = own_limits(accounts, qos, out.notes);
  std::vector<std::int64_t> quota;
  for (const auto& l : limits_of)
    quota.push_back(l ? std::min<std::int64_t>(*l, limits::kMaxClusterGpus) : -1);
  fit_subtrees(accounts, quota, out.notes);
  std::unordered_map<std::string, double> weight;  // resolved top-down by file order of parents
  std::int64_t total = 0;
  for (std::size_t i = 0; i < accounts.size(); ++i) {
    const Account& a = accounts[i];
    const auto parent = weight.find(a.parent);
    const double w = a.share ? *a.share : parent != weight.end() ? parent->second : 1.0;
    weight[a.name] = w;
    if (a.name == "root") continue;
    Tenant t;
    t.id = TenantId(static_cast<std::uint32_t>(out.tenants.size()));
    t.name = a.name;
    t.quota_gpus = static_cast<int>(std::max<std::int64_t>(0, quota[i]));
    t.cls = t.quota_gpus > 0 ? TenantClass::Guaranteed : TenantClass::BestEffort;
    t.weight = w;
    total += t.quota_gpus;
    if (out.tenants.size() >= limits::kMaxTenants || total > limits::kMaxQuotaTotal)
      throw InputError(SourceLocation{assoc_path, a.line},
                       "more than " + std::to_string(limits::kMaxTenants) +
                           " accounts or quotas above " + std::to_string(limits::kMaxQuotaTotal) +
                           " GPUs in all");
    out.tenants.push_back(std::move(t));
  }
  return out;
}

}  // namespace ds
