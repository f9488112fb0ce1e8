// CuratorWorker is a chaos worker process that uses Apache Curator's
// recipes instead of zklock's: InterProcessMutex on the mutex path,
// InterProcessReadWriteLock on the rwmutex path (the write lock one time in
// three) and InterProcessSemaphoreV2 on the semaphore path, one thread
// each, writing through the same counters as the zklock workers. Package
// chaos compiles it (javac, against Debian's libcurator-recipes-java) and
// starts it like a Go worker, with the same environment (see worker.go):
// ZKLOCK_CHAOS_PROC, _ADDRS, _LOG, _ROOT, _SEED, _LIMIT; the session
// timeout comes as ZKLOCK_CHAOS_SESSION_MS.
//
// It logs the events of chaos.Event, one JSON object per line, each with
// one write(2) on an O_APPEND file, times from System.nanoTime() (which is
// CLOCK_MONOTONIC on Linux, the clock of chaos.Now), plus "conn" events
// with Curator's connection states, and at each acquire the full path of
// its hold's node ("node": the lock node, or the lease node), whose deletion
// the coordinator records: the ground truth of the checker's excuses for
// Curator. It does what a plain Curator user does:
// it holds until it releases, whatever the connection state says (Curator's
// locks do not tell their holder of a lost session), and its writes carry
// no fencing token (Curator's locks have none): the checker reports what
// follows from that apart, as Curator's. Writes go through the raw
// ZooKeeper handle so that a multi is sent once, never retried.
//
// It runs until its stdin is closed, then finishes its rounds, releases and
// exits 0. A log line it cannot write ends it at once with status 3: the
// checker must not judge a history with holes in it.
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;

public final class CuratorWorker {
    private static final long ACQUIRE_MS = 30_000;
    private static final int MAX_ROUNDS = 1_000_000;

    private final String proc = env("ZKLOCK_CHAOS_PROC");
    private final String root = env("ZKLOCK_CHAOS_ROOT");
    private final int limit = Integer.parseInt(env("ZKLOCK_CHAOS_LIMIT"));
    private final long seed = Long.parseLong(env("ZKLOCK_CHAOS_SEED"));
    private final FileOutputStream log;
    private final AtomicLong wid = new AtomicLong();
    private volatile boolean stopping;
    private CuratorFramework client;

    private CuratorWorker() throws IOException {
        log = new FileOutputStream(env("ZKLOCK_CHAOS_LOG"), true);
    }

    public static void main(String[] argv) {
        try {
            new CuratorWorker().run();
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0); // Curator's executor threads must not keep the JVM alive
    }

    private static String env(String k) {
        String v = System.getenv(k);
        if (v == null) {
            System.err.println("curator worker: " + k + " is not set");
            System.exit(1);
        }
        return v;
    }

    private void run() throws Exception {
        int session = Integer.parseInt(env("ZKLOCK_CHAOS_SESSION_MS"));
        String pid = Long.toString(ProcessHandle.current().pid());
        client = CuratorFrameworkFactory.builder().connectString(env("ZKLOCK_CHAOS_ADDRS"))
                .sessionTimeoutMs(session).connectionTimeoutMs(session)
                .retryPolicy(new ExponentialBackoffRetry(100, 3, 1000))
                .defaultData(("curator:" + pid).getBytes(StandardCharsets.UTF_8)).build();
        client.getConnectionStateListenable().addListener((c, state) -> event("conn", "", "", 0, 0, 0, state.toString(), ""));
        client.start();
        List<Thread> threads = new ArrayList<>();
        String[] prims = {"mutex", "rwmutex", "semaphore"};
        for (int i = 0; i < prims.length; i++) {
            String prim = prims[i];
            Random rnd = new Random(seed * 31 + i);
            Thread t = new Thread(() -> loop(prim, rnd), prim);
            t.start();
            threads.add(t);
        }
        // The coordinator closes stdin to stop us.
        while (System.in.read() >= 0) {
            // discard
        }
        stopping = true;
        for (Thread t : threads) {
            t.join(20_000);
        }
        client.close();
    }

