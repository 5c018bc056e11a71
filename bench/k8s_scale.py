#!/usr/bin/env python3
"""Load and measurement of the Kubernetes scale benchmark (bench/k8s_scale.sh, issue #25 item 4).

Drives one scheduler on a running test cluster (scripts/k8s/start-cluster.sh, its BASE) with
bare 1-GPU pods in one namespace, and measures, from one watch of the namespace's pods kept
open for the whole run (times taken on this machine's monotonic clock when each event
arrives):

  arrivals  ARRIVALS pods created at RATE per second, each running RUN_FOR seconds once
            started (KWOK's deepshare.io/run-for): per pod the time from just before its
            POST to the first watch event that shows it bound (spec.nodeName); pods bound
            per second over the phase; p50/p99/max. Then they are deleted.
  fill      FILL pods that run until deleted, created as fast as CONCURRENCY connections
            allow (a burst): bound per second, creation -> binding.
  backlog   BACKLOG more such pods: the cluster is full, so they wait (pending; settle
            SETTLE seconds for the scheduler to have seen and marked them all).
  churn     CHURN_RATE fill pods per second deleted for CHURN_S seconds, with the backlog
            waiting: the k-th pod bound after the churn began is matched with the k-th
            fill pod whose deletion the watch showed (freed GPU -> new binding: the
            latency of a scheduler with BACKLOG pods pending), and bindings per second.

With --kueue-queue Q the pods are Kueue's to admit (plain-pod integration): created as Kueue's
pod webhook would leave them (the queue label, kueue.x-k8s.io/managed with its finalizer, the
scheduling gate kueue.x-k8s.io/admission; the test cluster registers no webhook), so that
Kueue makes a Workload of each, admits it against the ClusterQueue's quota and lifts the gate,
and kube-scheduler binds it: creation -> binding includes the admission.

Per phase also the CPU seconds (user + system, /proc/PID/stat) of the scheduler and of every
component of the cluster, and at the end their peak resident memory (VmHWM). Writes one
JSON object (--out) and prints a summary. Needs only the Python standard library.
"""
import argparse
import http.client
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse

CLK_TCK = os.sysconf("SC_CLK_TCK")


class Api:
    """HTTPS to the test cluster's API server with its admin client certificate."""

    def __init__(self, base):
        env = {}
        with open(os.path.join(base, "env.sh")) as f:
            for line in f:
                if line.startswith("export ") and "=" in line:
                    k, v = line[7:].strip().split("=", 1)
                    env[k] = v
        url = urllib.parse.urlparse(env["DS_K8S_API"])
        self.host, self.port = url.hostname, url.port
        pki = os.path.join(base, "pki")
        self.ctx = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        self.ctx.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))

    def connect(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def call(self, conn, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        conn.request(method, path, body=data, headers=headers)
        r = conn.getresponse()
        payload = r.read()
        return r.status, payload


KUEUE_MANAGED = "kueue.x-k8s.io/managed"  # label and finalizer (Kueue v0.17.0's pod webhook)


def pod_manifest(ns, name, scheduler, phase, run_for_s, kueue_queue=None):
    annotations = {"deepshare.io/run-for": f"{run_for_s}s"} if run_for_s else {}
    m = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"bench-phase": phase},
                     "annotations": annotations},
        "spec": {
            "schedulerName": scheduler,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "bench", "resources": {
                "limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "10m", "memory": "16Mi"}}}],
        },
    }
    if kueue_queue:
        m["metadata"]["labels"].update({"kueue.x-k8s.io/queue-name": kueue_queue, KUEUE_MANAGED: "true"})
        m["metadata"]["finalizers"] = [KUEUE_MANAGED]
        m["spec"]["schedulingGates"] = [{"name": "kueue.x-k8s.io/admission"}]
    return m


