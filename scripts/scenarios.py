#!/usr/bin/env python3
"""The scenario matrix of issue #15 (see scripts/scenarios.sh): every scenario x every
non-oracle baseline (isolated and pooled where a baseline has both), oracle SRTF for
reference, and DeepShare in its one default configuration; then DeepShare's ablations per
scenario and the misprediction sweep (its target's cases also as ensembles of runs with
jittered submissions, `--jitter`). Writes the "Scenario matrix" section of
docs/results.md and the report page out/scenarios/report.html (a Pareto plot of average
queueing delay against QoS compliance and the table, per scenario).

Only the standard library. Every number comes from a `deepshare compare` run this script
starts; the commands are printed in the outputs.

  scripts/scenarios.sh                 # everything (cached runs are reused unless --force)
  scripts/scenarios.sh --only venus    # a subset of scenarios (venus, gen, openb)
  scripts/scenarios.sh --variant NAME --set KEY=VALUE ...
                                       # DeepShare with other settings against the cached
                                       # baselines: prints the lead table, writes nothing
"""
import argparse
import html
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("DEEPSHARE_BIN") or os.path.join(ROOT, "build", "bin", "deepshare")
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "traces"))
VENUS = os.path.join(SHARED, "venus-sept", "venus_sept_23859_jobs.csv")
OPENB = os.path.join(SHARED, "alibaba-openb", "openb_pod_list_default.csv")
OUT = os.path.join(ROOT, "out", "scenarios")
RESULTS_MD = os.path.join(ROOT, "docs", "results.md")

VENUS_LOADS = ["1.0", "1.25", "1.5", "2.0"]
GEN_SEEDS = [1, 2, 3, 4, 5]
GEN_LOADS = ["0.9", "1.3"]
GEN_TAILS = [("", "1"), ("heavy tail", "2")]  # large_jobs factor of the generator
CHECKPOINT = ["--checkpoint-interval", "1800"]
ABLATIONS = ["borrowing", "reclaim", "sharing", "prediction", "assurance", "present_risk",
             "reclaim_quota", "time_slicing", "quota_aging", "split_pairs", "pair_victims"]
JOBS = 2  # ablation runs at a time (most are one single-threaded simulation)

# Policies of one scenario: (label, registry name, --set of that run group). Two compare
# runs per scenario: the default scopes, and the pooled scope of the baselines that have one.
DEFAULT_GROUP = ["deepshare", "fifo-isolated", "fifo-pooled", "kueue", "lucid", "qssf", "tiresias", "srtf"]
POOLED_GROUP = ["lucid", "qssf", "tiresias", "srtf"]
# Baselines added later run as groups of their own, so that adding one reruns only its rows.
EXTRA_GROUPS = [["slurm"]]
SCOPED = {"lucid", "qssf", "tiresias", "srtf"}
ORACLES = {"srtf (isolated)", "srtf (pooled)"}


def label(policy, pooled):
    if policy in SCOPED:
        return f"{policy} (pooled)" if pooled else f"{policy} (isolated)"
    return policy


def rel(path):
    return os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.relpath(path, ROOT)


def shown(args):
    return "deepshare " + " ".join(rel(a) if a.startswith("/") else a for a in args)


RUNS = {"fresh": 0, "reused": 0}


def run(args, quiet=True):
    RUNS["fresh"] += 1
    subprocess.run([BIN] + args, check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL if quiet else None)
    return shown(args)


