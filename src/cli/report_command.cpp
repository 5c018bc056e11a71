// The `report` subcommand: builds DIR/report.html from the run folders under DIR
// (src/report/report_html.hpp). Bad input and a missing chart library are InputErrors
// (exit status 2, with the message saying how to install the library).
#include "cli/report_command.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "cli/validators.hpp"
#include "core/error.hpp"
#include "report/report_html.hpp"

namespace ds {
namespace {

std::string g_dir;

int cmd_report() {
  const std::string path = report::write_report(g_dir, DEEPSHARE_VERSION);
  std::printf("HTML report: %s\n", path.c_str());
  return 0;
}

}  // namespace

void register_report(CLI::App& app,
                     const std::function<void(CLI::App*, std::function<int()>)>& on_selected) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write DIR/report.html: an interactive, self-contained page (opens offline) with the "
      "headline table, JCT and queueing CDFs, utilization, assurance, preemptions, model "
      "accuracy and provenance of the runs in DIR");
  cmd->add_option("dir", g_dir,
                  "A run folder (`simulate --out`) or a comparison folder (`demo`, `compare`)")
      ->required()
      ->check(non_empty_path());
  cmd->footer(
      "The chart library comes from web/node_modules (installed by scripts/setup.sh);\n"
      "DEEPSHARE_WEB_DIR overrides the web folder. See docs/report.md.");
  on_selected(cmd, cmd_report);
}

bool write_report_after_runs(const std::string& dir, const std::string& shown_as) {
  try {
    report::write_report(dir, DEEPSHARE_VERSION, shown_as);
    const std::string path =
        (std::filesystem::path(shown_as.empty() ? dir : shown_as) / "report.html").string();
    std::printf("HTML report: %s\n", path.c_str());
    return true;
  } catch (const InputError& e) {
    std::fprintf(stderr, "deepshare: warning: no HTML report: %s\n", e.what());
    return false;
  }
}

}  // namespace ds
