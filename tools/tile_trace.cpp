// tile_trace: writes a tiled copy of a trace (src/trace/tile.hpp defines the tiling) as a
// Venus-format trace that `deepshare simulate` replays: OUT/jobs.csv, OUT/aux/vc_config.csv,
// and links to the source's measured colocation files (colocate_info.csv, single_data.csv:
// measurements by model, valid for every copy). Lucid's estimate and forecast files describe
// the one original trace and are not carried over (a tiled replay forecasts online).
//
// Usage: tile_trace --trace FILE [--format venus] --copies K [--repeats R] [--period-days D]
//                   [--jitter-s J] [--seed S] --out DIR
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "core/error.hpp"
#include "trace/load.hpp"
#include "trace/tile.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  CLI::App app{
      "Tile a trace: K copies side by side (own tenants, nodes and users, per-copy "
      "arrival jitter), R repeats in time; writes a Venus-format trace"};
  std::string trace, format = "venus", out;
  ds::TileOptions o;
  double period_days = 30;
  std::int64_t jitter_s = 600;
  app.add_option("--trace", trace, "Source trace")->required();
  app.add_option("--format", format, "Source format")->capture_default_str();
  app.add_option("--copies", o.copies, "K: copies side by side")->capture_default_str();
  app.add_option("--repeats", o.repeats, "R: repeats in time")->capture_default_str();
  app.add_option("--period-days", period_days, "P: shift between repeats, days")
      ->capture_default_str();
  app.add_option("--jitter-s", jitter_s, "J: largest per-copy arrival shift, seconds")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of the jitter")->capture_default_str();
  app.add_option("--out", out, "Output folder")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    o.period = static_cast<ds::Time>(period_days * static_cast<double>(ds::kDay));
    o.jitter = ds::seconds(jitter_s);
    ds::LoadOptions lo;
    lo.format = format;
    const ds::Workload w = ds::load_trace(trace, lo);
    const ds::Workload t = ds::tile_workload(w, o);
    fs::create_directories(fs::path(out) / "aux");
    ds::write_venus(t, (fs::path(out) / "jobs.csv").string(),
                    (fs::path(out) / "aux" / "vc_config.csv").string());
    for (const char* f : {"colocate_info.csv", "single_data.csv"}) {
      const fs::path src = fs::path(w.aux_dir) / f, dst = fs::path(out) / "aux" / f;
      if (w.aux_dir.empty() || !fs::exists(src)) continue;
      fs::remove(dst);
      fs::create_symlink(fs::absolute(src), dst);
    }
    std::printf("%s: %zu jobs, %zu tenants, %d GPUs, span %.1f days\n",
                (fs::path(out) / "jobs.csv").c_str(), t.jobs.size(), t.tenants.size(),
                t.cluster.total_gpus(),
                t.jobs.empty()
                    ? 0.0
                    : ds::to_seconds(t.jobs.back().submit - t.jobs.front().submit) / 86400.0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tile_trace: %s\n", e.what());
    return 2;
  }
  return 0;
}
