// The `deepshare` command: simulate, demo, policies, trace stats.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <stdexcept>

#include "cli/commands.hpp"
#include "core/cleanup.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) then fails the write, which is reported and leaves no
  // partial output (core/atomic_file.hpp), instead of killing the process mid-file.
  std::signal(SIGXFSZ, SIG_IGN);
  // SIGINT, SIGTERM, SIGHUP, SIGQUIT remove what is half-written (temporary files, staging
  // folders) before the process ends, so an output is complete or absent (core/cleanup.hpp).
  // `slurm run` sets its own SIGINT/SIGTERM handlers (a graceful stop) over these.
  ds::install_signal_cleanup();
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
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user named cannot be read or written (permissions, a file where a folder
    // is expected): bad input, not a bug.
    std::fprintf(stderr, "deepshare: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "deepshare: error: out of memory\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deepshare: internal error: %s\n", e.what());
    return 3;
  }
}