    private void loop(String prim, Random rnd) {
        String path = root + "/locks/" + prim;
        InterProcessMutex mutex = prim.equals("mutex") ? new InterProcessMutex(client, path) : null;
        InterProcessReadWriteLock rw = prim.equals("rwmutex") ? new InterProcessReadWriteLock(client, path) : null;
        InterProcessSemaphoreV2 sem = prim.equals("semaphore") ? new InterProcessSemaphoreV2(client, path, limit) : null;
        for (int i = 0; i < MAX_ROUNDS && !stopping; i++) {
            String mode = "w";
            InterProcessLock lock = mutex;
            if (rw != null) {
                boolean write = rnd.nextInt(3) == 0;
                lock = write ? rw.writeLock() : rw.readLock();
                mode = write ? "w" : "r";
            } else if (sem != null) {
                mode = "l";
            }
            event("wait", prim, "", 0, 0, 0, "", "");
            Lease lease = null;
            boolean got;
            try {
                if (sem != null) {
                    lease = sem.acquire(ACQUIRE_MS, TimeUnit.MILLISECONDS);
                    got = lease != null;
                } else {
                    got = lock.acquire(ACQUIRE_MS, TimeUnit.MILLISECONDS);
                }
            } catch (Exception e) {
                event("waitfail", prim, "", 0, 0, 0, "", e.toString());
                sleep(100);
                continue;
            }
            if (!got) {
                event("waitfail", prim, "", 0, 0, 0, "", "not acquired within " + ACQUIRE_MS + "ms");
                continue;
            }
            acquireEvent(prim, mode, lease != null ? path + "/leases/" + lease.getNodeName() : lockPath(lock));
            int n = 1 + rnd.nextInt(3);
            for (int k = 0; k < n && !stopping; k++) {
                sleep(rnd.nextInt(50));
                if (mode.equals("r")) {
                    try {
                        client.getZookeeperClient().getZooKeeper().getData(root + "/data/" + prim + "/counter", false, null);
                    } catch (Exception e) {
                        // a reader only reads
                    }
                    continue;
                }
                increment(prim, mode);
            }
            event("release", prim, mode, 0, 0, 0, "released", "");
            try {
                if (lease != null) {
                    sem.returnLease(lease);
                } else {
                    lock.release();
                }
            } catch (Exception e) {
                // the session is gone: its nodes go with it
            }
            sleep(rnd.nextInt(40));
        }
    }

    // increment is chaos's workload.increment without a guard: read the
    // counter, write it plus one (the semaphore's with a version check)
    // with a receipt, in one multi sent once.
    private void increment(String prim, String mode) {
        long id = wid.incrementAndGet();
        String counter = root + "/data/" + prim + "/counter";
        long v;
        int version = -1;
        try {
            Stat st = new Stat();
            byte[] data = client.getZookeeperClient().getZooKeeper().getData(counter, false, st);
            v = Long.parseLong(new String(data, StandardCharsets.UTF_8)) + 1;
            if (mode.equals("l")) {
                version = st.getVersion();
            }
        } catch (Exception e) {
            event("write", prim, "", id, 0, 0, "skipped", e.toString());
            return;
        }
        String rc = "{\"proc\":\"" + proc + "\",\"w\":" + id + ",\"tok\":0,\"v\":" + v + "}";
        List<Op> ops = List.of(
                Op.setData(counter, Long.toString(v).getBytes(StandardCharsets.UTF_8), version),
                Op.create(root + "/data/" + prim + "/r/w-", rc.getBytes(StandardCharsets.UTF_8),
                        ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL));
        long t0 = System.nanoTime();
        String res = "ok";
        String err = "";
        try {
            client.getZookeeperClient().getZooKeeper().multi(ops);
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException | KeeperException.NodeExistsException e) {
            res = "rejected";
            err = e.toString();
        } catch (Exception e) {
            res = "unknown";
            err = e.toString();
        }
        long t1 = System.nanoTime();
        writeEvent(prim, id, v, t0, t1, res, err);
    }

    // lockPath returns the node of the calling thread's hold of lock
    // (InterProcessMutex.getLockPath, protected, hence reflection; the RW
    // lock's read and write locks are InterProcessMutexes too), or "" if it
    // cannot: the checker then has no ground truth and excuses nothing.
    private static String lockPath(InterProcessLock lock) {
        try {
            Method m = InterProcessMutex.class.getDeclaredMethod("getLockPath");
            m.setAccessible(true);
            Object p = m.invoke(lock);
            return p == null ? "" : p.toString();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "";
        }
    }

    private void acquireEvent(String prim, String mode, String node) {
        line("{\"ev\":\"acquire\",\"proc\":\"" + proc + "\",\"prim\":\"" + prim + "\",\"lib\":\"curator\",\"t\":" + System.nanoTime()
                + ",\"mode\":\"" + mode + "\",\"node\":\"" + node + "\"}");
    }

    private void writeEvent(String prim, long id, long v, long t0, long t1, String res, String err) {
        line("{\"ev\":\"write\",\"proc\":\"" + proc + "\",\"prim\":\"" + prim + "\",\"lib\":\"curator\",\"t\":" + t0
                + ",\"t1\":" + t1 + ",\"w\":" + id + ",\"v\":" + v + ",\"res\":\"" + res + "\"" + errField(err) + "}");
    }

    private void event(String ev, String prim, String mode, long id, long v, long t1, String res, String err) {
        StringBuilder b = new StringBuilder();
        b.append("{\"ev\":\"").append(ev).append("\",\"proc\":\"").append(proc).append("\",\"prim\":\"").append(prim)
                .append("\",\"lib\":\"curator\",\"t\":").append(System.nanoTime());
        if (!mode.isEmpty()) {
            b.append(",\"mode\":\"").append(mode).append('"');
        }
        if (id != 0) {
            b.append(",\"w\":").append(id);
        }
        if (!res.isEmpty()) {
            b.append(",\"res\":\"").append(res).append('"');
        }
        b.append(errField(err)).append('}');
        line(b.toString());
    }

    private static String errField(String err) {
        if (err.isEmpty()) {
            return "";
        }
        return ",\"err\":\"" + err.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
    }

    private synchronized void line(String s) {
        try {
            log.write((s + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            System.err.println("curator worker: log: " + e);
            Runtime.getRuntime().halt(3); // not exit: a shutdown hook may wait on this lock
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