def summary(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        return json.load(f)


class Scenario:
    def __init__(self, key, title, group, workload, loads=("1",), note=""):
        self.key, self.title, self.group, self.workload, self.loads, self.note = \
            key, title, group, workload, list(loads), note

    def rows(self):
        """(row key, row title, load) of this scenario's table rows."""
        if len(self.loads) == 1:
            return [(self.key, self.title, self.loads[0])]
        return [(f"{self.key}@{l}", f"{self.title} ×{l}", l) for l in self.loads]


def scenarios(only):
    out = []
    if (not only or "venus" in only) and os.path.exists(VENUS):
        for prof in (True, False):
            key = "venus" if prof else "venus-noprof"
            title = "Venus" if prof else "Venus, no profiles"
            wl = ["--trace", VENUS, "--format", "venus"] + ([] if prof else ["--no-profiles"])
            out.append(Scenario(key, title, "venus", wl, VENUS_LOADS))
    if not only or "gen" in only:
        for tail_name, tail in GEN_TAILS:
            for load in GEN_LOADS:
                for prof in (True, False):
                    for seed in GEN_SEEDS:
                        key = f"gen-l{load}{'-tail' if tail != '1' else ''}{'' if prof else '-noprof'}-s{seed}"
                        title = (f"generated, load {load}{', ' + tail_name if tail_name else ''}"
                                 f"{'' if prof else ', no profiles'}, seed {seed}")
                        spec = f"seed={seed},load={load}" + (f",large_jobs={tail}" if tail != "1" else "")
                        wl = ["--generated", spec] + ([] if prof else ["--no-profiles"])
                        out.append(Scenario(key, title, "gen", wl))
    if (not only or "openb" in only) and os.path.exists(OPENB):
        out.append(Scenario("openb", "openb time replay, --fit-load 0.9", "openb",
                            ["--trace", OPENB, "--format", "openb", "--fit-load", "0.9"]))
    return out


def compare(sc, folder, policies, sets, force, loads=None):
    """One `deepshare compare` of the scenario into folder (reused when complete)."""
    loads = loads or sc.loads
    args = ["compare"] + sc.workload + CHECKPOINT + ["--policies", ",".join(policies),
                                                    "--loads", ",".join(loads), "--out", folder, "--quiet"]
    for s in sets:
        args += ["--set", s]
    return run_cached(folder, args, policies, loads, force)


def run_cached(folder, args, policies, loads, force):
    """Runs the compare `args` into folder unless every run's summary.json is there."""
    done = all(os.path.exists(os.path.join(folder, f"{p}@{float(l):g}", "summary.json"))
               for p in policies for l in loads)
    if force or not done:
        shutil.rmtree(folder, ignore_errors=True)
        print("+", shown(args), file=sys.stderr)
        run(args)
    else:
        RUNS["reused"] += 1
    return shown(args)


def collect(sc, force):
    """{row key: {label: summary}} and the commands."""
    base = os.path.join(OUT, sc.key)
    cmds = [compare(sc, os.path.join(base, "default"), DEFAULT_GROUP, [], force),
            compare(sc, os.path.join(base, "pooled"), POOLED_GROUP, ["scope=pooled"], force)]
    cmds += [compare(sc, os.path.join(base, "-".join(g)), g, [], force) for g in EXTRA_GROUPS]
    rows = {}
    for key, _, load in sc.rows():
        r = {}
        for p in DEFAULT_GROUP:
            r[label(p, False)] = summary(os.path.join(base, "default", f"{p}@{float(load):g}"))
        for p in POOLED_GROUP:
            r[label(p, True)] = summary(os.path.join(base, "pooled", f"{p}@{float(load):g}"))
        for g in EXTRA_GROUPS:
            for p in g:
                r[label(p, False)] = summary(os.path.join(base, "-".join(g), f"{p}@{float(load):g}"))
        rows[key] = r
    return rows, cmds


def lost_share(s):
    return s["lost_gpu_hours"] / s["delivered_gpu_hours"] if s["delivered_gpu_hours"] else 0.0


def verdict(runs, ds_label="deepshare"):
    """How DeepShare fares in one row against the non-oracle baselines and oracle SRTF."""
    ds = runs[ds_label]
    base = {k: v for k, v in runs.items() if k != ds_label and k not in ORACLES and k != "deepshare"}
    best = min(base, key=lambda k: (base[k]["avg_queue_s"], -base[k]["qos_compliance"]))
    oracle = min((k for k in runs if k in ORACLES), key=lambda k: runs[k]["avg_queue_s"])
    dominated = [k for k, v in base.items()
                 if v["avg_queue_s"] < ds["avg_queue_s"] and v["qos_compliance"] > ds["qos_compliance"]]
    q, bq = ds["avg_queue_s"], base[best]["avg_queue_s"]
    v = {
        "ds": ds, "best": best, "best_q": bq, "oracle": oracle, "oracle_s": runs[oracle],
        "ratio": q / bq if bq > 0 else (1.0 if q == 0 else math.inf),
        "oracle_ratio": q / runs[oracle]["avg_queue_s"] if runs[oracle]["avg_queue_s"] > 0 else math.inf,
        "lost": lost_share(ds), "dominated": dominated,
    }
    v["lost_vs_oracle"] = (ds["lost_gpu_hours"] / runs[oracle]["lost_gpu_hours"]
                           if runs[oracle]["lost_gpu_hours"] > 0 else (0.0 if ds["lost_gpu_hours"] == 0 else math.inf))
    v["leads"] = (q <= bq + 0.5 and ds["qos_compliance"] >= 0.995 and v["lost"] <= 0.01 and not dominated)
    return v


def fmt_s(x):
    return f"{x:,.0f}"


def fmt_ratio(x):
    return "∞" if x == math.inf else f"{x:.2f}×"


def aims(allrows, titles):
    """The issue's aims beyond leading, with the rows that miss each."""
    vs = {key: verdict(runs) for key, runs in allrows.items()}
    parts = []
    for what, miss in [("at most 0.5× the best non-oracle baseline's average queueing delay",
                        lambda v: v["ratio"] > 0.5),
                       ("within 2× of oracle SRTF's average queueing delay", lambda v: v["oracle_ratio"] > 2),
                       ("at most a tenth of oracle SRTF's lost work", lambda v: v["lost_vs_oracle"] > 0.1)]:
        missed = [titles[k] for k, v in vs.items() if miss(v)]
        parts.append(f"{what}: {len(vs) - len(missed)} of {len(vs)} rows"
                     + (f" (not: {'; '.join(missed)})" if missed else ""))
    return "The issue's aims: " + "; ".join(parts) + "."


def not_led(allrows, titles):
    """The rows DeepShare does not lead, each with the numbers beside the average that decides."""
    parts = []
    for key, runs in allrows.items():
        v = verdict(runs)
        if v["leads"]:
            continue
        ds, b = v["ds"], runs[v["best"]]
        parts.append(f"{titles[key]}: {v['best']} queues {fmt_s(b['avg_queue_s'])} s on average against "
                     f"DeepShare's {fmt_s(ds['avg_queue_s'])} s (median {fmt_s(b['p50_queue_s'])} vs "
                     f"{fmt_s(ds['p50_queue_s'])} s, p99 {fmt_s(b['p99_queue_s'])} vs {fmt_s(ds['p99_queue_s'])} s; "
                     f"lost work {b['lost_gpu_hours']:,.1f} vs {ds['lost_gpu_hours']:,.1f} GPU-h; "
                     f"QoS {100 * b['qos_compliance']:.2f} vs {100 * ds['qos_compliance']:.2f} %)")
    if not parts:
        return "DeepShare leads every row."
    text = "Rows DeepShare does not lead — " + "; ".join(parts) + "."
    if "openb" in allrows and not verdict(allrows["openb"])["leads"]:
        v = verdict(allrows["openb"])
        ds, b = v["ds"], allrows["openb"][v["best"]]
        text += (" On openb every policy's numbers moved when mixed node sizes were placed by each node's own"
                 " size and openb's `gpu_spec` became a constraint (CHANGELOG, issues #26 and #28): its"
                 " 16-GPU cluster mixes GPU models and a few weeks-long jobs decide the average.")
        if (ds["p99_queue_s"] < b["p99_queue_s"] and ds["lost_gpu_hours"] < b["lost_gpu_hours"]
                and b["preemptions"] > ds["preemptions"]):
            text += (f" {v['best']} reaches the lower average by preempting more, paid for in lost work;"
                     " DeepShare's slicing waits for checkpoints and keeps both the p99 and the lost work lower.")
    return text


def lead_table(allrows, titles, ds_label="deepshare"):
    lines = ["| scenario | DeepShare avg queue (s) | best non-oracle baseline | its avg queue (s) | ratio | "
             "DeepShare QoS | lost / delivered | oracle SRTF avg queue (s) | vs SRTF | lost vs SRTF | leads |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    led = 0
    for key, runs in allrows.items():
        v = verdict(runs, ds_label)
        led += v["leads"]
        why = "yes" if v["leads"] else "**no**"
        if not v["leads"]:
            reasons = []
            if v["ratio"] > 1 and v["ds"]["avg_queue_s"] > v["best_q"] + 0.5:
                reasons.append("queue")
            if v["ds"]["qos_compliance"] < 0.995:
                reasons.append("QoS")
            if v["lost"] > 0.01:
                reasons.append("lost work")
            if v["dominated"]:
                reasons.append("dominated by " + ", ".join(v["dominated"]))
            why += " (" + "; ".join(reasons) + ")"
        lines.append(f"| {titles[key]} | {fmt_s(v['ds']['avg_queue_s'])} | {v['best']} | {fmt_s(v['best_q'])} | "
                     f"{fmt_ratio(v['ratio'])} | {100 * v['ds']['qos_compliance']:.2f} % | {100 * v['lost']:.2f} % | "
                     f"{fmt_s(v['oracle_s']['avg_queue_s'])} | {fmt_ratio(v['oracle_ratio'])} | "
                     f"{fmt_ratio(v['lost_vs_oracle'])} | {why} |")
    return "\n".join(lines), led, len(allrows)


def full_table(runs):
    lines = ["| policy | avg queue (s) | p99 queue (s) | avg JCT (s) | QoS | SM util (submit window) | "
             "preemptions | lost GPU-h | lost / delivered |", "|---|---|---|---|---|---|---|---|---|"]
    for k, s in sorted(runs.items(), key=lambda kv: kv[1]["avg_queue_s"]):
        name = k + (" (oracle)" if k in ORACLES else "")
        lines.append(f"| {name} | {fmt_s(s['avg_queue_s'])} | {fmt_s(s['p99_queue_s'])} | {fmt_s(s['avg_jct_s'])} | "
                     f"{100 * s['qos_compliance']:.2f} % | {s['sm_utilization_submit_window']:.3f} | "
                     f"{s['preemptions']:,} | {s['lost_gpu_hours']:,.0f} | {100 * lost_share(s):.2f} % |")
    return "\n".join(lines)


# ---- variants (development aid) -------------------------------------------------------

def variant(scs, name, sets, force):
    allrows, titles = {}, {}
    for sc in scs:
        rows, _ = collect(sc, False)
        folder = os.path.join(OUT, "variants", name, sc.key)
        compare(sc, folder, ["deepshare"], sets, force)
        for key, title, load in sc.rows():
            rows[key]["deepshare"] = summary(os.path.join(folder, f"deepshare@{float(load):g}"))
            allrows[key], titles[key] = rows[key], title
    text, led, n = lead_table(allrows, titles)
    print(text)
    print(f"\nvariant {name} ({' '.join(sets) or 'defaults'}): DeepShare leads {led} of {n} rows")


# ---- ablations and the misprediction sweep --------------------------------------------

def ablations(scs, force):
    """DeepShare with each switch off, per scenario row; the generator's seeds averaged."""
    table = {}  # (row group title) -> {switch: [avg queue, qos]}
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        cmds = list(pool.map(
            lambda a: compare(a[0], os.path.join(OUT, a[0].key, "ablation-" + a[1]), ["deepshare"],
                              [f"{a[1]}=off"], force),
            [(sc, switch) for sc in scs for switch in ABLATIONS]))
    for sc in scs:
        for switch in ABLATIONS:
            folder = os.path.join(OUT, sc.key, "ablation-" + switch)
            for key, title, load in sc.rows():
                s = summary(os.path.join(folder, f"deepshare@{float(load):g}"))
                group = re.sub(r", seed \d+$", "", title)
                table.setdefault(group, {}).setdefault(switch, []).append(s)
        for key, title, load in sc.rows():
            s = summary(os.path.join(OUT, sc.key, "default", f"deepshare@{float(load):g}"))
            group = re.sub(r", seed \d+$", "", title)
            table.setdefault(group, {}).setdefault("(none)", []).append(s)
    head = ["(none)"] + ABLATIONS
    lines = ["| scenario | " + " | ".join(h if h == "(none)" else f"{h}=off" for h in head) + " |",
             "|---" * (len(head) + 1) + "|"]
    for group, by in table.items():
        cells = []
        for h in head:
            ss = by[h]
            q = sum(s["avg_queue_s"] for s in ss) / len(ss)
            qos = sum(s["qos_compliance"] for s in ss) / len(ss)
            cells.append(f"{fmt_s(q)} / {100 * qos:.1f} %")
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    return "\n".join(lines), cmds


MISPREDICT = [("measured", "0"), ("measured", "0.25"), ("measured", "0.5"), ("fallback", "0"),
              ("slicing", "0"), ("fallback", "0.5")]


def mispredict(force):
    """DeepShare with and without sharing under ground truths worse than its model."""
    cases = []
    if os.path.exists(VENUS):
        cases += [("Venus ×1.0", ["--trace", VENUS, "--format", "venus"], "1.0"),
                  ("Venus ×1.5", ["--trace", VENUS, "--format", "venus"], "1.5"),
                  ("Venus ×2.0", ["--trace", VENUS, "--format", "venus"], "2.0")]
    cases += [("generated, load 1.3, seed 1", ["--generated", "seed=1,load=1.3"], "1")]
    lines = ["| workload | ground truth | sharing | avg queue (s) | avg JCT (s) | QoS | worst shared slowdown observed | "
             "shared starts | learned slowdown ratio (scale) |", "|---|---|---|---|---|---|---|---|---|"]
    cmds, ok, misses, effects = [], True, [], {}
    for title, wl, load in cases:
        for kind, err in MISPREDICT:
            res = {}
            for sharing in ("on", "off"):
                folder = os.path.join(OUT, "mispredict", re.sub(r"[^a-z0-9.]+", "-", title.lower()),
                                      f"{kind}-{err}-{sharing}")
                args = ["compare"] + wl + CHECKPOINT + ["--policies", "deepshare", "--loads", load,
                                                       "--truth", kind, "--truth-error", err,
                                                       "--set", f"sharing={sharing}", "--out", folder, "--quiet"]
                path = os.path.join(folder, f"deepshare@{float(load):g}")
                cmds.append(run_cached(folder, args, ["deepshare"], [load], force))
                s = summary(path)
                res[sharing] = s
                pm = s.get("policy_metrics", {})
                truth = kind + ("" if err == "0" else f", slowdown +{float(err) * 100:.0f} %")
                lines.append(f"| {title} | {truth} | {sharing} | {fmt_s(s['avg_queue_s'])} | {fmt_s(s['avg_jct_s'])} | "
                             f"{100 * s['qos_compliance']:.2f} % | {max_slowdown(path):.2f} | "
                             f"{pm.get('shared_starts', 0):,.0f} | {pm.get('sharing_slowdown_ratio', 1):.2f} ({pm.get('sharing_slowdown_scale', 1):.2f}) |")
            on, off = res["on"], res["off"]
            effects.setdefault((kind, err), []).append(
                (title, 100 * (on["avg_jct_s"] / off["avg_jct_s"] - 1),
                 100 * (off["qos_compliance"] - on["qos_compliance"])))
            if err != "0.5" and kind != "slicing":
                continue  # the target is about these cases; the others are shown for information
            if on["avg_jct_s"] > off["avg_jct_s"] * 1.0005 or on["qos_compliance"] < off["qos_compliance"] - 1e-9:
                ok = False
                truth = kind + ("" if err == "0" else f" +{float(err) * 100:.0f} %")
                misses.append(f"{title}, {truth}: JCT {fmt_s(on['avg_jct_s'])} vs {fmt_s(off['avg_jct_s'])} s "
                              f"({100 * (on['avg_jct_s'] / off['avg_jct_s'] - 1):+.2f} %), QoS "
                              f"{100 * on['qos_compliance']:.2f} vs {100 * off['qos_compliance']:.2f} %")
    return "\n".join(lines), cmds, ok, misses, effects


def effect_range(effects, cases, where=("Venus ×1.5", "Venus ×2.0")):
    """'JCT a..b %, QoS c..d points' of sharing on vs off over the (truth, error) cases at `where`."""
    got = [e for c in cases for e in effects.get(c, []) if e[0] in where]
    if not got:
        return "n/a"
    j = [g[1] for g in got]
    q = [g[2] for g in got]
    return (f"average JCT {min(j):+.0f} to {max(j):+.0f} %, QoS {min(q):.2f}–{max(q):.2f} points lower")


# The target's cases (the model 50 % optimistic; another model family) as ensembles: one
# early change sends a run on another course (single runs move by 5-10 % either way), so
# each case also runs with every submission delayed by a random 0..JITTER_S s
# (`--jitter`), once per seed, and compares the means of sharing on and off.
ENSEMBLE = [("measured", "0.5"), ("slicing", "0")]
JITTER_S = 60
JITTER_SEEDS = {"venus": 5, "generated": 19}  # jittered runs per case (a generated run is cheap)


def mean_se(xs):
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, 0.0
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(var / len(xs))


def ensemble(force):
    """Sharing on vs off over jittered copies of the target's cases: per case the mean
    paired difference of average JCT and QoS (on - off) and its standard error. A case is
    measurably worse when the mean difference exceeds twice its standard error."""
    cases = []
    if os.path.exists(VENUS):
        cases.append(("Venus", ["--trace", VENUS, "--format", "venus"], ["1.0", "1.5", "2.0"],
                      range(1, JITTER_SEEDS["venus"] + 1)))
    cases.append(("generated, load 1.3, seed 1", ["--generated", "seed=1,load=1.3"], ["1"],
                  range(1, JITTER_SEEDS["generated"] + 1)))
    jobs = []
    for title, wl, loads, seeds in cases:
        for kind, err in ENSEMBLE:
            for seed in seeds:
                for sharing in ("on", "off"):
                    folder = os.path.join(OUT, "ensemble", re.sub(r"[^a-z0-9.]+", "-", title.lower()),
                                          f"{kind}-{err}-jitter{seed}-{sharing}")
                    args = (["compare"] + wl + CHECKPOINT +
                            ["--policies", "deepshare", "--loads", ",".join(loads), "--truth", kind,
                             "--truth-error", err, "--jitter", str(JITTER_S), "--jitter-seed", str(seed),
                             "--set", f"sharing={sharing}", "--out", folder, "--quiet", "--threads", "1"])
                    jobs.append((folder, args, loads))

    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        cmds = list(pool.map(lambda j: run_cached(j[0], j[1], ["deepshare"], j[2], force), jobs))
    lines = ["| workload | ground truth | runs | avg JCT on (s) | avg JCT off (s) | on - off (mean ± SE) | "
             "QoS on | QoS off | QoS on - off (points, mean ± SE) | measurably worse |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    worse, diffs, off_spread = [], [], 0.0
    for title, wl, loads, seeds in cases:
        slug = re.sub(r"[^a-z0-9.]+", "-", title.lower())
        for load in loads:
            name = title if title != "Venus" else f"Venus ×{load}"
            mis_slug = re.sub(r"[^a-z0-9.]+", "-", name.lower())
            for kind, err in ENSEMBLE:
                on, off = [], []
                # the unjittered pair of the misprediction sweep counts as one more sample
                base = os.path.join(OUT, "mispredict", mis_slug, f"{kind}-{err}-%s", f"deepshare@{float(load):g}")
                if os.path.exists(os.path.join(base % "on", "summary.json")):
                    on.append(summary(base % "on"))
                    off.append(summary(base % "off"))
                for seed in seeds:
                    for side, acc in (("on", on), ("off", off)):
                        acc.append(summary(os.path.join(OUT, "ensemble", slug, f"{kind}-{err}-jitter{seed}-{side}",
                                                        f"deepshare@{float(load):g}")))
                djct = [100 * (a["avg_jct_s"] / b["avg_jct_s"] - 1) for a, b in zip(on, off)]
                diffs += djct
                offs = [x["avg_jct_s"] for x in off]
                off_spread = max(off_spread, 100 * (max(offs) / min(offs) - 1))
                dqos = [100 * (a["qos_compliance"] - b["qos_compliance"]) for a, b in zip(on, off)]
                mj, sj = mean_se(djct)
                mq, sq = mean_se(dqos)
                bad = mj > 2 * sj or mq < -2 * sq - 1e-9
                truth = kind + ("" if err == "0" else f", slowdown +{float(err) * 100:.0f} %")
                if bad:
                    worse.append(f"{name}, {truth}")
                lines.append(
                    f"| {name} | {truth} | {len(on)} | {fmt_s(sum(x['avg_jct_s'] for x in on) / len(on))} | "
                    f"{fmt_s(sum(x['avg_jct_s'] for x in off) / len(off))} | {mj:+.2f} ± {sj:.2f} % | "
                    f"{sum(100 * x['qos_compliance'] for x in on) / len(on):.3f} % | "
                    f"{sum(100 * x['qos_compliance'] for x in off) / len(off):.3f} % | {mq:+.3f} ± {sq:.3f} | "
                    f"{'**yes**' if bad else 'no'} |")
    spread = {"dmin": min(diffs, default=0), "dmax": max(diffs, default=0), "off": off_spread}
    return "\n".join(lines), cmds, worse, spread


def max_slowdown(run_dir):
    """Worst sharing slowdown of any job (jobs.csv)."""
    import csv
    worst = 1.0
    with open(os.path.join(run_dir, "jobs.csv")) as f:
        for r in csv.DictReader(f):
            v = r.get("max_slowdown")
            if v:
                worst = max(worst, float(v))
    return worst


# ---- report page ----------------------------------------------------------------------

def pareto_svg(runs, width=420, height=260):
    pad_l, pad_b, pad_t, pad_r = 56, 36, 12, 12
    qs = [max(1.0, s["avg_queue_s"]) for s in runs.values()]
    lo, hi = math.log10(min(qs)) - 0.1, math.log10(max(qs)) + 0.1
    qos = [100 * s["qos_compliance"] for s in runs.values()]
    ylo, yhi = min(min(qos) - 1, 99), 100.5
    x = lambda q: pad_l + (math.log10(max(1.0, q)) - lo) / (hi - lo) * (width - pad_l - pad_r)
    y = lambda v: pad_t + (yhi - v) / (yhi - ylo) * (height - pad_t - pad_b)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-size="10" font-family="sans-serif">',
             f'<rect x="{pad_l}" y="{pad_t}" width="{width - pad_l - pad_r}" height="{height - pad_t - pad_b}" fill="none" stroke="#999"/>']
    for e in range(math.ceil(lo), math.floor(hi) + 1):
        parts.append(f'<line x1="{x(10 ** e):.1f}" y1="{height - pad_b}" x2="{x(10 ** e):.1f}" y2="{height - pad_b + 4}" stroke="#333"/>'
                     f'<text x="{x(10 ** e):.1f}" y="{height - pad_b + 14}" text-anchor="middle">1e{e}</text>')
    for v in (ylo, (ylo + yhi) / 2, 100):
        parts.append(f'<text x="{pad_l - 4}" y="{y(v) + 3:.1f}" text-anchor="end">{v:.1f}%</text>')
    parts.append(f'<text x="{(width + pad_l) / 2}" y="{height - 4}" text-anchor="middle">avg queueing delay (s, log)</text>')
    parts.append(f'<text x="10" y="{height / 2}" transform="rotate(-90 10 {height / 2})" text-anchor="middle">QoS compliance</text>')
    for k, s in runs.items():
        cx, cy = x(s["avg_queue_s"]), y(100 * s["qos_compliance"])
        color = "#c0392b" if k == "deepshare" else ("#7f8c8d" if k in ORACLES else "#2c6fbb")
        fill = "none" if k in ORACLES else color
        parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{fill}" stroke="{color}"><title>{html.escape(k)}</title></circle>'
                     f'<text x="{cx + 5:.1f}" y="{cy - 5:.1f}" fill="{color}">{html.escape(k)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def md_to_html_table(md):
    lines = [l for l in md.splitlines() if l.startswith("|")]
    out = ["<table>"]
    for i, l in enumerate(lines):
        if i == 1:
            continue
        cells = [c.strip() for c in l.strip("|").split("|")]
        tag = "th" if i == 0 else "td"
        out.append("<tr>" + "".join(f"<{tag}>{html.escape(c).replace('**', '')}</{tag}>" for c in cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def write_report(allrows, titles, lead_md):
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>DeepShare scenario matrix</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse;font-size:12px}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}"
             ".sc{display:flex;gap:16px;align-items:flex-start;margin-bottom:24px}</style></head><body>",
             "<h1>DeepShare scenario matrix</h1><p>Generated by <code>scripts/scenarios.sh</code>. Each plot: average "
             "queueing delay (log scale) against QoS compliance of entitled jobs; up and to the left is better. "
             "DeepShare red, non-oracle baselines blue, oracle SRTF hollow grey.</p>",
             "<h2>Does DeepShare lead?</h2>", md_to_html_table(lead_md)]
    for key, runs in allrows.items():
        parts.append(f"<h2 id='{html.escape(key)}'>{html.escape(titles[key])}</h2><div class='sc'>{pareto_svg(runs)}"
                     f"<div>{md_to_html_table(full_table(runs))}</div></div>")
    parts.append("</body></html>")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "report.html"), "w") as f:
        f.write("\n".join(parts))


