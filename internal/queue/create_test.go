package queue_test

import (
	"errors"
	"path"
	"slices"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// A create cut off by connection loss has an unknown outcome: a node it
// made is found by its protected prefix and adopted (one node, its czxid
// the token); a create that was not applied is sent again.
func TestCreateCutOff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   queuetest.Fault
		creates int // requests sent
	}{
		{"applied", queuetest.Fault{Err: client.ErrConnectionLoss}, 1},
		{"applied, session moved", queuetest.Fault{Err: client.ErrSessionMoved}, 1},
		{"not applied", queuetest.Fault{Lost: true}, 2},
		{"not sent: the session expired while it waited", queuetest.Fault{Lost: true, Err: client.ErrSessionExpired}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := setup(t)
			c.Inject(queuetest.OpCreate, tc.fault)
			h := acquire(t, mutexQ(c), queue.Request{})
			consumed(t, c)
			mine := created(s, c.SessionID(), dir)
			if len(mine) != 1 || mine[0] != h.Path {
				t.Fatalf("held %s; created %v, want exactly that node", h.Path, mine)
			}
			if got := s.Calls(queuetest.OpCreate); got != tc.creates {
				t.Fatalf("%d creates sent, want %d", got, tc.creates)
			}
			if h.Token != czxid(t, s, h.Path) || h.Node().Name != path.Base(h.Path) || h.Epoch.SessionID != c.SessionID() {
				t.Fatalf("held %+v", h)
			}
			if !slices.Equal(c.Tracked(), []string{h.Path}) {
				t.Fatalf("tracked %v", c.Tracked())
			}
		})
	}
}

// A parent reaped between our create and its use (the server reaps an
// empty CONTAINER) makes the create fail with NoNode: the parents are
// created again and the create retried.
func TestCreateParentReaped(t *testing.T) {
	for _, tc := range []struct {
		name  string
		have  []string // containers present at the start
		fault queuetest.Fault
		reap  string
	}{
		{name: "before the create", have: []string{"/locks", dir}, reap: dir},
		// ensureParents found /locks, and the reaper took it before /locks/l
		// was made under it.
		{name: "while creating parents", have: []string{"/locks"}, reap: "/locks",
			fault: queuetest.Fault{Path: dir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := queuetest.NewServer()
			c := s.Connect()
			for _, p := range tc.have {
				if err := c.CreateContainer(t.Context(), p); err != nil {
					t.Fatal(err)
				}
			}
			reaped := czxid(t, s, tc.reap)
			f, op := tc.fault, queuetest.OpContainer
			if f.Path == "" {
				op = queuetest.OpCreate
			}
			f.Before = func() {
				if !s.Reap(tc.reap) {
					t.Errorf("%s not reaped", tc.reap)
				}
			}
			c.Inject(op, f)
			h := acquire(t, mutexQ(c), queue.Request{})
			consumed(t, c)
			if got := czxid(t, s, tc.reap); got <= reaped {
				t.Fatalf("%s not re-created (czxid %d, was %d)", tc.reap, got, reaped)
			}
			if path.Dir(h.Path) != dir || h.Token != czxid(t, s, h.Path) {
				t.Fatalf("held %+v", h)
			}
		})
	}
}

// A lock on a fresh path (no parent exists) costs no more round trips
// than on an existing one: the parents are created in the pipeline ahead
// of the create.
func TestCreateFreshPath(t *testing.T) {
	s := queuetest.NewServer()
	c := s.Connect()
	h := acquire(t, mutexQ(c), queue.Request{})
	if path.Dir(h.Path) != dir {
		t.Fatalf("held %s", h.Path)
	}
	if n := s.Calls(queuetest.OpCreate); n != 1 {
		t.Fatalf("%d creates of our node, want 1 (after the parents)", n)
	}
	if n := s.Calls(queuetest.OpContainer); n != len(queue.Parents(dir))+1 {
		t.Fatalf("%d container creates, want %d", n, len(queue.Parents(dir))+1)
	}
	if n := s.Calls(queuetest.OpChildren); n != 0 {
		t.Fatalf("%d listings, want none (the listing is pipelined)", n)
	}
}

// A parent that cannot be created (no permission) fails the acquisition at
// once with that error, not after retrying the create.
func TestCreateParentRefused(t *testing.T) {
	s := queuetest.NewServer()
	c := s.Connect()
	c.Inject(queuetest.OpContainer, queuetest.Fault{Path: dir, Lost: true, Err: client.ErrNoAuth})
	_, err := mutexQ(c).Acquire(testCtx(t), queue.Request{})
	if !errors.Is(err, client.ErrNoAuth) {
		t.Fatalf("Acquire: %v, want ErrNoAuth", err)
	}
	consumed(t, c)
	if n := s.Calls(queuetest.OpCreate); n != 1 {
		t.Fatalf("%d creates, want 1", n)
	}
	noNodes(t, s, c.SessionID())
}

// A node of an earlier session found by the recovery of a cut-off create
// is deleted (Discard with its owner), never adopted: it goes when that
// session ends, and a grant on it would be a grant without ownership.
func TestRecoverEarlierSession(t *testing.T) {
	s, c := setup(t)
	var old int64
	c.Inject(queuetest.OpCreate, queuetest.Fault{
		Err:   client.ErrConnectionLoss,
		After: func() { old = c.NewSession() }, // the client reconnects under a new session
	})
	h := acquire(t, mutexQ(c), queue.Request{})
	consumed(t, c)
	stale := created(s, old, dir)
	if len(stale) != 1 {
		t.Fatalf("the cut-off create made %v", stale)
	}
	if h.Path == stale[0] || s.Exists(stale[0]) {
		t.Fatalf("held %s; the earlier session's %s exists: %v", h.Path, stale[0], s.Exists(stale[0]))
	}
	if !slices.Contains(c.Discards(), queuetest.Watch{Session: old, Path: stale[0]}) {
		t.Fatalf("discards %v", c.Discards())
	}
	if _, st, _ := s.Node(h.Path); st.EphemeralOwner != c.SessionID() || h.Epoch.SessionID != c.SessionID() {
		t.Fatalf("held %s of session %d, current %d", h.Path, st.EphemeralOwner, c.SessionID())
	}
}

// The grant is refused when our node is not of the live epoch's session
// or the epoch ends before the node is tracked: that node is discarded and
// the acquisition starts over with a new one.
func TestGrantChecksSession(t *testing.T) {
	for _, tc := range []struct {
		name   string
		op     queuetest.Op
		change func(c *queuetest.Conn)
	}{
		{"session changed after the create", queuetest.OpCreate, func(c *queuetest.Conn) { c.NewSession() }},
		{"epoch ended before tracking", queuetest.OpEpoch, func(c *queuetest.Conn) { c.EndEpoch(); c.NewEpoch() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := setup(t)
			first := c.SessionID()
			c.Inject(tc.op, queuetest.Fault{After: func() { tc.change(c) }})
			h := acquire(t, mutexQ(c), queue.Request{})
			consumed(t, c)
			refused := created(s, first, dir)[0]
			if h.Path == refused || s.Exists(refused) {
				t.Fatalf("held %s; refused node %s exists: %v", h.Path, refused, s.Exists(refused))
			}
			if !slices.Equal(c.Tracked(), []string{h.Path}) || h.Epoch.SessionID != c.SessionID() {
				t.Fatalf("held %+v; tracked %v", h, c.Tracked())
			}
			select {
			case <-h.Epoch.Done:
				t.Fatal("granted on an ended epoch")
			default:
			}
		})
	}
}
