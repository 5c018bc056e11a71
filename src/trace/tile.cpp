#include "trace/tile.hpp"

#include <charconv>
#include <fstream>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace ds {
namespace {

std::string suffix(int copy) {
  return copy == 0 ? std::string() : "#" + std::to_string(copy);
}

// A CSV field as is (the names of a Venus-format trace need no quoting).
std::string plain(const std::string& field) {
  if (field.find_first_of(",\"\n\r") != std::string::npos)
    throw InputError("write_venus: '" + field + "' would need CSV quoting");
  return field;
}

// Shortest text that reads back as the same double.
std::string number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

Workload tile_workload(const Workload& w, const TileOptions& o) {
  if (o.copies < 1 || o.repeats < 1) throw InputError("tile: copies and repeats must be >= 1");
  if (o.period <= 0) throw InputError("tile: the period must be > 0");
  if (o.jitter < 0) throw InputError("tile: the jitter must be >= 0");
  Workload t;
  t.name = w.name + (o.copies > 1 || o.repeats > 1
                         ? " tiled x" + std::to_string(o.copies) + " copies x" +
                               std::to_string(o.repeats) + " repeats"
                         : "");
  t.format = w.format;
  t.aux_dir = w.aux_dir;
  t.profiles = w.profiles;
  t.notes = w.notes;
  const std::size_t tenants = w.tenants.size();
  // 1. Tenants, nodes and users of each copy.
  for (int c = 0; c < o.copies; ++c) {
    for (const Tenant& x : w.tenants) {
      Tenant y = x;
      y.name += suffix(c);
      t.tenants.push_back(std::move(y));
    }
    for (const Node& n : w.cluster.nodes) {
      const TenantId owner =
          n.owner.valid() ? TenantId(static_cast<std::uint32_t>(c * tenants + n.owner.index()))
                          : TenantId();
      t.cluster.add_nodes(1, n.gpus, n.gpu_memory_mib, n.gpu_type, owner);
      t.cluster.nodes.back().name = n.name + suffix(c);
    }
  }
  std::vector<std::vector<UserId>> users(static_cast<std::size_t>(o.copies));
  for (int c = 0; c < o.copies; ++c)
    for (const std::string& u : w.users) users[c].push_back(t.intern_user(u + suffix(c)));
  // 3. Per-copy jitter, whole seconds.
  std::vector<Time> shift(static_cast<std::size_t>(o.copies), 0);
  Rng rng(o.seed);
  const auto span = static_cast<std::uint64_t>(o.jitter / kSecond) + 1;
  for (int c = 1; c < o.copies; ++c) shift[c] = seconds(static_cast<std::int64_t>(rng.below(span)));
  // 2 + 4. Jobs in (repeat, copy, input) order; finalize() sorts by submit stably.
  t.jobs.reserve(w.jobs.size() * static_cast<std::size_t>(o.copies * o.repeats));
  t.truth.reserve(t.jobs.capacity());
  for (int r = 0; r < o.repeats; ++r)
    for (int c = 0; c < o.copies; ++c)
      for (std::size_t i = 0; i < w.jobs.size(); ++i) {
        JobSpec j = w.jobs[i];
        if (c != 0 || r != 0) j.name += "#" + std::to_string(c) + "." + std::to_string(r);
        j.tenant = TenantId(static_cast<std::uint32_t>(c * tenants + j.tenant.index()));
        if (j.user.valid() && j.user.index() < w.users.size()) j.user = users[c][j.user.index()];
        j.submit += shift[c] + r * o.period;
        t.jobs.push_back(std::move(j));
        t.truth.push_back(w.truth[i]);
      }
  t.finalize();
  return t;
}

void write_venus(const Workload& w, const std::string& jobs_csv, const std::string& vc_config_csv) {
  // The cluster must be what read_vc_config() builds: per tenant, in tenant order, its
  // 8-GPU nodes; quota = its GPUs.
  std::vector<int> nodes(w.tenants.size(), 0);
  std::size_t k = 0;
  for (std::size_t t = 0; t < w.tenants.size(); ++t) {
    while (k < w.cluster.nodes.size() && w.cluster.nodes[k].owner.index() == t) {
      if (w.cluster.nodes[k].gpus != 8)
        throw InputError("write_venus: node '" + w.cluster.nodes[k].name + "' has not 8 GPUs");
      ++nodes[t];
      ++k;
    }
    if (w.tenants[t].quota_gpus != nodes[t] * 8)
      throw InputError("write_venus: tenant '" + w.tenants[t].name +
                       "' has a quota other than its nodes' GPUs");
  }
  if (k != w.cluster.nodes.size())
    throw InputError("write_venus: nodes are not grouped by owner in tenant order");

  std::ofstream vc(vc_config_csv, std::ios::binary);
  vc << ",num\n";
  for (std::size_t t = 0; t < w.tenants.size(); ++t)
    vc << w.tenants[t].name << ',' << nodes[t] << '\n';
  if (!vc) throw InputError("cannot write '" + vc_config_csv + "'");

  std::ofstream out(jobs_csv, std::ios::binary);
  out << "job_id,user,vc,gpu_num,state,submit_time,duration,dataset,model,batchsize,amp,"
         "gpu_util,gmem,lucid_vc_order\n";
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobSpec& j = w.jobs[i];
    const JobTruth& truth = w.truth[i];
    if (j.submit % kSecond != 0 || truth.work % kSecond != 0 || j.gpu_milli != kMilliPerGpu)
      throw InputError("write_venus: job '" + j.name +
                       "' needs whole seconds and whole GPUs (Venus format)");
    const Profile* p = j.profile >= 0 ? &w.profiles[static_cast<std::size_t>(j.profile)] : nullptr;
    out << plain(j.name) << ',' << (j.user.valid() ? plain(w.users[j.user.index()]) : "") << ','
        << plain(w.tenants[j.tenant.index()].name) << ',' << j.gpus << ',' << to_string(truth.state)
        << ',' << j.submit / kSecond << ',' << truth.work / kSecond << ',' << (p ? p->dataset : "")
        << ',' << (p ? p->model : "") << ','
        << (p && p->batch_size ? std::to_string(p->batch_size) : "") << ','
        << (p ? (p->amp ? "1" : "0") : "") << ',' << (j.gpu_util >= 0 ? number(j.gpu_util) : "")
        << ',' << (j.gpu_memory_mib > 0 ? number(j.gpu_memory_mib) : "") << ',' << i << '\n';
  }
  if (!out) throw InputError("cannot write '" + jobs_csv + "'");
}

}  // namespace ds
