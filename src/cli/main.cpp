// The `deepshare` command: simulate, demo, policies, trace stats.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "cli/commands.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "DeepShare: assurance-driven GPU cluster scheduling.\n"
      "Replays GPU job traces through a deterministic simulator and compares scheduling\n"
      "policies; see docs/ for formats, metrics and the architecture."};
  app.set_version_flag("--version", DEEPSHARE_VERSION);
  app.require_subcommand(1);
  ds::register_commands(app);
  try {
    app.parse(argc, argv);
    return ds::run_selected_command(app);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; any usage error exits 2, like bad input.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const ds::InputError& e) {
    std::fprintf(stderr, "deepshare: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deepshare: internal error: %s\n", e.what());
    return 3;
  }
}
