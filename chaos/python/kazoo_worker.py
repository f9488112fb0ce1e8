"""A chaos worker process that uses Kazoo's Lock instead of zklock's Mutex.

Package chaos starts it (Debian's python3 with python3-kazoo) like a Go
worker, with the same environment (see worker.go): ZKLOCK_CHAOS_PROC,
_ADDRS, _LOG, _ROOT, _SEED; the session timeout comes as
ZKLOCK_CHAOS_SESSION_MS. It runs one workload, on the reentrant path, whose
nodes zklock's ReentrantMutex shares (Kazoo's Lock is made to see zklock's
"-lock-" nodes with extra_lock_patterns), writing through the same counter.
Not on the mutex path, which Curator workers share: Curator's lock does not
see Kazoo's nodes (it sorts a name without "lock-" after every other), so
the two libraries exclude each other only through zklock, never directly.

It logs the events of chaos.Event, one JSON object per line, each with one
write(2) on an O_APPEND file, times from time.monotonic_ns() (CLOCK_MONOTONIC
on Linux, the clock of chaos.Now), plus "conn" events with Kazoo's
connection states, and at each acquire the full path of its lock node
("node"), whose deletion the coordinator records: the ground truth of the
checker's excuses for Kazoo. A log line it cannot write ends it at once
with status 3. Like a plain Kazoo user it holds until it releases,
whatever the connection state says, and writes without a token (Kazoo's
Lock has none): the checker reports what follows from that apart.

It runs until its stdin is closed, then finishes its round, releases and
exits 0.
"""

import json
import os
import random
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, LockTimeout, NodeExistsError, NoNodeError, RolledBackError
from kazoo.protocol.states import KazooState

ACQUIRE_S = 30.0
MAX_ROUNDS = 1000000
LIB = "kazoo"
PRIM = "reentrant"


class Worker:
    def __init__(self):
        self.proc = os.environ["ZKLOCK_CHAOS_PROC"]
        self.root = os.environ["ZKLOCK_CHAOS_ROOT"]
        self.rnd = random.Random(int(os.environ["ZKLOCK_CHAOS_SEED"]))
        self.log = os.open(os.environ["ZKLOCK_CHAOS_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.wid = 0

    def event(self, ev, **kw):
        e = {"ev": ev, "proc": self.proc, "prim": kw.pop("prim", PRIM), "lib": LIB, "t": kw.pop("t", time.monotonic_ns())}
        e.update({k: v for k, v in kw.items() if v not in ("", 0, None)})
        line = (json.dumps(e, separators=(",", ":")) + "\n").encode()
        with self.lock:
            try:
                n = os.write(self.log, line)  # one write(2)
            except OSError as err:
                n, why = -1, err
            else:
                why = "short write"
            if n != len(line):
                # The checker must not judge a history with holes in it.
                sys.stderr.write("kazoo worker: log: %s\n" % why)
                os._exit(3)

    def increment(self, zk):
        self.wid += 1
        counter = self.root + "/data/" + PRIM + "/counter"
        try:
            data, _ = zk.get(counter)
        except Exception as e:  # noqa: BLE001 - any failure skips the write
            self.event("write", w=self.wid, res="skipped", err=repr(e))
            return
        v = int(data) + 1
        rc = json.dumps({"proc": self.proc, "w": self.wid, "tok": 0, "v": v}, separators=(",", ":")).encode()
        t = zk.transaction()
        t.set_data(counter, str(v).encode())
        t.create(self.root + "/data/" + PRIM + "/r/w-", rc, sequence=True)
        t0 = time.monotonic_ns()
        res, err = "ok", ""
        try:
            results = t.commit()
            bad = [r for r in results if isinstance(r, Exception) and not isinstance(r, RolledBackError)]
            if bad:
                res, err = "rejected", repr(bad[0])
                if not isinstance(bad[0], (NoNodeError, BadVersionError, NodeExistsError)):
                    res = "unknown"
        except Exception as e:  # noqa: BLE001 - connection loss: unknown
            res, err = "unknown", repr(e)
        self.event("write", t=t0, t1=time.monotonic_ns(), w=self.wid, v=v, res=res, err=err)

    def loop(self, zk):
        lock = zk.Lock(self.root + "/locks/" + PRIM, "kazoo:%d" % os.getpid(), extra_lock_patterns=["-lock-"])
        for _ in range(MAX_ROUNDS):
            if self.stopping.is_set():
                return
            self.event("wait")
            try:
                got = lock.acquire(timeout=ACQUIRE_S)
            except LockTimeout:
                got = False
            except Exception as e:  # noqa: BLE001 - session trouble: start over
                self.event("waitfail", err=repr(e))
                time.sleep(0.1)
                continue
            if not got:
                self.event("waitfail", err="not acquired within %ss" % ACQUIRE_S)
                continue
            self.event("acquire", mode="w", node=lock.path + "/" + (lock.node or ""))
            for _ in range(1 + self.rnd.randrange(3)):
                if self.stopping.is_set():
                    break
                time.sleep(self.rnd.randrange(50) / 1000)
                self.increment(zk)
            self.event("release", mode="w", res="released")
            try:
                lock.release()
            except Exception:  # noqa: BLE001 - the session is gone: its node with it
                pass
            time.sleep(self.rnd.randrange(40) / 1000)

    def run(self):
        timeout = int(os.environ["ZKLOCK_CHAOS_SESSION_MS"]) / 1000
        zk = KazooClient(hosts=os.environ["ZKLOCK_CHAOS_ADDRS"], timeout=timeout)
        zk.add_listener(lambda state: self.event("conn", prim="", res=str(state)))
        zk.start(timeout=30)
        t = threading.Thread(target=self.loop, args=(zk,), daemon=True)
        t.start()
        sys.stdin.buffer.read()  # the coordinator closes stdin to stop us
        self.stopping.set()
        t.join(20)
        zk.stop()
        zk.close()
        os.close(self.log)


if __name__ == "__main__":
    Worker().run()
    sys.exit(0)
