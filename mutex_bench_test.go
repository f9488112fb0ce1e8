package zklock_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// BenchmarkMutex compares, in one run, an uncontended Lock+Unlock with the
// raw minimum a ZooKeeper lock needs on the same kind of connection (create
// ephemeral-sequential, getChildren, delete), then contended acquisitions
// for 2, 16 and 64 clients (each with its own session) on one lock.
func BenchmarkMutex(b *testing.B) {
	c := benchServer(b)
	b.Run("raw-minimum", func(b *testing.B) {
		s := benchSessions(b, c, 1)[0]
		conn := s.Client()
		dir := "/bench/raw"
		_, _ = conn.Create(b.Context(), "/bench", nil, zk.ModePersistent)
		_, _ = conn.Create(b.Context(), dir, nil, zk.ModePersistent)
		measure(b, c, 1, func(ctx context.Context, _ int) error {
			p, err := conn.Create(ctx, dir+"/n-", nil, zk.ModeEphemeralSequential)
			if err != nil {
				return err
			}
			if _, _, err := conn.Children(ctx, dir); err != nil {
				return err
			}
			return conn.Delete(ctx, p, -1)
		})
	})
	b.Run("uncontended", func(b *testing.B) {
		s := benchSessions(b, c, 1)[0]
		m, err := zklock.NewMutex(s, "/bench/uncontended")
		if err != nil {
			b.Fatal(err)
		}
		measure(b, c, 1, func(ctx context.Context, _ int) error { return cycle(ctx, m) })
	})
	for _, n := range []int{2, 16, 64} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			ms := make([]*zklock.Mutex, n)
			for i, s := range benchSessions(b, c, n) {
				m, err := zklock.NewMutex(s, fmt.Sprintf("/bench/contended-%d", n))
				if err != nil {
					b.Fatal(err)
				}
				ms[i] = m
			}
			measure(b, c, n, func(ctx context.Context, i int) error { return cycle(ctx, ms[i]) })
		})
	}
}

func cycle(ctx context.Context, m *zklock.Mutex) error {
	if err := m.Lock(ctx); err != nil {
		return err
	}
	return m.Unlock(ctx)
}

// BenchmarkOneWrite is the physical limit of a handoff on this server: one
// client doing one write (a setData) per cycle.
func BenchmarkOneWrite(b *testing.B) {
	c := benchServer(b)
	s := benchSessions(b, c, 1)[0]
	conn := s.Client()
	_, _ = conn.Create(b.Context(), "/bench", nil, zk.ModePersistent)
	_, _ = conn.Create(b.Context(), "/bench/one-write", nil, zk.ModePersistent)
	measure(b, c, 1, func(ctx context.Context, _ int) error {
		_, err := conn.Set(ctx, "/bench/one-write", nil, -1)
		return err
	})
}

// BenchmarkFreshPath: one client's Lock+Unlock on a path whose parents do
// not exist (each cycle a new path, depth 1 and 3), against the same on
// an existing path: a fresh path costs one round trip more.
func BenchmarkFreshPath(b *testing.B) {
	c := benchServer(b)
	s := benchSessions(b, c, 1)[0]
	run := func(b *testing.B, path func(i int) string) {
		var n atomic.Int64
		measure(b, c, 1, func(ctx context.Context, _ int) error {
			m, err := zklock.NewMutex(s, path(int(n.Add(1))))
			if err != nil {
				return err
			}
			return cycle(ctx, m)
		})
	}
	b.Run("existing", func(b *testing.B) { run(b, func(int) string { return "/bench/existing/l" }) })
	b.Run("fresh-depth-1", func(b *testing.B) {
		run(b, func(i int) string { return fmt.Sprintf("/bench/f1-%s/%d", b.Name()[len(b.Name())-1:], i) })
	})
	b.Run("fresh-depth-3", func(b *testing.B) {
		run(b, func(i int) string { return fmt.Sprintf("/bench/f3/a%d/b/c", i) })
	})
}
