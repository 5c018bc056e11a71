// The report page writer (contracts in report_html.hpp).
#include "report/report_html.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "report/report_data.hpp"

#ifndef DEEPSHARE_WEB_DIR
#define DEEPSHARE_WEB_DIR "web"
#endif

namespace ds::report {
namespace fs = std::filesystem;

namespace {

constexpr const char* kTemplate = "report_template.html";
constexpr const char* kLibrary = "node_modules/echarts/dist/echarts.common.min.js";

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON that is safe inside <script>: every '<' (only possible inside strings) escaped.
std::string script_json(const nlohmann::ordered_json& data) {
  const std::string raw = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

// A script body that cannot close its element early ("</script" written as "<\/script",
// the same text inside a JavaScript string literal).
std::string script_text(std::string js) {
  for (std::size_t pos = 0; (pos = js.find("</", pos)) != std::string::npos; pos += 3) {
    std::string next = js.substr(pos + 2, 6);
    for (char& c : next) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (next == "script") js.replace(pos, 2, "<\\/");
  }
  return js;
}

}  // namespace

std::string web_dir() {
  if (const char* env = std::getenv("DEEPSHARE_WEB_DIR"); env && *env) return env;
  return DEEPSHARE_WEB_DIR;
}

WebAssets load_web_assets(const std::string& dir) {
  const fs::path d(dir);
  const fs::path lib = d / kLibrary, tpl = d / kTemplate;
  if (!fs::is_regular_file(lib))
    throw InputError(SourceLocation{lib.string()},
                     "chart library (Apache ECharts) not found; install it with "
                     "`bash scripts/setup.sh` (or `npm ci --prefix web` in the project), or "
                     "set DEEPSHARE_WEB_DIR to a folder holding report_template.html and "
                     "node_modules/echarts");
  if (!fs::is_regular_file(tpl))
    throw InputError(SourceLocation{tpl.string()},
                     "report page template not found; set DEEPSHARE_WEB_DIR to the project's "
                     "web/ folder (its chart library is installed by `bash scripts/setup.sh`)");
  return {read_file(tpl.string()), read_file(lib.string())};
}

std::string render_report_html(const nlohmann::ordered_json& data, const WebAssets& assets,
                               const std::string& version) {
  const std::string& t = assets.page_template;
  // The trace's file name, not its path, in the title (the page shows the full path).
  std::string trace = data.contains("meta") ? data["meta"].value("trace", "") : "";
  if (trace.find('/') != std::string::npos) trace = fs::path(trace).filename().string();
  const std::vector<std::pair<std::string, std::string>> fills = {
      {"@@TITLE@@", html_escape("DeepShare report" + (trace.empty() ? "" : ": " + trace))},
      {"@@VERSION@@", html_escape(version)},
      {"@@CHART_LIBRARY@@", script_text(assets.chart_library)},
      {"@@REPORT_DATA@@", script_json(data)},
  };
  // Every occurrence of each placeholder, in template order, filled in one pass.
  std::vector<std::pair<std::size_t, std::size_t>> hits;  // (position, fill index)
  for (std::size_t k = 0; k < fills.size(); ++k) {
    std::size_t pos = t.find(fills[k].first);
    if (pos == std::string::npos && fills[k].first != "@@VERSION@@")
      throw InputError("report page template lacks the placeholder " + fills[k].first);
    for (; pos != std::string::npos; pos = t.find(fills[k].first, pos + 1))
      hits.push_back({pos, k});
  }
  std::sort(hits.begin(), hits.end());
  std::string out;
  out.reserve(t.size() + assets.chart_library.size() + 4096);
  std::size_t at = 0;
  for (const auto& [pos, k] : hits) {
    out.append(t, at, pos - at);
    out += fills[k].second;
    at = pos + fills[k].first.size();
  }
  out.append(t, at, std::string::npos);
  return out;
}

std::string write_report(const std::string& dir, const std::string& version,
                         const std::string& shown_as) {
  const WebAssets assets = load_web_assets(web_dir());  // fail early, before reading runs
  DataOptions options;
  options.folder = shown_as;
  const nlohmann::ordered_json data = build_report_data(dir, options);
  const fs::path out = fs::path(dir) / "report.html";
  write_file_atomic(out.string(), render_report_html(data, assets, version));
  return out.string();
}

}  // namespace ds::report
