"""Kazoo driver for zklock's benchmark runner (bench/external.go describes
the line protocol). Each client is a thread; sessions are KazooClient
instances, each with its own ZooKeeper connection; exclusion is checked
across the threads. Run with /usr/bin/python3, which sees Debian's
python3-kazoo."""

import logging
import random
import sys
import threading
import time

import kazoo.version
from kazoo.client import KazooClient

OP_TIMEOUT = 60.0

logging.basicConfig(level=logging.CRITICAL)


class Bench:
    def __init__(self):
        self.clients = []
        self.workers = []
        self.cfg = {}

    def setup(self, kv):
        self.teardown()
        self.cfg = {k: (v if k in ("kind", "path", "connect") else int(v)) for k, v in kv.items()}
        c = self.cfg
        started = []
        for _ in range(c["sessions"]):
            zk = KazooClient(hosts=c["connect"], timeout=60.0)
            started.append(zk.start_async())
            self.clients.append(zk)
        for zk, ev in zip(self.clients, started):
            ev.wait(30)
            if not zk.connected:
                raise RuntimeError("kazoo: no connection within 30s")
        for i in range(c["clients"]):
            zk = self.clients[i % c["sessions"]]
            ident = "bench-%d" % i
            if c["kind"] == "mutex":
                self.workers.append((zk.Lock("%s/l%d" % (c["path"], i % c["locks"]), ident), None))
            elif c["kind"] == "rw":
                p = c["path"] + "/rw"
                self.workers.append((zk.ReadLock(p, ident), zk.WriteLock(p, ident)))
            elif c["kind"] == "sem":
                self.workers.append((zk.Semaphore(c["path"] + "/sem", ident, max_leases=c["limit"]), None))
            else:
                raise ValueError("kind " + c["kind"])

    def teardown(self):
        def stop(zk):
            zk.stop()
            zk.close()
        threads = [threading.Thread(target=stop, args=(zk,)) for zk in self.clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.clients, self.workers = [], []

    def run(self, kv):
        c = self.cfg
        warm, dur = int(kv["warm_ms"]) / 1e3, int(kv["dur_ms"]) / 1e3
        max_ops, min_seq = int(kv["max_ops"]), int(kv["min_seq"])
        handoff, seed = kv["handoff"] == "1", int(kv["seed"])
        limit = c.get("limit", 1)
        acq, free, rel = [0] * max_ops, [0] * max_ops, [0] * max_ops
        state = {"seq": 0, "readers": 0, "violations": 0, "errors": 0, "first": ""}
        hold = [0] * c["locks"]
        mu = threading.Lock()  # guards state and hold: the checks, not the benchmarked lock
        stop = threading.Event()

        def worker(i, read_lock, write_lock):
            rng = random.Random(seed * 1000003 + i)
            lock_i = i % c["locks"]
            for _ in range(max_ops):
                if stop.is_set():
                    return
                write = write_lock is not None and rng.randrange(100) >= c["readpct"]
                lk = write_lock if write else read_lock
                try:
                    if not lk.acquire(timeout=OP_TIMEOUT):
                        raise RuntimeError("acquire timed out")
                    with mu:
                        k = state["seq"]
                        state["seq"] += 1
                        if k < max_ops:
                            acq[k] = time.monotonic_ns()
                        if c["kind"] == "sem":
                            hold[0] += 1
                            bad = hold[0] > limit
                        elif c["kind"] == "rw" and not write:
                            state["readers"] += 1
                            bad = hold[0] != 0
                        else:
                            hold[lock_i] += 1
                            bad = hold[lock_i] != 1 or state["readers"] != 0
                        if bad:
                            state["violations"] += 1
                    with mu:
                        if k < max_ops:  # the holder lets go: the handoff is timed from here (tally in drive.go)
                            free[k] = time.monotonic_ns()
                        if c["kind"] == "rw" and not write:
                            state["readers"] -= 1
                        else:
                            hold[lock_i] -= 1
                    lk.release()
                except Exception as e:  # reported, not raised: the runner fails the trial
                    with mu:
                        state["errors"] += 1
                        state["first"] = state["first"] or repr(e)
                    return
                if k >= max_ops:
                    return
                rel[k] = time.monotonic_ns()

        threads = [threading.Thread(target=worker, args=(i, r, w), daemon=True)
                   for i, (r, w) in enumerate(self.workers)]
        for t in threads:
            t.start()
        time.sleep(warm)
        deadline = time.monotonic() + 60
        while state["seq"] < min_seq and time.monotonic() < deadline and state["errors"] == 0:
            time.sleep(0.005)
        t0 = time.monotonic_ns()
        time.sleep(dur)
        t1 = time.monotonic_ns()
        stop.set()
        for t in threads:
            t.join(OP_TIMEOUT + 10)
        n = min(state["seq"], max_ops)
        ops, lat = 0, []
        for k in range(n):
            if rel[k] == 0 or rel[k] < t0 or rel[k] > t1:
                continue
            ops += 1
            if handoff and k + 1 < n and acq[k + 1] and free[k]:
                lat.append((acq[k + 1] - free[k]) / 1e3)
        h = "nan"
        if lat:
            lat.sort()
            m = len(lat)
            h = lat[m // 2] if m % 2 else (lat[m // 2 - 1] + lat[m // 2]) / 2
        first = "_".join(state["first"].split())
        return "ops=%d total=%d rate=%f handoff_us=%s violations=%d errors=%d first_error=%s" % (
            ops, n, ops / ((t1 - t0) / 1e9), h, state["violations"], state["errors"], first)


def main():
    b = Bench()
    print("ready Kazoo %s on Python %s" % (kazoo.version.__version__, sys.version.split()[0]), flush=True)
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        kv = dict(p.split("=", 1) for p in f[1:] if "=" in p)
        try:
            if f[0] == "setup":
                b.setup(kv)
                print("ok", flush=True)
            elif f[0] == "run":
                print("ok " + b.run(kv), flush=True)
            elif f[0] == "teardown":
                b.teardown()
                print("ok", flush=True)
            else:
                print("err unknown request " + f[0], flush=True)
        except Exception as e:
            print("err " + " ".join(repr(e).split()), flush=True)
    b.teardown()


if __name__ == "__main__":
    main()
