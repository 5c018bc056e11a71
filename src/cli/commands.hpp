#pragma once

#include <CLI/CLI.hpp>

namespace ds {

// Adds the subcommands to `app`; run_selected_command executes the parsed one.
void register_commands(CLI::App& app);
int run_selected_command(CLI::App& app);

}  // namespace ds