# ---- main -----------------------------------------------------------------------------

def timing(minutes):
    """How long this render took; when it reused cached runs, also how long the last run
    that made every one of them fresh took (kept in out/scenarios/full_run.json)."""
    path = os.path.join(OUT, "full_run.json")
    if not RUNS["reused"]:
        with open(path, "w") as f:
            json.dump({"minutes": round(minutes, 1), "runs": RUNS["fresh"]}, f)
        return f"in {minutes:.1f} min, all {RUNS['fresh']} compare runs fresh"
    text = f"{RUNS['fresh']} compare runs fresh, {RUNS['reused']} reused from out/scenarios"
    if os.path.exists(path):
        with open(path) as f:
            full = json.load(f)
        text += f"; the last run of all {full['runs']} took {full['minutes']:.1f} min"
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", choices=["venus", "gen", "openb"])
    ap.add_argument("--force", action="store_true", help="rerun cached runs")
    ap.add_argument("--variant", help="run DeepShare with --set options against cached baselines")
    ap.add_argument("--set", action="append", default=[], dest="sets")
    ap.add_argument("--no-doc", action="store_true", help="do not rewrite docs/results.md")
    ap.add_argument("--matrix-only", action="store_true", help="no ablations or misprediction sweep")
    a = ap.parse_args()
    scs = scenarios(a.only)
    if a.variant:
        variant(scs, a.variant, a.sets, a.force)
        return
    started = time.time()
    allrows, titles, cmds = {}, {}, []
    for sc in scs:
        rows, c = collect(sc, a.force)
        cmds += c
        for key, title, _ in sc.rows():
            allrows[key], titles[key] = rows[key], title
    lead_md, led, n = lead_table(allrows, titles)
    if a.matrix_only:
        write_report(allrows, titles, lead_md)
        print(lead_md)
        print(f"\nDeepShare leads {led} of {n} rows", file=sys.stderr)
        return
    abl_md, abl_cmds = ablations(scs, a.force)
    mis_md, mis_cmds, mis_ok, mis_misses, mis_effects = mispredict(a.force)
    ens_md, ens_cmds, ens_worse, ens_spread = ensemble(a.force)
    write_report(allrows, titles, lead_md)
    print(lead_md)
    print(f"\nDeepShare leads {led} of {n} rows; misprediction target {'met' if mis_ok else 'MISSED'}", file=sys.stderr)
    if a.no_doc or a.only:
        return
    section = SECTION.format(
        timing=timing((time.time() - started) / 60), lead=lead_md, led=led, n=n, abl=abl_md, mis=mis_md,
        mis_ok="met" if mis_ok else "missed", aims=aims(allrows, titles), not_led=not_led(allrows, titles),
        misses="Cases of the target that miss it run by run (sharing on vs off): " + "; ".join(mis_misses) + "."
        if mis_misses else "No case of the target misses it run by run.",
        fitted=effect_range(mis_effects, [("measured", "0"), ("fallback", "0")]),
        plus25=effect_range(mis_effects, [("measured", "0.25")]),
        example_cmd=next((c for c in cmds if "venus" in c and "scope" not in c), cmds[0]),
        example_pooled=next((c for c in cmds if "venus" in c and "scope" in c), cmds[-1]),
        example_gen=next((c for c in cmds if "generated" in c), ""),
        example_abl=abl_cmds[0] if abl_cmds else "", example_mis=mis_cmds[0] if mis_cmds else "",
        ens=ens_md, example_ens=ens_cmds[0] if ens_cmds else "", jitter_s=JITTER_S,
        venus_seeds=JITTER_SEEDS["venus"], gen_seeds=JITTER_SEEDS["generated"],
        dmin=ens_spread["dmin"], dmax=ens_spread["dmax"], off_spread=ens_spread["off"],
        ens_verdict=("no case is measurably worse with sharing on" if not ens_worse else
                     "measurably worse with sharing on: " + "; ".join(ens_worse)))
    with open(RESULTS_MD) as f:
        doc = f.read()
    block = "<!-- scenarios:start -->\n" + section.strip() + "\n<!-- scenarios:end -->"
    if "<!-- scenarios:start -->" in doc:
        doc = re.sub(r"<!-- scenarios:start -->.*<!-- scenarios:end -->", lambda _: block, doc, flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n" + block + "\n"
    with open(RESULTS_MD, "w") as f:
        f.write(doc)
    print("wrote the scenario section of docs/results.md and out/scenarios/report.html", file=sys.stderr)


SECTION = """
## Scenario matrix (issue #15)

Generated by `scripts/scenarios.sh` ({timing}; do not edit by hand; rerun it). The report
page with a Pareto plot (average queueing delay against QoS compliance) and the full table per
scenario: `out/scenarios/report.html`.

Scenarios: Venus at ×1.0, ×1.25, ×1.5 and ×2.0 with its workload profiles and without them
(`--no-profiles`: no job has GPU memory or utilisation, so no policy can share a GPU); the
built-in generator (7 days) with seeds 1–5 at loads 0.9 and 1.3, with and without profiles, and
with a heavier tail of large jobs (`large_jobs=2`: multi-GPU jobs twice as large on average); the
openb time replay (`--fit-load 0.9`). Every policy checkpoints every 30 min. Policies: every
non-oracle baseline — fifo-isolated, fifo-pooled, kueue, slurm, and lucid, qssf and tiresias each
isolated (per tenant) and pooled — oracle SRTF (isolated and pooled) for reference, and
DeepShare in its one default configuration. Example commands (per scenario one per scope, and one per baseline added later, such as slurm):
`{example_cmd}`, `{example_pooled}`, `{example_gen}`.

A row **leads** when DeepShare's average queueing delay is at most the best non-oracle
baseline's, its QoS compliance of entitled jobs is at least 99.5 %, its lost work at most 1 % of
delivered GPU-hours, and no non-oracle baseline is better on both average queueing delay and QoS.
"vs SRTF" compares with the better of the two oracle SRTF runs. DeepShare leads **{led} of {n}**
rows. {aims} The rows that miss an aim are mostly without profiles, where no policy can share
a GPU and DeepShare's lead rests on lending, reclaim and time slicing alone; oracle SRTF knows
every run time and preempts freely (losing 30–100 times DeepShare's work on Venus ×1.25–×2.0), and
on openb weeks-long tasks hold guaranteed GPUs that DeepShare slices only at their checkpoints.
{not_led}

{lead}

### Ablations per scenario

DeepShare with one mechanism switched off (`--set SWITCH=off`), average queueing delay / QoS
compliance (the generator's five seeds averaged). Example: `{example_abl}`.

{abl}

### Sharing when the interference model is wrong

The ground truth of shared GPUs made worse than DeepShare's interference model predicts
(`--truth-error E`: every shared job's slowdown × (1 + E)), or of another model family
(`--truth fallback`: the util/memory model for every pair; `--truth slicing`: 1/n each).
DeepShare sees each running job's observed progress rate (`JobRuntime::speed`). Its sharing
starts on probation: until `probation_pairs` (4) shared jobs have been observed, only jobs
that are not entitled (whose QoS nothing promises) share; if their observed slowdowns exceed
the model's by more than `probation_error` (0.5) on average, sharing turns off (for the
cluster, or for one tenant on its own observations). It also learns the mean ratio of observed
to predicted slowdown and, once that exceeds its model's cross-validated error, scales every
predicted slowdown by it (`learn_sharing`), and a pair observed beyond a member's bound is
split at once (`split_pairs`; docs/deepshare.md). Target: with sharing never worse than
`sharing=off` on average JCT (0.05 % tolerance) and QoS. Run by run, on every case of the
sweep: **{mis_ok}**; as ensembles of jittered runs of the target's cases (below): {ens_verdict}.
Example: `{example_mis}`.

{misses}
Where the model is 50 % optimistic or of another family (slicing), QoS holds at 100 %: no
entitled job shares before probation ends, and the first observed pair (one shared start)
stops sharing. The run-by-run JCT misses there come from that one pair and its split: a
single early change sends a run on another course (single jittered runs of these cases,
sharing on against off on the same seed, differ by {dmin:+.1f} % to {dmax:+.1f} % in average JCT: the
ensembles below), and
learning needs at least one observed pair. The other cases are shown for information. At
+25 % the model passes probation (mean error about 0.3), sharing continues with predicted
slowdowns scaled by the learned ratio (about 1.27), and sharing pairs are victims at their
host's checkpoint (`pair_victims`): at Venus ×1.5 and ×2.0 sharing on vs off gives {plus25}
(before `pair_victims` it lost 6 %: a tenant's wide jobs waited behind pairs nothing could
preempt; docs/deepshare.md). With the model as fitted (measured, fallback): {fitted}; the
QoS cost is pairs whose true slowdown passes the 1.5 bound (the model's error around the
budget).

{mis}

#### The target's cases as ensembles

One early change sends a run on another course: the same workload with every submission
delayed by a random 0–{jitter_s} s (`--jitter {jitter_s} --jitter-seed N`) gives average JCTs that
differ by up to {off_spread:.1f} % with sharing off alone, and more with sharing on. So each of the
target's cases (the model 50 % optimistic; another model family) also runs with jitter seeds
1–{venus_seeds} on Venus and 1–{gen_seeds} on the generated workload, and the table compares the means of
these runs and the unjittered one above, paired by seed: on − off in per cent of average JCT and in points of QoS, with the
standard error of that mean. A case is **measurably worse** when the mean difference exceeds
twice its standard error. Result: {ens_verdict}. Example: `{example_ens}`.

{ens}
"""

if __name__ == "__main__":
    main()
