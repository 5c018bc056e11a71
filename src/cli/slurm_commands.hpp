// `deepshare slurm run|replay` and `deepshare fidelity` (docs/slurm.md).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace ds {

// Adds the subcommands; `add_action` records what each one runs (as in commands.cpp).
void register_slurm_commands(
    CLI::App& app, const std::function<void(CLI::App*, std::function<int()>)>& add_action);

}  // namespace ds
