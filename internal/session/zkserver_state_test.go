package session

import (
	"sync"
	"testing"
	"time"
)

// The scripted server's state (zkserver_test.go): what its servers share,
// and what a test reads and waits on.

// step is what a server does with a request once its hook's gate opens.
type step int

const (
	answer   step = iota // apply it and reply
	cutAfter             // apply it, then close the connection without a reply (the reply is lost)
)

// seenReq is a request a server received.
type seenReq struct {
	srv      *zkServer
	conn     int // the connection's number on srv, from 0
	xid, op  int32
	path     string
	recv     time.Time // when the server read it
	answered time.Time // when its reply was written; zero if none was
}

// seenConnect is a connect request a server received.
type seenConnect struct {
	srv      *zkServer
	conn     int
	sid      int64
	password []byte
	recv     time.Time
	answered time.Time // zero until its response was written
	granted  int64     // the session the response gave; 0: expired
}

type session struct {
	password []byte
	expired  bool
}

type node struct {
	data  []byte
	owner int64 // ephemeral owner; 0 for others
	czxid int64
	seq   int32 // next sequence number of a child
}

// ensemble is the servers' shared state. Every field is guarded by mu;
// changed is closed and replaced on every change, so that a test waits for
// a condition (await) rather than sleeping.
type ensemble struct {
	t        *testing.T
	mu       sync.Mutex
	changed  chan struct{}
	stop     chan struct{} // closed when the test ends: every held answer gives up
	wg       sync.WaitGroup
	sessions map[int64]*session
	nextSID  int64
	nodes    map[string]*node
	zxid     int64
	reqs     []*seenReq
	connects []*seenConnect
}

func newEnsemble(t *testing.T) *ensemble {
	e := &ensemble{t: t, changed: make(chan struct{}), stop: make(chan struct{}),
		sessions: make(map[int64]*session), nextSID: 0x5000, nodes: map[string]*node{"/": {}}}
	t.Cleanup(func() { close(e.stop); e.wg.Wait() })
	return e
}

func (e *ensemble) notifyLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// await waits until cond, run under the ensemble's lock, holds, for at
// most 10s, waking on every change rather than polling.
func (e *ensemble) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		e.mu.Lock()
		ok, changed := cond(), e.changed
		e.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// expire expires session sid as the leader does: its ephemeral nodes go,
// and a reconnect is answered with a zero session.
func (e *ensemble) expire(sid int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.endSessionLocked(sid)
	e.sessions[sid].expired = true
	e.notifyLocked()
}

func (e *ensemble) endSessionLocked(sid int64) {
	for p, nd := range e.nodes {
		if nd.owner == sid {
			delete(e.nodes, p)
		}
	}
}

// paths returns the paths in the tree, the root aside.
func (e *ensemble) paths() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ps []string
	for p := range e.nodes {
		if p != "/" {
			ps = append(ps, p)
		}
	}
	return ps
}

// count returns how many requests with opcode op connection conn of any
// server received. e.mu is held.
func (e *ensemble) countLocked(op int32, conn int) int {
	n := 0
	for _, r := range e.reqs {
		if r.op == op && r.conn == conn {
			n++
		}
	}
	return n
}

// seen returns the requests with opcode op received so far.
func (e *ensemble) seen(op int32) []seenReq {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seenLocked(op)
}

func (e *ensemble) seenLocked(op int32) []seenReq {
	var rs []seenReq
	for _, r := range e.reqs {
		if r.op == op {
			rs = append(rs, *r)
		}
	}
	return rs
}
