package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/go-zookeeper/zk"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/zklock/zklock"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// sessionTimeout is asked of every ZooKeeper and etcd client alike: long
// enough that pings (and lease keep-alives) barely count.
const sessionTimeout = time.Minute

// goDriver builds the workers of one Go implementation for a scenario;
// closing releases its connections.
type goDriver func(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error)

var goDrivers = map[string]goDriver{
	implRaw:     rawWorkers,
	implWrite:   writeWorkers,
	implZklock:  zklockWorkers,
	implCohort:  cohortWorkers,
	implQueue:   queueWorkers,
	implSeq:     seqWorkers,
	implGoZK:    gozkWorkers,
	implEtcd:    etcdWorkers,
	implRedsync: redsyncWorkers,
}

func lockPath(path string, sc scenario, i int) string {
	return fmt.Sprintf("%s/l%d", path, i%sc.locks())
}

func zklockWorkers(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error) {
	return zklockWith(ctx, e, sc, path)
}

// cohortWorkers are zklock's with WithCohort at its defaults.
func cohortWorkers(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error) {
	if sc.Kind != kindMutex {
		return nil, nil, errors.New("cohorting is a Mutex's")
	}
	return zklockWith(ctx, e, sc, path, zklock.WithCohort(0, 0))
}

// queueWorkers are zklock's semaphore in the one-queue layout.
func queueWorkers(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error) {
	if sc.Kind != kindSem {
		return nil, nil, errors.New("the queue layout is a Semaphore's")
	}
	return zklockWith(ctx, e, sc, path, zklock.WithPermitLayout())
}

// seqWorkers are zklock's Mutex in the sequence layout.
func seqWorkers(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error) {
	if sc.Kind != kindMutex || sc.Fresh > 0 {
		return nil, nil, errors.New("the sequence layout is a Mutex's, on a lock path kept")
	}
	return zklockWith(ctx, e, sc, path, zklock.WithSequenceLayout())
}

func zklockWith(ctx context.Context, e *servers, sc scenario, path string, opts ...zklock.Option) ([]worker, func(), error) {
	cs := &closers{}
	ss := make([]*zklock.Session, sc.sessions())
	err := parallel(len(ss), func(i int) error {
		s, err := zklock.NewSession(ctx, zklock.WithServers(e.zkAddr), zklock.WithSessionTimeout(sessionTimeout))
		if err == nil {
			cs.add(func() { s.Close() })
			ss[i] = s
		}
		return err
	})
	if err != nil {
		cs.close()
		return nil, nil, err
	}
	ws := make([]worker, sc.Clients)
	for i := range ws {
		s := ss[i%len(ss)]
		var err error
		switch {
		case sc.Kind == kindMutex && sc.Fresh > 0:
			ws[i].cycle = freshCycle(s, fmt.Sprintf("%s/c%d", path, i), sc.Fresh)
		case sc.Kind == kindMutex:
			var m *zklock.Mutex
			if m, err = zklock.NewMutex(s, lockPath(path, sc, i), opts...); err == nil {
				ws[i].cycle = lockCycle(m.Lock, m.Unlock)
			}
		case sc.Kind == kindRW:
			var m *zklock.RWMutex
			if m, err = zklock.NewRWMutex(s, path+"/rw"); err == nil {
				ws[i] = worker{cycle: lockCycle(m.RLock, m.RUnlock), write: lockCycle(m.Lock, m.Unlock)}
			}
		case sc.Kind == kindSem:
			var sem *zklock.Semaphore
			if sem, err = zklock.NewSemaphore(s, path+"/sem", sc.Limit, opts...); err == nil {
				ws[i].cycle = func(ctx context.Context, enter, exit func()) error {
					l, err := sem.Acquire(ctx, 1)
					if err != nil {
						return err
					}
					enter()
					exit()
					return l.Release(ctx)
				}
			}
		}
		if err != nil {
			cs.close()
			return nil, nil, err
		}
	}
	return ws, cs.close, nil
}

