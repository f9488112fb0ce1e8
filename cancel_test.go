package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// ephemeralsUnder lists every ephemeral node below root (lock, lease and
// candidate nodes; not the CONTAINER parents a waiter may have created).
func ephemeralsUnder(t *testing.T, conn *zk.Client, root string) []string {
	t.Helper()
	kids, _, err := conn.Children(t.Context(), root)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, k := range kids {
		p := root + "/" + k
		st, ok, err := conn.Exists(t.Context(), p)
		require.NoError(t, err)
		if ok && st.EphemeralOwner != 0 {
			out = append(out, p)
		}
		out = append(out, ephemeralsUnder(t, conn, p)...)
	}
	slices.Sort(out)
	return out
}

// ephemeralsOf lists the ephemeral nodes below root that session sid owns.
func ephemeralsOf(t *testing.T, conn *zk.Client, root string, sid int64) []string {
	t.Helper()
	var out []string
	for _, p := range ephemeralsUnder(t, conn, root) {
		st, ok, err := conn.Exists(t.Context(), p)
		require.NoError(t, err)
		if ok && st.EphemeralOwner == sid {
			out = append(out, p)
		}
	}
	return out
}

// awaitEphemeralOf waits, through conn (a session other than sid's), until
// session sid owns a node below root, and returns what it owns then. A
// cancellation test cancels only after this, so that its "nothing left"
// checks a node that was there to leave; it fails after 10s.
func awaitEphemeralOf(t *testing.T, conn *zk.Client, root string, sid int64) []string {
	t.Helper()
	var nodes []string
	eventually(t, 10*time.Second, "the waiter's node on the server", func() bool {
		nodes = ephemeralsOf(t, conn, root, sid)
		return len(nodes) > 0
	})
	return nodes
}

// blocked is one primitive set up so that acquisitions by another session
// queue: hold takes it in the holder's session, try attempts it in the
// waiter's, and rounds says how many cleanup graces a cancelled attempt
// may wait (see each primitive's doc).
type blocked struct {
	hold   func(ctx context.Context, s *zklock.Session, path string) error
	try    func(ctx context.Context, s *zklock.Session, path string, i int) error
	graces int
}

var blockedPrimitives = map[string]blocked{
	"Mutex": {
		hold: lockMutex,
		try: func(ctx context.Context, s *zklock.Session, path string, _ int) error {
			return lockMutex(ctx, s, path)
		},
		graces: 1,
	},
	"RWMutex": {
		hold: func(ctx context.Context, s *zklock.Session, path string) error {
			m, err := zklock.NewRWMutex(s, path)
			if err != nil {
				return err
			}
			return m.Lock(ctx)
		},
		try: func(ctx context.Context, s *zklock.Session, path string, i int) error {
			m, err := zklock.NewRWMutex(s, path)
			if err != nil {
				return err
			}
			if i%2 == 0 {
				return m.RLock(ctx)
			}
			return m.Lock(ctx)
		},
		graces: 1,
	},
	"Semaphore": {
		hold: func(ctx context.Context, s *zklock.Session, path string) error {
			sem, err := zklock.NewSemaphore(s, path, 2)
			if err != nil {
				return err
			}
			_, err = sem.Acquire(ctx, 2)
			return err
		},
		try: func(ctx context.Context, s *zklock.Session, path string, i int) error {
			sem, err := zklock.NewSemaphore(s, path, 2)
			if err != nil {
				return err
			}
			_, err = sem.Acquire(ctx, 1+i%2)
			return err
		},
		graces: 2,
	},
	"Election": {
		hold: campaign,
		try: func(ctx context.Context, s *zklock.Session, path string, _ int) error {
			return campaign(ctx, s, path)
		},
		graces: 1,
	},
}

func lockMutex(ctx context.Context, s *zklock.Session, path string) error {
	m, err := zklock.NewMutex(s, path)
	if err != nil {
		return err
	}
	return m.Lock(ctx)
}

func campaign(ctx context.Context, s *zklock.Session, path string) error {
	e, err := zklock.NewElection(s, path)
	if err != nil {
		return err
	}
	_, err = e.Campaign(ctx, nil)
	return err
}

// TestCancelledAcquisitionLeavesNothing pins the cancellation contract:
// an acquisition whose ctx ends returns ctx's error, within its cleanup
// graces (half the session timeout each) of the ctx's end, and nothing of
// it is left on the server when it returns. 200 attempts per primitive
// queue behind a holder, with deadlines from 0 to 2ms (the create often in
// flight) and from 0 to 50ms (queued); after each return the ephemeral
// nodes under the path are exactly the holder's. So that this checks the
// cleanup of nodes that were there to leave, not early returns only, at
// least a quarter of the queued attempts must have reached the server (a
// parent's children changed while they ran); most do.
func TestCancelledAcquisitionLeavesNothing(t *testing.T) {
	c := shared(t)
	for name, p := range blockedPrimitives {
		t.Run(name, func(t *testing.T) {
			ctx := ctxFor(t)
			lockDir := lockPath(t, "lock")
			holder := newSession(t, c.Servers())
			waiter := newSession(t, c.Servers())
			require.NoError(t, p.hold(ctx, holder, lockDir))
			want := ephemeralsUnder(t, holder.Client(), lockDir)
			bound := time.Duration(p.graces) * min(waiter.Client().Timing().Timeout/2, 2*time.Second)
			rng := rand.New(rand.NewPCG(1, uint64(len(name))))
			slowest := time.Duration(0)
			reached := [2]int{} // attempts that changed the server, by span
			for i := 0; i < 200; i++ {
				before := footprint(t, holder.Client(), lockDir)
				span := 2 * time.Millisecond
				if i%2 == 1 {
					span = 50 * time.Millisecond
				}
				deadline := time.Now().Add(time.Duration(rng.Int64N(int64(span))))
				actx, cancel := context.WithDeadline(ctx, deadline)
				err := p.try(actx, waiter, lockDir, i)
				late := time.Since(deadline)
				cancel()
				require.ErrorIs(t, err, context.DeadlineExceeded, "attempt %d", i)
				require.Less(t, late, bound+time.Second, "attempt %d returned %v after its deadline", i, late)
				slowest = max(slowest, late)
				require.Equal(t, want, ephemeralsUnder(t, holder.Client(), lockDir),
					"attempt %d left a node (%s)", i, path.Base(lockDir))
				if footprint(t, holder.Client(), lockDir) != before {
					reached[i%2]++
				}
			}
			t.Logf("slowest return after the deadline: %v (contract: %v); attempts that reached the server: %d of 100 within 2ms, %d of 100 within 50ms",
				slowest, bound, reached[0], reached[1])
			require.GreaterOrEqual(t, reached[1], 25, "too few queued attempts reached the server to test their cleanup")
		})
	}
}

// footprint describes the persistent nodes from root down (the parents):
// each one's czxid and cversion, which changes whenever a child is created
// or deleted, or the parent is created again.
func footprint(t *testing.T, conn *zk.Client, root string) string {
	t.Helper()
	kids, st, err := conn.Children(t.Context(), root)
	if errors.Is(err, zk.ErrNoNode) {
		return ""
	}
	require.NoError(t, err)
	if st.EphemeralOwner != 0 {
		return ""
	}
	out := fmt.Sprintf("%s %d %d\n", root, st.Czxid, st.Cversion)
	for _, k := range kids {
		out += footprint(t, conn, root+"/"+k)
	}
	return out
}
