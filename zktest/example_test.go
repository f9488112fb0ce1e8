package zktest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// inTest runs f once with a testing.TB, as a test function would get. In a
// test, pass your *testing.T (or *testing.B) straight to Start, StartEnsemble
// and NewProxy; an example has none, so testing.Benchmark lends one here.
// Its cleanups (the servers' shutdown) run when f returns.
func inTest(f func(t testing.TB)) {
	ran := false
	testing.Benchmark(func(b *testing.B) {
		if ran {
			return // Benchmark calls again with a larger b.N: once is enough
		}
		ran = true
		f(b)
	})
}

// connectTo opens a zklock session on addrs (any ZooKeeper client connects
// the same way) and waits until it has a ZooKeeper session.
func connectTo(addrs []string) (*zklock.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return zklock.NewSession(ctx, zklock.WithServers(addrs...), zklock.WithSessionTimeout(10*time.Second))
}

func ExampleStart() {
	inTest(func(t testing.TB) {
		c := zktest.Start(t) // a standalone ZooKeeper, stopped when the test ends
		s, err := connectTo(c.Servers())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.Client().Create(context.Background(), "/hello", []byte("world"), zk.ModePersistent)
		fmt.Println("create:", err, "servers:", c.Len())
	})
	// Output:
	// create: <nil> servers: 1
}

func ExampleStartEnsemble() {
	inTest(func(t testing.TB) {
		c := zktest.StartEnsemble(t, 3)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		leader, err := c.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Kill the leader: the other two elect a new one.
		if err := c.Server(leader).Kill(); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		again, err := c.Leader(ctx)
		fmt.Println("new leader elected:", err == nil && again != leader)
	})
	// Output:
	// new leader elected: true
}

func ExampleLaunch() {
	// Launch is Start for code outside tests: a command, a demo, an example.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := zktest.Launch(ctx, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	s, err := connectTo(c.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	_, ok, err := s.Client().Exists(ctx, "/zookeeper")
	fmt.Println("root exists:", ok, err)
	// Output:
	// root exists: true <nil>
}

func ExampleCluster() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := zktest.Launch(ctx, 1, zktest.WithTickTime(100*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println("tick:", c.TickTime(), "session timeouts:", c.MinSessionTimeout(), "to", c.MaxSessionTimeout())
	m, err := c.Mntr(ctx, 0)
	fmt.Println("mode:", m["zk_server_state"], err)
	// Output:
	// tick: 100ms session timeouts: 200ms to 2s
	// mode: standalone <nil>
}

func ExampleOption() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Options shape the servers: here short session timeouts, for tests
	// that wait for a session to expire.
	c, err := zktest.Launch(ctx, 1, zktest.WithSessionTimeouts(400*time.Millisecond, 4*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println(c.MinSessionTimeout(), c.MaxSessionTimeout())
	// Output:
	// 400ms 4s
}

func ExampleServer() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := zktest.Launch(ctx, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	s := c.Server(0)
	fmt.Println("running:", s.Running())
	_ = s.Pause() // SIGSTOP: the server stops answering, its sessions stay
	fmt.Println("paused:", s.Paused())
	_ = s.Resume()
	_ = s.Stop() // data stays: Start brings the same server back
	fmt.Println("running after Stop:", s.Running())
	_ = s.Start()
	fmt.Println("running after Start:", s.Running())
	// Output:
	// running: true
	// paused: true
	// running after Stop: false
	// running after Start: true
}

func ExampleProxy_Blackhole() {
	inTest(func(t testing.TB) {
		c := zktest.Start(t)
		p := zktest.NewProxy(t, c.Servers()) // the client connects through p
		s, err := connectTo(p.Addrs())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		p.Blackhole() // bytes stop flowing both ways; connections stay open
		done := make(chan error, 1)
		go func() { _, _, err := s.Client().Get(context.Background(), "/zookeeper"); done <- err }()
		select {
		case <-done:
			fmt.Println("answered through a black hole")
		case <-time.After(200 * time.Millisecond):
			fmt.Println("no answer while blackholed")
		}
		p.Heal()
		select {
		case <-done: // the reply, or an error if the client gave up and reconnected
			fmt.Println("the call returned after Heal")
		case <-time.After(30 * time.Second):
			fmt.Println("still no answer 30s after Heal")
		}
	})
	// Output:
	// no answer while blackholed
	// the call returned after Heal
}

func ExampleExpireSession() {
	inTest(func(t testing.TB) {
		c := zktest.Start(t)
		p := zktest.NewProxy(t, c.Servers())
		s, err := connectTo(p.Addrs())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sid := s.SessionID()
		// Cut the client off until the server has expired its session.
		if err := zktest.ExpireSession(ctx, c, p, sid); err != nil {
			t.Fatal(err)
		}
		alive, err := c.SessionAlive(ctx, sid)
		fmt.Println("session alive:", alive, err)
	})
	// Output:
	// session alive: false <nil>
}

func ExampleWithPeerNetwork() {
	inTest(func(t testing.TB) {
		// Quorum and election traffic between the servers goes through
		// proxies zktest owns, so the test can cut the servers apart.
		c := zktest.StartEnsemble(t, 3, zktest.WithPeerNetwork())
		ctx := context.Background()
		old, err := c.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Isolate(old); err != nil { // the leader hears nobody
			t.Fatal(err)
		}
		if err := c.WaitReady(ctx); err != nil { // a leader on the majority side
			t.Fatal(err)
		}
		leader, err := c.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("new leader on the majority side:", leader != old)
		if err := c.HealNetwork(); err != nil {
			t.Fatal(err)
		}
		fmt.Println("ready after the heal:", c.WaitReady(ctx) == nil)
	})
	// Output:
	// new leader on the majority side: true
	// ready after the heal: true
}

func ExampleWithKeepOnFailure() {
	dir, err := os.MkdirTemp("", "zktest-kept")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	inTest(func(t testing.TB) {
		// A test that fails leaves its servers' logs and data in dir.
		t.(*testing.B).Run("fails", func(b *testing.B) {
			zktest.StartEnsemble(b, 3, zktest.WithKeepOnFailure(dir))
			b.Fail()
		})
	})
	for _, name := range []string{"server1/server.log", "server1/data/myid", "server3/zoo.cfg"} {
		_, err := os.Stat(filepath.Join(dir, name))
		fmt.Println(name, "kept:", err == nil)
	}
	// Output:
	// server1/server.log kept: true
	// server1/data/myid kept: true
	// server3/zoo.cfg kept: true
}
