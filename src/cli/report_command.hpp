// `deepshare report DIR`, and the report step at the end of `demo` and `compare`.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace ds {

// Adds the `report` subcommand to `app`; `on_selected(cmd, action)` registers the
// action to run when `cmd` is the selected subcommand.
void register_report(CLI::App& app,
                     const std::function<void(CLI::App*, std::function<int()>)>& on_selected);

// Writes `dir`/report.html after a comparison and prints its path on stdout (as
// `shown_as`/report.html: the folder `dir` becomes once committed; empty: `dir`). A report
// that cannot be written (e.g. the chart library is not installed) is a warning on
// stderr, not a failure of the runs: returns false then.
bool write_report_after_runs(const std::string& dir, const std::string& shown_as = "");

}  // namespace ds
