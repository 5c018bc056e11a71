// Opens a generated report.html in a real headless Chromium (Debian's `chromium`,
// driven by playwright-core from web/node_modules) and checks that the page works:
//  1. it loads from file:// with every network request refused (the page is offline),
//  2. no console error and no uncaught exception,
//  3. every chart container holds an ECharts SVG whose series have data and drawn marks
//     (an empty-state message counts as a failure unless --allow-empty names the chart),
//  4. the tables have rows and the headline table marks a best value,
//  5. hovering a chart shows a tooltip with values; the tenant selector redraws a chart,
//  6. a full-page screenshot is written (a CI artifact).
// Usage: node report_test.mjs REPORT.html SCREENSHOT.png [--allow-empty ID,ID]
// Exit status: 0 passed, 1 failed, 77 skipped (no Chromium; CTest SKIP_RETURN_CODE).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [reportPath, screenshotPath, ...rest] = process.argv.slice(2);
if (!reportPath || !screenshotPath) {
  console.error("usage: node report_test.mjs REPORT.html SCREENSHOT.png [--allow-empty IDS]");
  process.exit(2);
}
const allowEmpty = new Set();
for (let i = 0; i < rest.length; i++)
  if (rest[i] === "--allow-empty" && rest[i + 1]) rest[++i].split(",").forEach((s) => allowEmpty.add(s));

const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!fs.existsSync(chromiumPath)) {
  console.log(`SKIP: ${chromiumPath} not found (install Debian's chromium: bash scripts/setup.sh)`);
  process.exit(77);
}
const webDir = process.env.DEEPSHARE_WEB_DIR || path.resolve(here, "../../web");
let chromium;
try {
  ({ chromium } = createRequire(path.join(webDir, "package.json"))("playwright-core"));
} catch (e) {
  console.error(`playwright-core not found under ${webDir}/node_modules: run bash scripts/setup.sh ` +
                `(npm ci --prefix web). ${e.message}`);
  process.exit(1);
}

const failures = [];
let passed = 0;
function check(ok, what) {
  if (ok) passed++;
  else failures.push(what);
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
}

