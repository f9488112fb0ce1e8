// Driver runs Apache Curator recipes for zklock's interop tests
// (interop/interop_test.go compiles it with javac against Debian's
// libcurator-recipes-java and runs it next to zklock clients).
//
// Usage: java Driver key=value...
//
//	connect=127.0.0.1:port  path=/lock/path  id=party  log=/shared/log
//	mode=mutex|read|write|sem|leader  a loop over one recipe: InterProcessMutex,
//	     the two halves of InterProcessReadWriteLock, InterProcessSemaphoreV2
//	     or LeaderSelector
//	mode=interactive  take commands on stdin (below)
//	cycles=N    acquisitions the loop makes (default 1)
//	hold=MS     how long the loop holds each one (default 20)
//	limit=K     the semaphore's maxLeases
//
// Protocol: stdout gets "ready" once connected, then the driver waits for a
// line "go" on stdin. A loop then says "held <cycle>" after each
// acquisition (and, except for leader, where the selector releases after
// takeLeadership returns, "released <cycle>" after each release) and "done"
// at the end. In interactive mode each stdin line is a command, answered by
// one line:
//
//	acquire <kind> <ms>  kind is mutex, read or write (one InterProcessMutex
//	                     and one InterProcessReadWriteLock on path), rmutex
//	                     (an InterProcessMutex made revocable: a revocation
//	                     request prints "revoke-requested rmutex"), or sem
//	                     (one more lease of an InterProcessSemaphoreV2 on
//	                     path, given limit=); answers
//	                     "held <kind>", or "busy <kind>" if not acquired
//	                     within ms
//	release <kind>       answers "released <kind>" (sem: the latest lease)
//	revoke <node>        Curator's Revoker.attemptRevoke on the node's full
//	                     path (a revocation request: a data write on a
//	                     holder's or waiter's node); answers "revoked"
//
// and EOF ends it with "done". Inside each critical section the driver
// appends "<ns> <id> start <kind>" and "<ns> <id> end <kind>" (kind is the
// mode for a loop) to the shared log, ns from System.nanoTime(), which is
// CLOCK_MONOTONIC on Linux: the clock every party of a test reads. Each line
// is one write(2) on an O_APPEND file, so lines of different processes never
// interleave. Any error exits with status 1 and a message on stderr.
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class Driver {
    private static final long WAIT_MS = 60_000; // bounds every untimed wait

    private final Map<String, String> args;
    private final String id;
    private final String mode;
    private final int cycles;
    private final long hold;
    private final FileOutputStream log;
    private final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

    private Driver(Map<String, String> args) throws Exception {
        this.args = args;
        this.id = need("id");
        this.mode = need("mode");
        this.cycles = Integer.parseInt(args.getOrDefault("cycles", "1"));
        this.hold = Long.parseLong(args.getOrDefault("hold", "20"));
        this.log = new FileOutputStream(need("log"), true);
    }

    public static void main(String[] argv) {
        Map<String, String> args = new HashMap<>();
        for (String a : argv) {
            int i = a.indexOf('=');
            if (i < 0) {
                fail("argument " + a + " is not key=value");
            }
            args.put(a.substring(0, i), a.substring(i + 1));
        }
        try {
            new Driver(args).run();
        } catch (Throwable e) {
            e.printStackTrace();
            fail(e.toString());
        }
        System.exit(0); // Curator's executor threads must not keep the JVM alive
    }

    private static void fail(String msg) {
        System.err.println("driver: " + msg);
        System.exit(1);
    }

    private String need(String key) {
        String v = args.get(key);
        if (v == null) {
            fail("missing " + key + "=");
        }
        return v;
    }

    private void run() throws Exception {
        // The server caps the session timeout at its maxSessionTimeout.
        CuratorFramework client = CuratorFrameworkFactory.newClient(need("connect"), 20_000, 20_000,
                new ExponentialBackoffRetry(100, 5));
        client.start();
        try {
            if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
                fail("not connected within 30s");
            }
            say("ready");
            String go = in.readLine();
            if (!"go".equals(go)) {
                fail("expected go on stdin, got " + go);
            }
            if (mode.equals("leader")) {
                lead(client);
            } else if (mode.equals("interactive")) {
                interactive(client);
            } else {
                lockCycles(client);
            }
            say("done");
        } finally {
            client.close();
        }
    }

    private void lockCycles(CuratorFramework client) throws Exception {
        String path = need("path");
        InterProcessLock lock = null;
        InterProcessSemaphoreV2 sem = null;
        switch (mode) {
            case "mutex" -> lock = new InterProcessMutex(client, path);
            case "read" -> lock = new InterProcessReadWriteLock(client, path).readLock();
            case "write" -> lock = new InterProcessReadWriteLock(client, path).writeLock();
            case "sem" -> sem = new InterProcessSemaphoreV2(client, path, Integer.parseInt(need("limit")));
            default -> fail("unknown mode " + mode);
        }
        for (int c = 1; c <= cycles; c++) {
            Lease lease = null;
            boolean got;
            if (sem != null) {
                lease = sem.acquire(WAIT_MS, TimeUnit.MILLISECONDS);
                got = lease != null;
            } else {
                got = lock.acquire(WAIT_MS, TimeUnit.MILLISECONDS);
            }
            if (!got) {
                fail("cycle " + c + ": not acquired within " + WAIT_MS + "ms");
            }
            critical(c);
            if (sem != null) {
                lease.close();
            } else {
                lock.release();
            }
            say("released " + c);
        }
    }

    private void interactive(CuratorFramework client) throws Exception {
        String path = need("path");
        InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, path);
        InterProcessMutex revocable = new InterProcessMutex(client, path);
        revocable.makeRevocable(lock -> say("revoke-requested rmutex"));
        Map<String, InterProcessLock> locks = new HashMap<>(Map.of(
                "mutex", new InterProcessMutex(client, path), "read", rw.readLock(), "write", rw.writeLock(),
                "rmutex", revocable));
        if (args.containsKey("limit")) {
            locks.put("sem", leases(new InterProcessSemaphoreV2(client, path, Integer.parseInt(need("limit")))));
        }
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split(" ");
            if (f.length == 2 && f[0].equals("revoke")) {
                Revoker.attemptRevoke(client, f[1]);
                say("revoked");
                continue;
            }
            InterProcessLock lock = f.length >= 2 ? locks.get(f[1]) : null;
            if (lock == null) {
                fail("bad command " + line);
            }
            switch (f[0]) {
                case "acquire" -> {
                    if (f.length != 3) {
                        fail("bad command " + line);
                    }
                    if (lock.acquire(Long.parseLong(f[2]), TimeUnit.MILLISECONDS)) {
                        record("start", f[1]);
                        say("held " + f[1]);
                    } else {
                        say("busy " + f[1]);
                    }
                }
                case "release" -> {
                    record("end", f[1]);
                    lock.release();
                    say("released " + f[1]);
                }
                default -> fail("bad command " + line);
            }
        }
    }

    // leases adapts a semaphore to the interactive commands: acquire takes
    // one more lease, release returns the latest.
    private static InterProcessLock leases(InterProcessSemaphoreV2 sem) {
        Deque<Lease> held = new ArrayDeque<>();
        return new InterProcessLock() {
            @Override
            public void acquire() throws Exception {
                held.push(sem.acquire());
            }

            @Override
            public boolean acquire(long time, TimeUnit unit) throws Exception {
                Lease l = sem.acquire(time, unit);
                if (l != null) {
                    held.push(l);
                }
                return l != null;
            }

            @Override
            public void release() throws Exception {
                held.pop().close();
            }

            @Override
            public boolean isAcquiredInThisProcess() {
                return !held.isEmpty();
            }
        };
    }

    // lead campaigns with a LeaderSelector, requeued by hand after each term
    // so that it leads exactly cycles times.
    private void lead(CuratorFramework client) throws Exception {
        Semaphore terms = new Semaphore(0);
        int[] n = {0};
        LeaderSelector sel = new LeaderSelector(client, need("path"), new LeaderSelectorListenerAdapter() {
            @Override
            public void takeLeadership(CuratorFramework c) throws Exception {
                critical(++n[0]);
                terms.release();
            }
        });
        sel.setId(id);
        sel.start();
        try {
            for (int c = 1; c <= cycles; c++) {
                if (!terms.tryAcquire(WAIT_MS, TimeUnit.MILLISECONDS)) {
                    fail("term " + c + " did not come within " + WAIT_MS + "ms");
                }
                if (c < cycles) {
                    requeue(sel);
                }
            }
        } finally {
            sel.close();
        }
    }

    // requeue retries while the selector still finishes the previous term
    // (requeue returns false until it has released its mutex).
    private static void requeue(LeaderSelector sel) throws InterruptedException {
        for (int i = 0; i < 6000; i++) {
            if (sel.requeue()) {
                return;
            }
            Thread.sleep(10);
        }
        fail("the selector could not be requeued within 60s");
    }

    private void critical(int c) throws Exception {
        record("start", mode);
        say("held " + c);
        Thread.sleep(hold);
        record("end", mode);
    }

    private void record(String what, String kind) throws Exception {
        String line = System.nanoTime() + " " + id + " " + what + " " + kind + "\n";
        log.write(line.getBytes(StandardCharsets.UTF_8)); // one write(2)
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
