// predictor_eval: replays the Venus trace in submit order, predicts every job's run time
// at its submit from the jobs finished before then, and compares the accuracy with
// Lucid's own duration estimates for the same jobs (docs/prediction.md).
//
// Finish times ("--finish fifo", the default) come from our fifo-isolated simulation
// (Lucid's FIFO, which reproduces Lucid's logs): a job is observed at its simulated end,
// with its run time. "--finish immediate" uses submit + duration instead (as if every
// job started at once: more history earlier, an optimistic bound).
// Lucid's files give one estimate per job_id (seconds): LightGBM (QSSF) and EBM
// retrained weekly (Lucid replaces negative values by 1000 s; we do the same, and for 0).
//
// Usage: predictor_eval [TRACE] [--finish fifo|immediate] [--aux DIR]
//                       [--strength k0,k1,k2,k3,k4] [--decay d0,...,d4] [--prior SECONDS]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "baselines/fifo.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "policy/predict/predictor.hpp"
#include "sim/simulator.hpp"
#include "trace/load.hpp"

namespace {
namespace fs = std::filesystem;

// job_id -> estimate (ms), Lucid's treatment of non-positive values.
std::map<std::string, ds::Time> read_estimates(const std::string& path) {
  std::map<std::string, ds::Time> out;
  ds::CsvReader csv = ds::CsvReader::open(path);
  csv.read_header();
  const auto c_id = csv.require_column("job_id");
  const auto c_p = csv.require_column("priority");
  while (csv.next()) {
    double s = csv.get_double(c_p);
    if (s <= 0) s = 1000;
    out.emplace(std::string(csv.field(c_id)), static_cast<ds::Time>(s * ds::kSecond));
  }
  return out;
}

bool parse_list(const std::string& s, std::array<double, ds::kHistoryLevels>& out) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto end = s.find(',', pos);
    const auto v = ds::parse_double(s.substr(pos, end == std::string::npos ? end : end - pos));
    if (!v) return false;
    out[i] = *v;
    if (end == std::string::npos) return i + 1 == out.size();
    pos = end + 1;
  }
  return false;
}

struct Row {
  std::string name;
  ds::AccuracyTracker acc;
  std::vector<double> predicted, actual;  // for the rank correlation
  void add(ds::JobId id, ds::Time p, ds::Time a) {
    acc.predicted(id, p);
    acc.finished(id, a);
    predicted.push_back(static_cast<double>(p));
    actual.push_back(static_cast<double>(a));
  }
};

// Ranks with ties averaged (1-based).
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t k = i;
    while (k + 1 < idx.size() && v[idx[k + 1]] == v[idx[i]]) ++k;
    for (std::size_t m = i; m <= k; ++m) r[idx[m]] = (static_cast<double>(i + k) / 2.0) + 1.0;
    i = k + 1;
  }
  return r;
}

