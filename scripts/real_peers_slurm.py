#!/usr/bin/env python3
"""The "Against the real peers: Slurm" tables (issue #25) from the replays of
bench/slurm_testbed.sh: per policy, the real runs' mean JCT, mean queueing delay, QoS of the
guaranteed tenants' entitled jobs and p95 queueing delay per tenant (mean and min-max over
the runs), each beside the simulator's prediction for the same excerpt (`deepshare fidelity`
of that run: the jittered ensemble's mean and range; p95 per tenant from its single
simulation), and per run whether the real means lie inside that run's ensemble.

  scripts/real_peers_slurm.py OUT [POLICY...]            # markdown on stdout
  scripts/real_peers_slurm.py OUT [POLICY...] --doc docs/results.md
                     # also replaces the "### Slurm" part of its "Against the real peers"
                     # section (between the markers <!-- real-peers-slurm:begin/end -->)

Only the standard library. Every number comes from files the bench script wrote.
"""
import csv
import glob
import json
import os
import re
import sys

LABEL = {"native": "native Slurm (`slurm` baseline)", "deepshare": "DeepShare",
         "kueue": "`kueue` re-implementation", "fifo-pooled": "`fifo-pooled`"}
BEGIN, END = "<!-- real-peers-slurm:begin -->", "<!-- real-peers-slurm:end -->"


def load(path):
    with open(path) as f:
        return json.load(f)


def p95_by_tenant(jobs_csv):
    by = {}
    with open(jobs_csv) as f:
        for row in csv.DictReader(f):
            if row["status"] != "completed":
                continue
            by.setdefault(row["tenant"], []).append(float(row["queue_s"]))
    out = {}
    for t, v in by.items():
        v.sort()
        # nearest rank, as report/metrics.hpp's quantile does for whole ranks
        k = max(0, min(len(v) - 1, int(round(0.95 * (len(v) - 1)))))
        out[t] = v[k]
    return out


def run_number(d):
    """The run's number: the digits that end its folder's name (run<k>/ or <k>/)."""
    return int(re.search(r"(\d+)$", d).group(1))


def runs_of(out, policy, pattern="run*"):
    """The runs of one policy that have their fidelity outputs, in run order: OUT/POLICY/<pattern>
    (bench/slurm_testbed.sh: run<k>/; bench/k8s_testbed.sh: <k>/)."""
    runs = []
    dirs = [d for d in glob.glob(os.path.join(out, policy, pattern)) if re.search(r"\d+$", d)]
    for d in sorted(dirs, key=run_number):
        # <run>/replay/ with the fidelity outputs in replay/fidelity/; folders written before
        # replays were staged folders of their own hold both in <run>/.
        rp = os.path.join(d, "replay") if os.path.isdir(os.path.join(d, "replay")) else d
        fd = os.path.join(rp, "fidelity") if os.path.isdir(os.path.join(rp, "fidelity")) else d
        if not os.path.exists(os.path.join(fd, "fidelity.json")):
            continue
        r = {"dir": d, "fid": load(os.path.join(fd, "fidelity.json")),
             "summary": load(os.path.join(rp, "summary.json")),
             "real_p95": p95_by_tenant(os.path.join(rp, "jobs.csv")),
             "sim_p95": p95_by_tenant(os.path.join(fd, "sim", "jobs.csv"))}
        r["run"] = load(os.path.join(d, "run.json")) if os.path.exists(os.path.join(d, "run.json")) else {}
        if not r["run"] and os.path.exists(os.path.join(d, "replay.txt")):
            # bench/k8s_testbed.sh before it wrote run.json: the load at the replay's end only
            m = re.search(r"load at the end of the replay: (\S+ \S+ \S+)", open(os.path.join(d, "replay.txt")).read())
            r["run"] = {"loadavg_after": m.group(1)} if m else {}
        runs.append(r)
    return runs


def spread(xs, fmt="{:,.0f}"):
    if not xs:
        return "—"
    m = sum(xs) / len(xs)
    if len(xs) == 1:
        return fmt.format(m)
    return f"{fmt.format(m)} ({fmt.format(min(xs))}–{fmt.format(max(xs))})"


def pct(xs):
    return spread([100 * x for x in xs], "{:.1f} %")


def ens(runs, key):
    """The ensembles' means (averaged over runs) and their overall range."""
    e = [r["fid"]["ensemble"][key] for r in runs if "ensemble" in r["fid"]]
    if not e:
        return "—"
    scale = 100 if key == "qos_compliance" else 1
    fmt = "{:.1f} %" if key == "qos_compliance" else "{:,.0f}"
    m = sum(x["mean"] for x in e) / len(e) * scale
    return f"{fmt.format(m)} ({fmt.format(min(x['min'] for x in e) * scale)}–{fmt.format(max(x['max'] for x in e) * scale)})"


