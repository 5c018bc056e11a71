#!/usr/bin/env python3
"""The tables of bench/k8s_scale.sh: one row per scheduler from OUT/<scheduler>/result.json.

Usage: bench/k8s_scale_table.py OUT SCHEDULER... [--doc docs/results.md]
  --doc FILE  also replaces the part of FILE between <!-- k8s-scale:begin --> and
              <!-- k8s-scale:end --> (docs/results.md, "Against the real peers").
"""
import importlib.util
import json
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "real_peers_slurm", os.path.join(_here, "..", "scripts", "real_peers_slurm.py"))
peers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(peers)

BEGIN, END = "<!-- k8s-scale:begin -->", "<!-- k8s-scale:end -->"
LABEL = {"deepshare": "DeepShare (`deepshare k8s run`)",
         "default": "kube-scheduler, as it ships (client 50 qps)",
         "default-qps": "kube-scheduler, client 5,000 qps",
         "kueue": "Kueue admits, kube-scheduler binds (clients 5,000 qps)"}


def ms(v):
    return "-" if v is None else f"{v * 1000:,.0f}"


def num(v, fmt="{:.1f}"):
    return "-" if v is None else fmt.format(v)


def tables(out, schedulers):
    """The markdown of the two tables, and how many result files were missing."""
    rows, cpu_rows, bad = [], [], 0
    for s in schedulers:
        path = os.path.join(out, s, "result.json")
        try:
            with open(path) as f:
                r = json.load(f)
        except (OSError, ValueError) as e:
            print(f"k8s_scale_table.py: {path}: {e}", file=sys.stderr)
            bad += 1
            continue
        ph = r["phases"]
        cells = [LABEL.get(s, s)]
        for name, key in (("arrivals", "create_to_bound"), ("fill", "create_to_bound"),
                          ("churn", "freed_to_bound")):
            p = ph.get(name)
            if not p:
                cells += ["-"] * 3
                continue
            lat = p[key]
            done = "" if p.get("complete", True) else " (incomplete)"
            cells += [num(p.get("pods_bound_per_s")) + done, ms(lat["p50_s"]), ms(lat["p99_s"])]
        rss = num(r["peak_rss_mib"].get("scheduler"), "{:.0f}")
        if r["peak_rss_mib"].get("kueue") is not None:  # the admission is part of the scheduler
            rss += " + " + num(r["peak_rss_mib"]["kueue"], "{:.0f}") + " (Kueue)"
        cells.append(rss)
        cells.append("yes" if r.get("ok") else "no")
        rows.append(cells)
        total = {}
        for p in ph.values():
            for proc, sec in p["cpu_s"].items():
                total[proc] = total.get(proc, 0) + sec
        wall = sum(p["wall_s"] for p in ph.values())
        cpu_rows.append([LABEL.get(s, s), f"{wall:.0f}"] + [
            num(total.get(k)) for k in ("scheduler", "kueue", "kube-apiserver", "etcd", "kwok",
                                        "kube-controller-manager")])
    md = ["| scheduler | arrivals: bound/s | p50 ms | p99 ms | burst: bound/s | p50 ms | p99 ms "
          "| churn, backlog pending: bound/s | freed→bound p50 ms | p99 ms | scheduler peak RSS MiB "
          "| all bound |",
          "|---|" + "---:|" * 10 + "---|"]
    md += ["| " + " | ".join(c) + " |" for c in rows]
    md += ["", "CPU seconds of each process over the three phases (user + system, /proc):", "",
           "| scheduler under test | wall s | scheduler | Kueue | kube-apiserver | etcd | KWOK "
           "| kube-controller-manager |",
           "|---|" + "---:|" * 7]
    md += ["| " + " | ".join(c) + " |" for c in cpu_rows]
    return "\n".join(md) + "\n", bad


def main(argv):
    argv, doc = peers.doc_option(argv)
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    md, bad = tables(argv[1], argv[2:])
    print(md, end="")
    if doc:
        rc = peers.write_doc(doc, BEGIN, END, md)
        if rc:
            return rc
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
