package client_test

import (
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

type reply struct {
	sent, received time.Time
	xid, op        int32
	zxid           int64
	err            error
}

// replies records OnReply's calls and signals each opcode's arrival.
type replies struct {
	mu   sync.Mutex
	all  []reply
	seen map[int32]chan struct{}
}

func newReplies(ops ...int32) *replies {
	r := &replies{seen: map[int32]chan struct{}{}}
	for _, op := range ops {
		r.seen[op] = make(chan struct{})
	}
	return r
}

func (r *replies) on(sent, received time.Time, xid, op int32, zxid int64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, reply{sent, received, xid, op, zxid, err})
	if ch, ok := r.seen[op]; ok {
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
}

func (r *replies) wait(t testing.TB, op int32) {
	t.Helper()
	select {
	case <-r.seen[op]:
	case <-time.After(waitLimit):
		t.Fatalf("no reply to opcode %d in %v", op, waitLimit)
	}
}

// TestObservers: OnState tells the connection's server, session,
// negotiated timeout and the connect request's send time; OnReply tells
// every reply (requests, pings on an idle connection, the credentials and
// the watch restoration of a new connection) with its request's send time,
// no later than its arrival, its xid, opcode and zxid.
func TestObservers(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	rs := newReplies(4, 11, 100, 101)
	began := time.Now()
	c := dial(t, p.Addrs(), client.Config{Timeout: time.Second, OnState: st.on, OnReply: rs.on,
		Credentials: []client.Credential{{Scheme: "digest", Auth: []byte("u:p")}}})
	info, _ := st.last(client.StateConnected)
	if info.Server != p.Addrs()[0] || info.SessionID != c.SessionID() || info.Timeout != time.Second ||
		info.Sent.Before(began) || info.Sent.After(time.Now()) || c.Timeout() != time.Second {
		t.Fatalf("connected: %+v", info)
	}
	ctx := bounded(t)
	dir := root(t, c)
	if _, _, w, err := c.GetW(ctx, dir); err != nil || w == nil {
		t.Fatal(err)
	}
	rs.wait(t, 100) // the credential
	rs.wait(t, 4)   // the get
	rs.wait(t, 11)  // a ping: the connection is idle for a third of a second
	p.Reset()       // the next connection restores the watch
	rs.wait(t, 101)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var ops []int32
	for _, r := range rs.all {
		if r.sent.IsZero() || r.received.Before(r.sent) {
			t.Errorf("reply %+v: sent after received", r)
		}
		want := map[int32]int32{11: -2, 100: -4, 101: -8}[r.op]
		if want == 0 && r.xid <= 0 || want != 0 && r.xid != want {
			t.Errorf("reply %+v: xid", r)
		}
		if r.op == 4 && (r.zxid <= 0 || r.err != nil) {
			t.Errorf("get's reply %+v", r)
		}
		ops = append(ops, r.op)
	}
	for _, op := range []int32{100, 15, 4, 11, 101} {
		if !slices.Contains(ops, op) {
			t.Errorf("no reply to opcode %d in %v", op, ops)
		}
	}
}

// TestHandshakeTimeout: a server that accepts connections but never
// answers (here a blackholed proxy) costs one handshake timeout per
// attempt: the attempts are reported failed with a deadline error, again
// and again, and the client connects once the server answers.
func TestHandshakeTimeout(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	p.Blackhole()
	st := newStates()
	ctx := bounded(t)
	done := make(chan error, 1)
	var c *client.Client
	go func() {
		var err error
		c, err = client.Dial(ctx, client.Config{Servers: p.Addrs(), Timeout: testTimeout,
			HandshakeTimeout: 200 * time.Millisecond, OnState: st.on})
		done <- err
	}()
	st.wait(t, client.StateDisconnected, 3)
	st.mu.Lock()
	infos := slices.Clone(st.infos)
	st.mu.Unlock()
	for _, info := range infos {
		if !errors.Is(info.Err, os.ErrDeadlineExceeded) {
			t.Errorf("failed attempt: %v, want a deadline error", info.Err)
		}
	}
	p.Heal()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// TestFailover: in a three-server ensemble, when the server the client is
// connected to dies, the client resumes the same session on another one,
// and its watch, restored there, fires.
func TestFailover(t *testing.T) {
	zk := zktest.StartEnsemble(t, 3, zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	st := newStates()
	c := dial(t, zk.Servers(), client.Config{OnState: st.on})
	other := dial(t, zk.Servers(), client.Config{})
	ctx := bounded(t)
	if _, _, err := c.Create(ctx, "/f", nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.GetW(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	first, _ := st.last(client.StateConnected)
	i := slices.Index(zk.Servers(), first.Server)
	if err := zk.Server(i).Kill(); err != nil {
		t.Fatal(err)
	}
	st.wait(t, client.StateConnected, 2)
	second, _ := st.last(client.StateConnected)
	if second.Server == first.Server || second.SessionID != first.SessionID {
		t.Fatalf("after the kill: %+v, before: %+v", second, first)
	}
	if err := zk.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Set(ctx, "/f", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	expect(t, next(t, w), client.EventNodeDataChanged, "/f", client.WatchData)
}

// TestPrimingOrder: on a new connection of the same session the client
// sends its credentials, then the watches to restore, then the requests
// that waited: their replies come back in that order.
func TestPrimingOrder(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	rs := newReplies()
	c := dial(t, p.Addrs(), client.Config{OnState: st.on, OnReply: rs.on,
		Credentials: []client.Credential{{Scheme: "digest", Auth: []byte("u:p")}}})
	ctx := bounded(t)
	dir := root(t, c)
	if _, _, _, err := c.GetW(ctx, dir); err != nil {
		t.Fatal(err)
	}
	p.Refuse(true)
	p.Reset()
	st.wait(t, client.StateDisconnected, 1)
	got := make(chan error, 1)
	go func() {
		_, _, err := c.Children(ctx, dir)
		got <- err
	}()
	waitQueued(t, c, 1)
	rs.mu.Lock()
	before := len(rs.all)
	rs.mu.Unlock()
	p.Refuse(false)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var ops []int32
	for _, r := range rs.all[before:] {
		if r.op != 11 { // a ping may come anywhere
			ops = append(ops, r.op)
		}
	}
	if !slices.Equal(ops, []int32{100, 101, 12}) {
		t.Fatalf("replies on the new connection: %v, want auth (100), setWatches (101), then the waiting request (12)", ops)
	}
}
