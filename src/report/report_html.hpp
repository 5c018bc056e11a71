// The self-contained HTML report (report.html): the page template, the chart library
// and the report's data inlined into one file that opens offline in any browser.
//
// Assumptions:
//  - The page template (report_template.html) and the chart library (Apache ECharts,
//    node_modules/echarts/dist/echarts.common.min.js, installed by scripts/setup.sh
//    with `npm ci --prefix web`) live in the web folder: $DEEPSHARE_WEB_DIR when set,
//    else the source tree's web/ as configured by CMake. Both are read at run time.
//  - The template holds the placeholders @@TITLE@@, @@CHART_LIBRARY@@ and
//    @@REPORT_DATA@@ (inside <script type="application/json">), and may hold
//    @@VERSION@@; every occurrence is filled. Inserted text is never scanned again, and '<' in the
//    data is written as \u003c so that no string in it can end the script element.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ds::report {

struct WebAssets {
  std::string page_template;
  std::string chart_library;
};

// The web folder: $DEEPSHARE_WEB_DIR, else the configured default.
std::string web_dir();

// Reads the template and the chart library from `dir`; throws InputError telling how
// to install them when either is missing.
WebAssets load_web_assets(const std::string& dir);

// The page for `data` (as built by build_report_data). Throws InputError when the
// template lacks a placeholder.
std::string render_report_html(const nlohmann::ordered_json& data, const WebAssets& assets,
                               const std::string& version);

// Builds the data of the run or comparison folder `dir` and writes `dir`/report.html;
// returns that path. `shown_as` names the folder in the page (a staging folder is shown
// as the folder it becomes; empty: `dir`). Throws InputError on bad input or missing web
// assets.
std::string write_report(const std::string& dir, const std::string& version,
                         const std::string& shown_as = "");

}  // namespace ds::report
