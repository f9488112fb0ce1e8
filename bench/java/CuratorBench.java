// CuratorBench drives Apache Curator's InterProcessMutex,
// InterProcessReadWriteLock and InterProcessSemaphoreV2 for zklock's
// benchmark runner (bench/external.go describes the line protocol). Each
// client is a thread; sessions are CuratorFramework instances, each with its
// own ZooKeeper connection; exclusion is checked across the threads.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CuratorBench {
    static final long OP_TIMEOUT_MS = 60_000;

    interface Cycle { void run(Runnable enter, Runnable exit) throws Exception; }

    static final class Client { Cycle read, write; }

    static String kind;
    static int clients, sessions, locks, limit, readPct;
    static List<CuratorFramework> frameworks = new ArrayList<>();
    static List<Client> workers = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true);
        out.println("ready Curator " + version() + " on Java " + System.getProperty("java.version"));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split("\\s+");
            Map<String, String> kv = new HashMap<>();
            for (int i = 1; i < f.length; i++) {
                int eq = f[i].indexOf('=');
                if (eq > 0) kv.put(f[i].substring(0, eq), f[i].substring(eq + 1));
            }
            try {
                switch (f[0]) {
                    case "setup": setup(kv); out.println("ok"); break;
                    case "run": out.println("ok " + run(kv)); break;
                    case "teardown": teardown(); out.println("ok"); break;
                    default: out.println("err unknown request " + f[0]);
                }
            } catch (Exception e) {
                out.println("err " + String.valueOf(e).replace('\n', ' '));
            }
        }
        teardown();
    }

    static String version() {
        String v = InterProcessMutex.class.getPackage().getImplementationVersion();
        if (v != null) return v;
        // Debian ships curator-recipes-<version>.jar beside curator-recipes.jar.
        String[] names = new java.io.File("/usr/share/java").list();
        for (String f : names == null ? new String[0] : names) {
            if (f.startsWith("curator-recipes-") && f.endsWith(".jar")) {
                return f.substring("curator-recipes-".length(), f.length() - ".jar".length());
            }
        }
        return "(unknown version)";
    }

    static void setup(Map<String, String> kv) throws Exception {
        teardown();
        kind = kv.get("kind");
        clients = Integer.parseInt(kv.get("clients"));
        sessions = Integer.parseInt(kv.get("sessions"));
        locks = Integer.parseInt(kv.get("locks"));
        limit = Integer.parseInt(kv.get("limit"));
        readPct = Integer.parseInt(kv.get("readpct"));
        String path = kv.get("path");
        for (int i = 0; i < sessions; i++) {
            CuratorFramework c = CuratorFrameworkFactory.newClient(kv.get("connect"), 60_000, 15_000,
                    new ExponentialBackoffRetry(100, 3));
            c.start();
            frameworks.add(c);
        }
        for (CuratorFramework c : frameworks) {
            if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("no connection");
        }
        for (int i = 0; i < clients; i++) {
            CuratorFramework c = frameworks.get(i % sessions);
            Client w = new Client();
            switch (kind) {
                case "mutex": {
                    InterProcessMutex m = new InterProcessMutex(c, path + "/l" + (i % locks));
                    w.read = (enter, exit) -> hold(m, enter, exit);
                    break;
                }
                case "rw": {
                    InterProcessReadWriteLock rw = new InterProcessReadWriteLock(c, path + "/rw");
                    w.read = (enter, exit) -> hold(rw.readLock(), enter, exit);
                    w.write = (enter, exit) -> hold(rw.writeLock(), enter, exit);
                    break;
                }
                case "sem": {
                    InterProcessSemaphoreV2 s = new InterProcessSemaphoreV2(c, path + "/sem", limit);
                    w.read = (enter, exit) -> {
                        Lease l = s.acquire(OP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                        if (l == null) throw new IllegalStateException("semaphore acquire timed out");
                        enter.run();
                        exit.run();
                        s.returnLease(l);
                    };
                    break;
                }
                default: throw new IllegalArgumentException("kind " + kind);
            }
            workers.add(w);
        }
    }

    static void hold(InterProcessMutex m, Runnable enter, Runnable exit) throws Exception {
        if (!m.acquire(OP_TIMEOUT_MS, TimeUnit.MILLISECONDS)) throw new IllegalStateException("acquire timed out");
        enter.run();
        exit.run();
        m.release();
    }

    // Closing waits for the server's reply: in parallel, hundreds take a moment.
    static void teardown() throws InterruptedException {
        List<Thread> closing = new ArrayList<>();
        for (CuratorFramework c : frameworks) {
            Thread t = new Thread(c::close);
            t.start();
            closing.add(t);
        }
        for (Thread t : closing) t.join(30_000);
        frameworks.clear();
        workers.clear();
    }

    static long now() { return System.nanoTime(); }

    static String run(Map<String, String> kv) throws Exception {
        long warm = Long.parseLong(kv.get("warm_ms")), dur = Long.parseLong(kv.get("dur_ms"));
        int maxOps = Integer.parseInt(kv.get("max_ops")), minSeq = Integer.parseInt(kv.get("min_seq"));
        boolean handoff = kv.get("handoff").equals("1");
        long seed = Long.parseLong(kv.get("seed"));
        long[] acq = new long[maxOps], free = new long[maxOps], rel = new long[maxOps], wait = new long[maxOps];
        AtomicLong seq = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger errors = new AtomicInteger(), violations = new AtomicInteger(), readers = new AtomicInteger();
        AtomicInteger[] hold = new AtomicInteger[locks];
        for (int i = 0; i < locks; i++) hold[i] = new AtomicInteger();
        AtomicReference<String> firstErr = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            final int id = i, lock = i % locks;
            final Client w = workers.get(i);
            Thread t = new Thread(() -> {
                Random rng = new Random(seed * 1_000_003L + id);
                for (int n = 0; n < maxOps && !stop.get(); n++) {
                    final boolean write = w.write != null && rng.nextInt(100) >= readPct;
                    final long[] k = {-1};
                    final long began = now();
                    Runnable enter = () -> {
                        k[0] = seq.getAndIncrement();
                        if (k[0] < maxOps) {
                            acq[(int) k[0]] = now();
                            wait[(int) k[0]] = acq[(int) k[0]] - began;
                        }
                        if (kind.equals("sem")) {
                            if (hold[0].incrementAndGet() > limit) violations.incrementAndGet();
                        } else if (kind.equals("rw") && !write) {
                            readers.incrementAndGet();
                            if (hold[0].get() != 0) violations.incrementAndGet();
                        } else if (hold[lock].incrementAndGet() != 1 || readers.get() != 0) {
                            violations.incrementAndGet();
                        }
                    };
                    Runnable exit = () -> {
                        // The holder lets go: the handoff is timed from here (see tally in drive.go).
                        if (k[0] >= 0 && k[0] < maxOps) free[(int) k[0]] = now();
                        if (kind.equals("rw") && !write) readers.decrementAndGet();
                        else hold[lock].decrementAndGet();
                    };
                    try {
                        (write ? w.write : w.read).run(enter, exit);
                    } catch (Exception e) {
                        errors.incrementAndGet();
                        firstErr.compareAndSet(null, String.valueOf(e));
                        return;
                    }
                    if (k[0] >= maxOps) return;
                    if (k[0] >= 0) rel[(int) k[0]] = now();
                }
            });
            t.start();
            threads.add(t);
        }
        Thread.sleep(warm);
        long deadline = now() + 60_000_000_000L;
        while (seq.get() < minSeq && now() < deadline && errors.get() == 0) Thread.sleep(5);
        long t0 = now();
        Thread.sleep(dur);
        long t1 = now();
        stop.set(true);
        for (Thread t : threads) t.join(OP_TIMEOUT_MS + 10_000);
        int n = (int) Math.min(seq.get(), maxOps), ops = 0;
        List<Double> lat = new ArrayList<>(), waits = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            if (rel[k] == 0 || rel[k] < t0 || rel[k] > t1) continue;
            ops++;
            waits.add(wait[k] / 1e3);
            if (handoff && k + 1 < n && acq[k + 1] != 0 && free[k] != 0) lat.add((acq[k + 1] - free[k]) / 1e3);
        }
        String h = "nan";
        if (!lat.isEmpty()) {
            Double[] a = lat.toArray(new Double[0]);
            Arrays.sort(a);
            int m = a.length;
            h = String.valueOf(m % 2 == 1 ? a[m / 2] : (a[m / 2 - 1] + a[m / 2]) / 2);
        }
        String fe = firstErr.get() == null ? "" : firstErr.get().replaceAll("\\s+", "_");
        return "ops=" + ops + " total=" + n + " rate=" + (ops / ((t1 - t0) / 1e9)) + " handoff_us=" + h
                + " p50_us=" + quantile(waits, 0.5) + " p99_us=" + quantile(waits, 0.99) + " max_us=" + quantile(waits, 1)
                + " violations=" + violations.get() + " errors=" + errors.get() + " first_error=" + fe;
    }

    // quantile is the nearest-rank q-quantile of xs, "nan" when empty (as
    // the Go runner's report.Quantile).
    static String quantile(List<Double> xs, double q) {
        if (xs.isEmpty()) return "nan";
        Double[] a = xs.toArray(new Double[0]);
        Arrays.sort(a);
        int i = (int) Math.ceil(q * a.length) - 1;
        return String.valueOf(a[Math.min(Math.max(i, 0), a.length - 1)]);
    }
}