class Watch(threading.Thread):
    """One watch of the namespace's pods: first time each pod is seen bound, and deletions."""

    def __init__(self, api, ns):
        super().__init__(daemon=True)
        self.api, self.ns = api, ns
        self.lock = threading.Lock()
        self.bound = {}  # name -> monotonic time the watch first showed spec.nodeName
        self.bound_order = []  # names in the order they were seen bound
        self.deleted = []  # (time, name) of DELETED events, in order
        self.events = 0
        self.reconnects = 0  # watches the API server ended and that were opened again
        self.error = None
        conn = api.connect()
        status, payload = api.call(conn, "GET", f"/api/v1/namespaces/{ns}/pods?limit=1")
        if status != 200:
            raise SystemExit(f"k8s_scale.py: cannot list pods in {ns}: HTTP {status} {payload[:200]!r}")
        self.rv = json.loads(payload)["metadata"]["resourceVersion"]
        conn.close()

    def run(self):
        """Watches from the last resourceVersion seen; a watch the API server ends (its
        timeout, or a consumer it finds too slow) is opened again from there."""
        while True:
            try:
                conn = self.api.connect(timeout=3600)
                conn.request("GET", f"/api/v1/namespaces/{self.ns}/pods?watch=1&resourceVersion={self.rv}")
                r = conn.getresponse()
                if r.status != 200:
                    self.error = f"watch: HTTP {r.status}"
                    return
                while True:
                    line = r.readline()
                    if not line:
                        break
                    now = time.monotonic()
                    ev = json.loads(line)
                    obj = ev.get("object", {})
                    meta = obj.get("metadata", {})
                    if ev.get("type") == "ERROR":  # 410 Gone: the events since rv are lost
                        self.error = f"watch: {obj.get('message', 'ERROR event')}"
                        return
                    name = meta.get("name")
                    with self.lock:
                        self.events += 1
                        self.rv = meta.get("resourceVersion", self.rv)
                        if ev.get("type") == "DELETED":
                            self.deleted.append((now, name))
                        elif obj.get("spec", {}).get("nodeName") and name not in self.bound:
                            self.bound[name] = now
                            self.bound_order.append(name)
                with self.lock:
                    self.reconnects += 1
                conn.close()
            except Exception as e:  # noqa: BLE001: reported, the run fails on it
                self.error = f"watch: {e}"
                return

    def bound_count(self, names):
        with self.lock:
            return sum(1 for n in names if n in self.bound)


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except OSError:
        return None


def peak_rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def processes(base, sched_pid):
    """name -> pid: the scheduler under test and every component of the cluster."""
    procs = {"scheduler": sched_pid}
    run = os.path.join(base, "run")
    for f in sorted(os.listdir(run)):
        if f.endswith(".pid"):
            with open(os.path.join(run, f)) as fh:
                pid = int(fh.read().strip() or 0)
            # a component's pid file holds its run/NAME.sh, which execs the binary
            if pid and os.path.exists(f"/proc/{pid}"):
                procs[f[:-4]] = pid
    return procs


def cpu_snapshot(procs):
    return {n: cpu_seconds(p) for n, p in procs.items()}


def cpu_delta(a, b):
    return {n: round(b[n] - a[n], 2) for n in a if a[n] is not None and b.get(n) is not None}