// Spearman's rank correlation: how well the estimate orders jobs (what SJF-like queues use).
double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) mx += rx[i], my += ry[i];
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string venus = std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept";
  std::string trace = venus + "/venus_sept_23859_jobs.csv";
  std::string aux = venus + "/aux";
  std::string finish = "fifo";
  ds::PredictorConfig cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--finish" && more) {
      finish = argv[++i];
    } else if (a == "--aux" && more) {
      aux = argv[++i];
    } else if (a == "--strength" && more) {
      if (!parse_list(argv[++i], cfg.strength)) return std::fprintf(stderr, "bad --strength\n"), 2;
    } else if (a == "--decay" && more) {
      if (!parse_list(argv[++i], cfg.decay)) return std::fprintf(stderr, "bad --decay\n"), 2;
    } else if (a == "--prior" && more) {
      cfg.prior_runtime = ds::seconds(std::atoll(argv[++i]));
    } else if (!a.empty() && a[0] != '-') {
      trace = a;
    } else {
      std::fprintf(stderr,
                   "usage: %s [TRACE] [--finish fifo|immediate] [--aux DIR] "
                   "[--strength k0,..,k4] [--decay d0,..,d4] [--prior SECONDS]\n",
                   argv[0]);
      return 2;
    }
  }
  if (finish != "fifo" && finish != "immediate") {
    std::fprintf(stderr, "--finish must be fifo or immediate\n");
    return 2;
  }
  if (!fs::exists(trace)) {
    std::printf("skipped: no Venus trace at %s\n", trace.c_str());
    return 0;
  }
  try {
    ds::LoadOptions lo;
    lo.format = "venus";
    const ds::Workload w = ds::load_trace(trace, lo);
    const std::size_t n = w.jobs.size();

    // 1. When each job finishes, and what run time the predictor is told.
    std::vector<ds::Time> end(n, ds::kNever), runtime(n, 0);
    if (finish == "fifo") {
      ds::PolicyOptions po;
      auto fifo = ds::make_fifo_isolated(ds::PolicyContext{w.cluster, w.tenants, po});
      const auto r = ds::simulate(w, *fifo);
      for (std::size_t j = 0; j < n; ++j)
        if (r.jobs[j].end != ds::kNever) {
          end[j] = r.jobs[j].end;
          runtime[j] = r.jobs[j].end - r.jobs[j].first_start;
        }
    } else {
      for (std::size_t j = 0; j < n; ++j) {
        end[j] = w.jobs[j].submit + w.truth[j].work;
        runtime[j] = w.truth[j].work;
      }
    }
    std::vector<std::size_t> by_end(n);
    for (std::size_t j = 0; j < n; ++j) by_end[j] = j;
    std::stable_sort(by_end.begin(), by_end.end(),
                     [&](std::size_t a, std::size_t b) { return end[a] < end[b]; });

    // 2. Lucid's estimates; score only jobs that every predictor covers.
    const bool lucid = fs::exists(aux + "/Venus_Sept_lgb.csv") &&
                       fs::exists(aux + "/Venus_Sept_ebm_weekly_updated.csv");
    std::map<std::string, ds::Time> lgb, ebm;
    if (lucid) {
      lgb = read_estimates(aux + "/Venus_Sept_lgb.csv");
      ebm = read_estimates(aux + "/Venus_Sept_ebm_weekly_updated.csv");
    } else {
      std::printf("note: Lucid's estimate files are not in %s; ours only\n", aux.c_str());
    }

    // 3. Replay in submit order: observe what finished by the submit, then predict.
    const std::vector<std::string> kinds = {"history", "user", "tenant", "global"};
    std::vector<std::unique_ptr<ds::RuntimePredictor>> preds;
    std::vector<Row> rows;
    for (const auto& k : kinds) {
      ds::PredictorConfig c = cfg;
      c.kind = k;
      preds.push_back(ds::make_predictor(c));
      rows.push_back(Row{"ours: " + k, {}, {}, {}});
    }
    rows.push_back(Row{"Lucid LightGBM (QSSF)", {}, {}, {}});
    rows.push_back(Row{"Lucid EBM, weekly retrained", {}, {}, {}});
    std::size_t next_end = 0, skipped = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const ds::JobSpec& job = w.jobs[j];
      while (next_end < n && end[by_end[next_end]] <= job.submit) {
        const std::size_t f = by_end[next_end++];
        for (auto& p : preds) p->observe(w.jobs[f], runtime[f]);
      }
      const ds::Time actual = w.truth[j].work;
      const auto l = lgb.find(job.name);
      const auto e = ebm.find(job.name);
      if (actual <= 0 || (lucid && (l == lgb.end() || e == ebm.end()))) {
        ++skipped;
        continue;
      }
      for (std::size_t k = 0; k < preds.size(); ++k)
        rows[k].add(job.id, preds[k]->predict(job), actual);
      if (lucid) {
        rows[kinds.size()].add(job.id, l->second, actual);
        rows[kinds.size() + 1].add(job.id, e->second, actual);
      }
    }
    std::printf("trace %s: %zu jobs, %zu scored (%zu skipped: 0 s run time or no Lucid estimate)\n",
                trace.c_str(), n, rows[0].acc.scored(), skipped);
    std::printf("finish times: %s\n\n",
                finish == "fifo" ? "fifo-isolated simulation" : "submit + duration");
    std::printf(
        "| predictor | median abs log2 error | within 2x | mean abs log2 error | Spearman |\n");
    std::printf("|---|---|---|---|---|\n");
    for (const auto& r : rows) {
      if (r.acc.scored() == 0) continue;
      std::printf("| %s | %.3f | %.1f%% | %.3f | %.3f |\n", r.name.c_str(),
                  r.acc.median_abs_log2_error(), 100 * r.acc.within_2x(),
                  r.acc.mean_abs_log2_error(), spearman(r.predicted, r.actual));
    }
  } catch (const ds::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