def tables(out, policies, label=LABEL, pattern="run*"):
    """The three tables, for bench/slurm_testbed.sh's folders (and, with the label and folder
    pattern of its engine, scripts/real_peers_k8s.py's)."""
    allruns = {p: runs_of(out, p, pattern) for p in policies}
    tenants = sorted({t for rs in allruns.values() for r in rs for t in r["real_p95"]})
    lines = ["| policy | runs | mean JCT (s): real | simulated | mean queueing delay (s): real | "
             "simulated | QoS of entitled jobs: real | simulated | preemptions: real | simulated |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for p, rs in allruns.items():
        if not rs:
            lines.append(f"| {label.get(p, p)} | 0 | | | | | | | | |")
            continue
        f = [r["fid"] for r in rs]
        lines.append(
            f"| {label.get(p, p)} | {len(rs)} | **{spread([x['real_avg_jct_s'] for x in f])}** | "
            f"{ens(rs, 'avg_jct_s')} | **{spread([x['real_avg_queue_s'] for x in f])}** | "
            f"{ens(rs, 'avg_queue_s')} | **{pct([x['real_qos_compliance'] for x in f])}** | "
            f"{ens(rs, 'qos_compliance')} | {spread([x['real_preemptions'] for x in f])} | "
            f"{ens(rs, 'preemptions')} |")
    lines += ["", "p95 queueing delay per tenant (s), real (mean and min–max over the runs) / "
              "simulated (the single simulation of each run, mean over the runs):", "",
              "| policy | " + " | ".join(tenants) + " |", "|---|" + "---|" * len(tenants)]
    for p, rs in allruns.items():
        cells = []
        for t in tenants:
            real = [r["real_p95"][t] for r in rs if t in r["real_p95"]]
            sim = [r["sim_p95"][t] for r in rs if t in r["sim_p95"]]
            cells.append(f"{spread(real)} / {spread([sum(sim) / len(sim)]) if sim else '—'}")
        lines.append(f"| {label.get(p, p)} | " + " | ".join(cells) + " |")
    lines += ["", "Each run against its own simulations (32 jittered ones with the start latency, "
              "jitter and overhang it measured); load average (1, 5, 15 min) before and after:", "",
              "| policy | run | UTC | wall s | load before → after | start latency ± jitter (wall s) "
              "| mean JCT real / ensemble range | inside | mean queueing real / ensemble range | inside |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for p, rs in allruns.items():
        for r in rs:
            f, run = r["fid"], r["run"]
            e = f.get("ensemble", {})
            def inside(key, real):
                if not e:
                    return "—"
                return "yes" if e[key]["min"] <= real <= e[key]["max"] else \
                    f"no ({100 * (real - e[key]['mean']) / e[key]['mean']:+.1f} % vs. mean)"
            rng = lambda key: f"{e[key]['min']:,.0f}–{e[key]['max']:,.0f}" if e else "—"
            lines.append(
                f"| {label.get(p, p)} | {run_number(r['dir'])} | {run.get('start_utc', '')} | "
                f"{f['replay_wall_s']:.0f} | {run.get('loadavg_before', '')} → {run.get('loadavg_after', '')} | "
                f"{f['start_latency_wall_s']:.3f} ± {f['jitter_wall_s']:.3f} | "
                f"{f['real_avg_jct_s']:,.0f} / {rng('avg_jct_s')} | {inside('avg_jct_s', f['real_avg_jct_s'])} | "
                f"{f['real_avg_queue_s']:,.0f} / {rng('avg_queue_s')} | {inside('avg_queue_s', f['real_avg_queue_s'])} |")
    return "\n".join(lines) + "\n"


def write_doc(doc, begin, end, md):
    """Replaces what lies between the markers begin and end in the file doc by md."""
    text = open(doc).read()
    if begin not in text or end not in text:
        print(f"{doc}: no {begin} ... {end} markers", file=sys.stderr)
        return 2
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: begin + "\n" + md + end,
                  text, flags=re.S)
    with open(doc, "w") as f:
        f.write(text)
    return 0


def doc_option(argv):
    """argv without `--doc FILE`, and FILE (None without it)."""
    if "--doc" not in argv:
        return argv, None
    i = argv.index("--doc")
    return argv[:i] + argv[i + 2:], argv[i + 1]


def main(argv):
    argv, doc = doc_option(argv)
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out, policies = argv[0], argv[1:] or ["native", "deepshare", "kueue", "fifo-pooled"]
    md = tables(out, policies)
    sys.stdout.write(md)
    return write_doc(doc, BEGIN, END, md) if doc else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