// freshCycle locks a new path each cycle, depth levels below base, none of
// them existing yet: what a lock per resource (/locks/order-1234) costs
// when its CONTAINER parents were reaped, or never made.
func freshCycle(s *zklock.Session, base string, depth int) cycler {
	n := 0
	return func(ctx context.Context, enter, exit func()) error {
		n++
		p := fmt.Sprintf("%s/r%d", base, n)
		for d := 1; d < depth; d++ {
			p += fmt.Sprintf("/d%d", d)
		}
		m, err := zklock.NewMutex(s, p)
		if err != nil {
			return err
		}
		return lockCycle(m.Lock, m.Unlock)(ctx, enter, exit)
	}
}

// writeWorkers do one write per cycle (a setData on one node): the least
// a handoff costs, one write committed and answered. Its rate is the
// reference the 16-client goal compares with.
func writeWorkers(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error) {
	conns, cs, err := gozkConns(ctx, e, sc.sessions())
	if err != nil {
		return nil, nil, err
	}
	ws := make([]worker, sc.Clients)
	for i := range ws {
		conn, node := conns[i%len(conns)], lockPath(path, sc, i)
		if err := mkdirs(conn, node); err != nil {
			cs.close()
			return nil, nil, err
		}
		ws[i].cycle = func(_ context.Context, enter, exit func()) error {
			if _, err := conn.Set(node, nil, -1); err != nil {
				return err
			}
			enter()
			exit()
			return nil
		}
	}
	return ws, cs.close, nil
}

func lockCycle(lock, unlock func(context.Context) error) cycler {
	return func(ctx context.Context, enter, exit func()) error {
		if err := lock(ctx); err != nil {
			return err
		}
		enter()
		exit()
		return unlock(ctx)
	}
}