def percentile(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def latency_stats(values):
    return {"n": len(values), "p50_s": percentile(values, 0.50), "p99_s": percentile(values, 0.99),
            "max_s": max(values) if values else None,
            "mean_s": sum(values) / len(values) if values else None}


def fan_out(api, concurrency, items, rate, request, done):
    """Sends request(item) -> (method, path, body) for each item over CONCURRENCY connections,
    at RATE per second (0: as fast as they allow); done(item, t, status, payload) under a lock,
    t the monotonic time just before the request. Returns the seconds it took."""
    start = time.monotonic()
    lock = threading.Lock()
    it = iter(enumerate(items))

    def worker():
        conn = api.connect()
        while True:
            with lock:
                nxt = next(it, None)
            if nxt is None:
                break
            i, item = nxt
            if rate:
                wait = start + i / rate - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            t = time.monotonic()
            try:
                status, payload = api.call(conn, *request(item))
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                conn = api.connect()
                status, payload = 0, str(e).encode()
            with lock:
                done(item, t, status, payload)
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.monotonic() - start


class Creator:
    """Creates (and deletes) the pods over CONCURRENCY connections."""

    def __init__(self, api, ns, concurrency):
        self.api, self.ns, self.concurrency = api, ns, concurrency
        self.created = {}  # name -> monotonic time just before its POST
        self.failures = []

    def create(self, manifests, rate):
        """rate: pods per second (0: as fast as the connections allow)."""
        def done(m, t, status, payload):
            if status == 201:
                self.created[m["metadata"]["name"]] = t
            else:
                self.failures.append((m["metadata"]["name"], status, payload[:200].decode("utf-8", "replace")))
        return fan_out(self.api, self.concurrency, manifests, rate,
                       lambda m: ("POST", f"/api/v1/namespaces/{self.ns}/pods", m), done)

    def delete(self, names):
        """Deletes the pods at once (grace period 0); a pod already gone is no failure."""
        def done(name, _t, status, payload):
            if status not in (200, 202, 404):
                self.failures.append((name, status, payload[:200].decode("utf-8", "replace")))
        return fan_out(self.api, self.concurrency, names, 0,
                       lambda n: ("DELETE", f"/api/v1/namespaces/{self.ns}/pods/{n}?gracePeriodSeconds=0", None),
                       done)


def wait_until(pred, timeout, what, watch, poll=0.2):
    deadline = time.monotonic() + timeout
    while not pred():
        if watch.error:
            raise SystemExit(f"k8s_scale.py: {watch.error}")
        if time.monotonic() > deadline:
            return False
        time.sleep(poll)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the cluster's BASE folder (start-cluster.sh)")
    ap.add_argument("--ns", default="bench")
    ap.add_argument("--scheduler-name", required=True, help="spec.schedulerName of the pods")
    ap.add_argument("--sched-pid", type=int, required=True, help="pid of the scheduler under test")
    ap.add_argument("--arrivals", type=int, default=10000)
    ap.add_argument("--rate", type=float, default=50.0, help="arrivals per second")
    ap.add_argument("--run-for", type=int, default=30, help="seconds each arriving pod runs")
    ap.add_argument("--fill", type=int, default=8000)
    ap.add_argument("--backlog", type=int, default=10000)
    ap.add_argument("--settle", type=float, default=30.0, help="seconds the backlog waits before the churn")
    ap.add_argument("--churn-rate", type=float, default=50.0)
    ap.add_argument("--churn-s", type=float, default=60.0)
    ap.add_argument("--concurrency", type=int, default=4, help="connections creating pods")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds any phase may wait")
    ap.add_argument("--kueue-queue", help="the pods are Kueue's (plain-pod integration), in this LocalQueue")
    ap.add_argument("--out", required=True, help="JSON file written")
    a = ap.parse_args()

    api = Api(a.base)
    procs = processes(a.base, a.sched_pid)
    watch = Watch(api, a.ns)
    watch.start()
    creator = Creator(api, a.ns, a.concurrency)
    result = {"scheduler_name": a.scheduler_name, "args": vars(a), "phases": {}}
    ok = True

    def phase(name, fn):
        nonlocal ok
        before, t0, load0 = cpu_snapshot(procs), time.monotonic(), os.getloadavg()
        r = fn()
        r["wall_s"] = round(time.monotonic() - t0, 2)
        r["cpu_s"] = cpu_delta(before, cpu_snapshot(procs))
        r["loadavg_before"], r["loadavg_after"] = load0, os.getloadavg()
        result["phases"][name] = r
        ok = ok and r.get("complete", True)
        print(f"{name}: {json.dumps({k: v for k, v in r.items() if k != 'cpu_s'})}", flush=True)
        print(f"{name}: cpu_s {json.dumps(r['cpu_s'])}", flush=True)

    def bound_phase(names, rate):
        create_s = creator.create([pod_manifest(a.ns, n, a.scheduler_name, names[n][0], names[n][1], a.kueue_queue) for n in names], rate)
        complete = wait_until(lambda: watch.bound_count(names) == len(names), a.timeout, "bound", watch)
        with watch.lock:
            times = [(creator.created[n], watch.bound[n]) for n in names if n in watch.bound and n in creator.created]
        lat = [b - c for c, b in times]
        first_c = min(c for c, _ in times) if times else 0
        last_b = max(b for _, b in times) if times else 0
        return {"pods": len(names), "created": sum(1 for n in names if n in creator.created),
                "bound": len(times), "complete": complete, "create_s": round(create_s, 2),
                "pods_bound_per_s": round(len(times) / (last_b - first_c), 1) if last_b > first_c else None,
                "create_to_bound": latency_stats(lat)}

    arrivals = {f"a-{i}": ("arrivals", a.run_for) for i in range(a.arrivals)}
    if a.arrivals:
        phase("arrivals", lambda: bound_phase(arrivals, a.rate))
        # delete them (the finished ones and any still running), one request each (one
        # deletecollection of 10,000 pods outlasts the API server's 60 s request timeout)
        creator.delete([n for n in arrivals if n in creator.created])
        gone = wait_until(lambda: len({n for _, n in watch.deleted} & arrivals.keys()) == len(creator.created.keys() & arrivals.keys()),
                          a.timeout, "arrivals deleted", watch)
        if not gone:
            print("arrivals: not all deleted in time", flush=True)
            ok = False
    fill = {f"f-{i}": ("fill", 0) for i in range(a.fill)}
    if a.fill:
        phase("fill", lambda: bound_phase(fill, 0))

    def backlog_and_churn():
        backlog = {f"b-{i}": ("backlog", 0) for i in range(a.backlog)}
        creator.create([pod_manifest(a.ns, n, a.scheduler_name, "backlog", 0, a.kueue_queue) for n in backlog], 0)
        time.sleep(a.settle)
        early = watch.bound_count(backlog)
        with watch.lock:
            n_deleted0 = len(watch.deleted)
            bound0 = len(watch.bound_order)
        victims = list(fill)[: int(a.churn_rate * a.churn_s)]
        fan_out(api, 1, victims, a.churn_rate,
                lambda v: ("DELETE", f"/api/v1/namespaces/{a.ns}/pods/{v}?gracePeriodSeconds=0", None),
                lambda *_: None)
        complete = wait_until(lambda: len(watch.bound_order) - bound0 >= len(victims), a.timeout, "refilled", watch)
        with watch.lock:
            dels = [t for t, n in watch.deleted[n_deleted0:] if n in fill]
            binds = [watch.bound[n] for n in watch.bound_order[bound0:]]
        k = min(len(dels), len(binds))
        lag = [binds[i] - dels[i] for i in range(k)]
        span = (binds[k - 1] - dels[0]) if k else 0
        return {"backlog": a.backlog, "bound_before_churn": early, "deleted": len(dels), "bound": len(binds),
                "complete": complete, "pods_bound_per_s": round(k / span, 1) if span > 0 else None,
                "freed_to_bound": latency_stats(lag)}

    if a.backlog and a.fill:
        phase("churn", backlog_and_churn)
    result["peak_rss_mib"] = {n: peak_rss_mib(p) for n, p in procs.items()}
    result["watch_events"] = watch.events
    result["watch_reconnects"] = watch.reconnects
    result["create_failures"] = creator.failures[:20]
    result["create_failure_count"] = len(creator.failures)
    result["ok"] = ok and not creator.failures and not watch.error
    print(f"peak_rss_mib: {json.dumps(result['peak_rss_mib'])}", flush=True)
    if creator.failures:
        print(f"create failures: {len(creator.failures)}, first: {creator.failures[0]}", flush=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
