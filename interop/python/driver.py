"""Run Kazoo locks for zklock's interop tests.

interop/interop_test.go runs this with /usr/bin/python3 and Debian's
python3-kazoo, next to zklock clients on the same lock path.

Usage: driver.py key=value...

    connect=127.0.0.1:port  path=/lock/path  id=party  log=/shared/log
    mode=lock           a loop over kazoo.recipe.lock.Lock created with
                        extra_lock_patterns=["-lock-"], which makes Kazoo
                        see zklock's and Curator's "-lock-" nodes
    mode=lock-default   the same loop without the extra pattern: Kazoo is
                        then blind to those nodes (a negative control)
    mode=interactive    take commands on stdin (below)
    cycles=N            acquisitions the loop makes (default 1)
    hold=MS             how long the loop holds each one (default 20)

The protocol is interop/java/Driver.java's: stdout gets "ready", then the
driver waits for "go" on stdin. A loop says "held <cycle>" and "released
<cycle>", then "done". In interactive mode each stdin line is a command,
answered by one line:

    acquire <kind> <ms>  kind is lock or lock-default (one Lock each, as
                         above); answers "held <kind>", or "busy <kind>" if
                         not acquired within ms
    release <kind>       answers "released <kind>"

and EOF ends it with "done". Inside each critical section the driver appends
"<ns> <id> start <kind>" and "<ns> <id> end <kind>" to the shared log, ns
from time.monotonic_ns() (CLOCK_MONOTONIC, the clock every party reads), each
line one write(2) on an O_APPEND file. Any error exits with status 1 and a
message on stderr.
"""

import os
import sys
import time

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout

WAIT_S = 60.0  # bounds every wait that has no timeout of its own
PATTERNS = {"lock": ["-lock-"], "lock-default": []}


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def fail(msg):
    sys.stderr.write("driver: %s\n" % msg)
    sys.exit(1)


class Driver:
    def __init__(self, args):
        self.args = args
        self.log = os.open(args["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def record(self, what, kind):
        line = "%d %s %s %s\n" % (time.monotonic_ns(), self.args["id"], what, kind)
        os.write(self.log, line.encode())  # one write(2)

    def lock(self, zk, kind):
        return zk.Lock(self.args["path"], self.args["id"], extra_lock_patterns=PATTERNS[kind])

    def loop(self, zk, mode):
        lock = self.lock(zk, mode)
        hold = int(self.args.get("hold", "20")) / 1000
        for c in range(1, int(self.args.get("cycles", "1")) + 1):
            try:
                lock.acquire(timeout=WAIT_S)
            except LockTimeout:
                fail("cycle %d: not acquired within %ss" % (c, WAIT_S))
            self.record("start", mode)
            say("held %d" % c)
            time.sleep(hold)
            self.record("end", mode)
            lock.release()
            say("released %d" % c)

    def interactive(self, zk):
        locks = {k: self.lock(zk, k) for k in PATTERNS}
        for line in sys.stdin:
            f = line.split()
            if len(f) < 2 or f[1] not in locks or f[0] not in ("acquire", "release"):
                fail("bad command %r" % line)
            lock = locks[f[1]]
            if f[0] == "acquire":
                try:
                    lock.acquire(timeout=int(f[2]) / 1000)
                except LockTimeout:
                    say("busy " + f[1])
                    continue
                self.record("start", f[1])
                say("held " + f[1])
            else:
                self.record("end", f[1])
                lock.release()
                say("released " + f[1])

    def run(self):
        mode = self.args["mode"]
        if mode not in PATTERNS and mode != "interactive":
            fail("unknown mode %s" % mode)
        # The server caps the session timeout at its maxSessionTimeout.
        zk = KazooClient(hosts=self.args["connect"], timeout=20.0)
        zk.start(timeout=30)
        try:
            say("ready")
            if sys.stdin.readline().strip() != "go":
                fail("expected go on stdin")
            if mode == "interactive":
                self.interactive(zk)
            else:
                self.loop(zk, mode)
            say("done")
        finally:
            zk.stop()
            zk.close()
            os.close(self.log)


def main(argv):
    args = {}
    for a in argv:
        if "=" not in a:
            fail("argument %s is not key=value" % a)
        k, v = a.split("=", 1)
        args[k] = v
    for k in ("connect", "path", "id", "log", "mode"):
        if k not in args:
            fail("missing %s=" % k)
    Driver(args).run()


if __name__ == "__main__":
    main(sys.argv[1:])
