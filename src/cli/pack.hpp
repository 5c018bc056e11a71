#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace ds {

// Adds `deepshare pack` (the FGD-style packing experiment) to `app`.
void register_pack(CLI::App& app,
                   const std::function<void(CLI::App*, std::function<int()>)>& on_selected);

}  // namespace ds