// A fresh profile per run: no state from an earlier run or from a user's browser.
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "ds-report-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"],
  viewport: { width: 1366, height: 768 },
  deviceScaleFactor: 1,
});
let exitCode = 1;
try {
  const page = await context.newPage();
  const consoleErrors = [];
  const networkRequests = [];
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => consoleErrors.push(`uncaught: ${e.message}`));
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file:") || url.startsWith("data:")) return route.continue();
    networkRequests.push(url);
    return route.abort();
  });

  const t0 = Date.now();
  await page.goto(pathToFileURL(path.resolve(reportPath)).href, { waitUntil: "load" });
  await page.waitForFunction(() => window.__reportReady === true, null, { timeout: 60000 });
  console.log(`page ready in ${Date.now() - t0} ms`);

  const charts = await page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll("[id^='chart-']")) {
      const r = { id: el.id, empty: el.dataset.empty === "true", text: el.textContent.trim() };
      const inst = window.echarts && window.echarts.getInstanceByDom(el);
      const svg = el.querySelector("svg");
      r.svg = !!svg;
      r.canvas = !!el.querySelector("canvas");
      r.paths = svg ? svg.querySelectorAll("path").length : 0;
      r.width = el.getBoundingClientRect().width;
      r.height = el.getBoundingClientRect().height;
      r.series = [];
      if (inst) {
        for (const s of inst.getModel().getSeries()) {
          const view = inst.getViewOfSeriesModel(s);
          let marks = 0;
          if (view && view.group) view.group.traverse((c) => { if (!c.isGroup && !c.ignore) marks++; });
          r.series.push({ name: s.name, points: s.getData().count(), marks });
        }
        r.ariaLabel = el.getAttribute("aria-label") || "";
        const opt = inst.getOption();
        const names = (axes) => (axes || []).map((a) => a.name || "");
        r.axisNames = [...names(opt.xAxis), ...names(opt.yAxis)];
      }
      out.push(r);
    }
    return out;
  });
  check(charts.length >= 11, `found ${charts.length} chart containers (expected at least 11)`);
  for (const c of charts) {
    if (c.empty) {
      check(allowEmpty.has(c.id), `${c.id}: empty state "${c.text}"`);
      continue;
    }
    check(c.svg || c.canvas, `${c.id}: has an SVG or canvas`);
    check(c.width > 200 && c.height > 150, `${c.id}: laid out (${c.width}x${c.height} px)`);
    check(c.series.length > 0, `${c.id}: ${c.series.length} series`);
    const withData = c.series.filter((s) => s.points > 0 && s.marks > 0);
    check(withData.length === c.series.length,
          `${c.id}: every series has data points and drawn marks ` +
          `(${c.series.map((s) => `${s.name}: ${s.points} pts/${s.marks} marks`).join("; ")})`);
    check(c.paths > c.series.length, `${c.id}: SVG holds ${c.paths} paths`);
    check(c.axisNames.filter((n) => n).length >= 2 &&
          c.axisNames.filter((n) => n).every((n) => /\(.+\)/.test(n) || n === "Policy"),
          `${c.id}: named axes with units (${c.axisNames.filter((n) => n).join(" | ")})`);
  }

  const tables = await page.evaluate(() => Object.fromEntries(
    ["headline", "policy-metrics", "config"].map((id) => {
      const t = document.getElementById(id);
      return [id, { rows: t.querySelectorAll("tbody tr").length,
                    best: t.querySelectorAll("td.best").length,
                    cols: t.querySelectorAll("thead th").length }];
    })));
  check(tables.headline.rows >= 10 && tables.headline.cols >= 3,
        `headline table: ${tables.headline.rows} metrics x ${tables.headline.cols - 2} runs`);
  check(tables.headline.best > 0, `headline table marks ${tables.headline.best} best values`);
  check(tables["policy-metrics"].rows > 0, `policy metrics table: ${tables["policy-metrics"].rows} rows`);
  check(tables.config.rows >= 8, `configuration table: ${tables.config.rows} rows`);

  // Hover: the occupancy chart shows a tooltip with a value.
  const box = await page.locator("#chart-occupancy").boundingBox();
  await page.locator("#chart-occupancy").scrollIntoViewIfNeeded();
  const box2 = await page.locator("#chart-occupancy").boundingBox();
  await page.mouse.move(box2.x + box2.width * 0.5, box2.y + box2.height * 0.45);
  const tip = await page.waitForFunction(() => {
    // ECharts' tooltip: an absolutely placed div inside the chart, apart from its SVG.
    const el = document.querySelector("#chart-occupancy");
    const t = [...el.querySelectorAll("div")].find((d) => d.style.zIndex === "9999999" &&
      getComputedStyle(d).display !== "none" && getComputedStyle(d).visibility !== "hidden" &&
      /%/.test(d.textContent));
    return t ? t.textContent : null;
  }, null, { timeout: 5000 }).then((h) => h.jsonValue()).catch(() => null);
  check(!!tip && box !== null, `hover on the occupancy chart shows values ("${(tip || "").slice(0, 80)}…")`);

  // The tenant selector redraws the lending chart for one tenant.
  const tenantOptions = await page.locator("#assurance-tenant option").count();
  if (!allowEmpty.has("chart-lending") && tenantOptions > 1) {
    const value = await page.locator("#assurance-tenant option").nth(1).getAttribute("value");
    await page.selectOption("#assurance-tenant", value);
    await page.waitForFunction(() => window.__reportReady === true, null, { timeout: 10000 });
    const label = await page.locator("#chart-lending").getAttribute("aria-label");
    const axis = await page.evaluate(() => window.echarts.getInstanceByDom(
      document.getElementById("chart-lending")).getOption().yAxis[0].name);
    check(label.includes(value) && axis.includes(value),
          `tenant selector redraws the lending chart for ${value} ("${axis}")`);
    await page.selectOption("#assurance-tenant", "");
  }
  await page.mouse.move(0, 0);

  check(consoleErrors.length === 0, `no console errors (${consoleErrors.join(" | ") || "none"})`);
  check(networkRequests.length === 0,
        `no network requests (${networkRequests.slice(0, 3).join(", ") || "none"})`);

  fs.mkdirSync(path.dirname(path.resolve(screenshotPath)), { recursive: true });
  await page.screenshot({ path: screenshotPath, fullPage: true });
  console.log(`screenshot: ${path.resolve(screenshotPath)}`);
  exitCode = failures.length ? 1 : 0;
} catch (e) {
  console.error(`FAIL ${e.stack || e}`);
  failures.push(String(e));
} finally {
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : exitCode);