// gozkConnect opens a go-zookeeper connection and waits for its session.
func gozkConnect(ctx context.Context, addr string) (*zk.Conn, error) {
	conn, events, err := zk.Connect([]string{addr}, sessionTimeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		return nil, err
	}
	go func() {
		for range events { // drained until Close, so no event blocks the client
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for conn.State() != zk.StateHasSession {
		select {
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("go-zookeeper: no session: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return conn, nil
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func gozkConns(ctx context.Context, e *servers, n int) ([]*zk.Conn, *closers, error) {
	cs := &closers{}
	conns := make([]*zk.Conn, n)
	err := parallel(n, func(i int) error {
		c, err := gozkConnect(ctx, e.zkAddr)
		if err == nil {
			cs.add(c.Close)
			conns[i] = c
		}
		return err
	})
	if err != nil {
		cs.close()
		return nil, nil, err
	}
	return conns, cs, nil
}

// gozkWorkers uses zk.Lock, which takes no context: a trial's end waits for
// every client's Lock to return, which it does once the queue drains.
func gozkWorkers(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error) {
	if sc.Kind != kindMutex {
		return nil, nil, errors.New("go-zookeeper has only a mutex")
	}
	conns, cs, err := gozkConns(ctx, e, sc.sessions())
	if err != nil {
		return nil, nil, err
	}
	ws := make([]worker, sc.Clients)
	for i := range ws {
		if sc.Fresh > 0 {
			ws[i].cycle = gozkFreshCycle(conns[i%len(conns)], fmt.Sprintf("%s/c%d", path, i), sc.Fresh)
			continue
		}
		l := zk.NewLock(conns[i%len(conns)], lockPath(path, sc, i), zk.WorldACL(zk.PermAll))
		ws[i].cycle = func(_ context.Context, enter, exit func()) error {
			if err := l.Lock(); err != nil {
				return err
			}
			enter()
			exit()
			return l.Unlock()
		}
	}
	return ws, cs.close, nil
}

// gozkFreshCycle is freshCycle with zk.Lock, which creates the missing
// parents itself when its create finds none.
func gozkFreshCycle(conn *zk.Conn, base string, depth int) cycler {
	n := 0
	return func(_ context.Context, enter, exit func()) error {
		n++
		p := fmt.Sprintf("%s/r%d", base, n)
		for d := 1; d < depth; d++ {
			p += fmt.Sprintf("/d%d", d)
		}
		l := zk.NewLock(conn, p, zk.WorldACL(zk.PermAll))
		if err := l.Lock(); err != nil {
			return err
		}
		enter()
		exit()
		return l.Unlock()
	}
}

// rawWorkers is the least any ZooKeeper lock must do per cycle: create an
// ephemeral-sequential node, list the children to see it is first, delete
// it; on a plain go-zookeeper connection.
func rawWorkers(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error) {
	conns, cs, err := gozkConns(ctx, e, sc.sessions())
	if err != nil {
		return nil, nil, err
	}
	acl := zk.WorldACL(zk.PermAll)
	ws := make([]worker, sc.Clients)
	for i := range ws {
		conn, dir := conns[i%len(conns)], lockPath(path, sc, i)
		if err := mkdirs(conn, dir); err != nil {
			cs.close()
			return nil, nil, err
		}
		ws[i].cycle = func(_ context.Context, enter, exit func()) error {
			p, err := conn.Create(dir+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
			if err != nil {
				return err
			}
			if _, _, err := conn.Children(dir); err != nil {
				return err
			}
			enter()
			exit()
			return conn.Delete(p, -1)
		}
	}
	return ws, cs.close, nil
}

func mkdirs(conn *zk.Conn, path string) error {
	p := ""
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		p += "/" + part
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}

// etcdWorkers gives every client its own lease (concurrency.Session): two
// Mutexes on one session share a key, so they would not exclude each other.
// Clients share the scenario's gRPC connections.
func etcdWorkers(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error) {
	if sc.Kind != kindMutex {
		return nil, nil, errors.New("etcd's concurrency package has only a mutex")
	}
	clients, leases := &closers{}, &closers{}
	closeAll := func() { leases.close(); clients.close() } // revoke leases while connected
	clis := make([]*clientv3.Client, sc.sessions())
	err := parallel(len(clis), func(i int) error {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.etcdAddr}, DialTimeout: 10 * time.Second, Logger: zap.NewNop(), Context: context.Background()})
		if err == nil {
			clients.add(func() { cli.Close() })
			clis[i] = cli
		}
		return err
	})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	ws := make([]worker, sc.Clients)
	err = parallel(len(ws), func(i int) error {
		sess, err := concurrency.NewSession(clis[i%len(clis)], concurrency.WithTTL(int(sessionTimeout/time.Second)), concurrency.WithContext(ctx))
		if err != nil {
			return err
		}
		leases.add(func() { sess.Close() })
		m := concurrency.NewMutex(sess, lockPath(path, sc, i))
		ws[i].cycle = lockCycle(m.Lock, m.Unlock)
		return nil
	})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return ws, closeAll, nil
}

// redsyncTries lets a redsync waiter retry (at its default random 50–250ms
// delay) for as long as a trial can last, instead of giving up after its
// default 32 tries; everything else is redsync's default.
const redsyncTries = 1 << 12

func redsyncWorkers(ctx context.Context, e *servers, sc scenario, path string) ([]worker, func(), error) {
	if sc.Kind != kindMutex {
		return nil, nil, errors.New("redsync has only a mutex")
	}
	cs := &closers{}
	rss := make([]*redsync.Redsync, sc.sessions())
	for i := range rss {
		c := goredislib.NewClient(&goredislib.Options{Addr: e.redis, PoolSize: 2})
		cs.add(func() { c.Close() })
		if err := c.Ping(ctx).Err(); err != nil {
			cs.close()
			return nil, nil, err
		}
		rss[i] = redsync.New(goredis.NewPool(c))
	}
	ws := make([]worker, sc.Clients)
	for i := range ws {
		m := rss[i%len(rss)].NewMutex(lockPath(path, sc, i), redsync.WithTries(redsyncTries))
		ws[i].cycle = func(ctx context.Context, enter, exit func()) error {
			if err := m.LockContext(ctx); err != nil {
				return err
			}
			enter()
			exit()
			ok, err := m.UnlockContext(ctx)
			if err == nil && !ok {
				err = errors.New("redsync: unlock found the lock gone")
			}
			return err
		}
	}
	return ws, cs.close, nil
}
