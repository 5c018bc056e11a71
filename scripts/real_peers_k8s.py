#!/usr/bin/env python3
"""The "Against the real peers: Kubernetes" tables (issue #25 item 3) from the replays of
bench/k8s_testbed.sh: the real Kueue (kube-scheduler placing what it admits), kube-scheduler
alone and DeepShare as the scheduler (`deepshare k8s run`), each run beside the simulator's
prediction for the same excerpt (the same three tables as scripts/real_peers_slurm.py, whose
code this reuses), then DeepShare against each peer beside the paper's testbed figures.

  scripts/real_peers_k8s.py OUT [SCHEDULER...]            # markdown on stdout
  scripts/real_peers_k8s.py OUT [SCHEDULER...] --doc docs/results.md
                     # also replaces the part between <!-- real-peers-k8s:begin/end -->

Only the standard library. Every number comes from files the bench script wrote, but for the
paper's two figures (its abstract: -34 % JCT, 93 % QoS compliance for guaranteed tenants on a
16-GPU Kubernetes testbed with real GPUs).
"""
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("real_peers_slurm", os.path.join(_here, "real_peers_slurm.py"))
peers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(peers)

LABEL = {"kueue": "real Kueue v0.17 + kube-scheduler (simulated: `kueue`)",
         "default": "kube-scheduler alone (simulated: `fifo-pooled`)",
         "deepshare": "DeepShare, `deepshare k8s run` (simulated: `deepshare`)"}
PEER = {"kueue": "the real Kueue", "default": "kube-scheduler alone"}
BEGIN, END = "<!-- real-peers-k8s:begin -->", "<!-- real-peers-k8s:end -->"


def mean(xs):
    return sum(xs) / len(xs)


def change(ours, theirs):
    return f"{100 * (ours - theirs) / theirs:+.1f} %"


def against(out, schedulers):
    """DeepShare's real means against each peer's, and the paper's testbed figures."""
    if "deepshare" not in schedulers:
        return ""
    ds = [r["fid"] for r in peers.runs_of(out, "deepshare", "[0-9]*")]
    if not ds:
        return ""
    lines = ["| DeepShare against | runs each | mean JCT | mean queueing delay | "
             "QoS of entitled jobs: DeepShare / peer |", "|---|---|---|---|---|"]
    for s in schedulers:
        if s == "deepshare":
            continue
        pf = [r["fid"] for r in peers.runs_of(out, s, "[0-9]*")]
        if not pf:
            continue
        key = lambda fs, k: mean([f[k] for f in fs])
        lines.append(
            f"| {PEER.get(s, s)} | {len(ds)} / {len(pf)} | "
            f"{change(key(ds, 'real_avg_jct_s'), key(pf, 'real_avg_jct_s'))} | "
            f"{change(key(ds, 'real_avg_queue_s'), key(pf, 'real_avg_queue_s'))} | "
            f"{100 * key(ds, 'real_qos_compliance'):.1f} % / {100 * key(pf, 'real_qos_compliance'):.1f} % |")
    lines.append("| the paper's testbed (its baselines; 16 real GPUs; abstract only) | | -34 % | | 93 % / |")
    return "\n".join(lines) + "\n"


def options_of(out, scheduler):
    """The policy options its first run's config set (bench/k8s_testbed.sh OPTIONS), as
    `key=value` words; "" when none."""
    path = os.path.join(out, scheduler, "1", "config.yaml")
    if not os.path.exists(path):
        return ""
    words, inside = [], False
    for line in open(path):
        if line.startswith("options:"):
            inside = True
        elif inside and line.startswith("  ") and ":" in line:
            key, value = line.strip().split(":", 1)
            words.append(f"{key}={value.strip().strip(chr(34))}")
        else:
            inside = False
    return " ".join(words)


def main(argv):
    argv, doc = peers.doc_option(argv)
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out, schedulers = argv[0], argv[1:] or ["kueue", "default", "deepshare"]
    labels = dict(LABEL)
    for s in schedulers:
        options = options_of(out, s)
        if options:
            labels[s] = f"{LABEL.get(s, s)}, `{options}`"
    md = peers.tables(out, schedulers, labels, "[0-9]*") + "\n" + against(out, schedulers)
    sys.stdout.write(md)
    return peers.write_doc(doc, BEGIN, END, md) if doc else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
