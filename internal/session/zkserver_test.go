package session

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// This file is a scripted ZooKeeper server for the session's tests: it
// speaks the client protocol just enough to pin what a real server does
// not do on demand (a reply held for a chosen time, a connection cut with
// a request in flight, a reconnect answered with an expired session, a
// server that falls silent). The real-server tests (conn_test.go) prove
// the behaviour against ZooKeeper; these prove the edges.
//
// An ensemble is the state its servers share: sessions, the node tree and
// a log of every connect and request any of them received. Each server is
// a listener with a mode ('srvr') and a 'conf', answered on the client
// port as ZooKeeper does. Requests on a connection are answered in order
// (FIFO, as ZooKeeper does); a test's hook may hold a request's answer,
// or cut the connection instead of answering.

// zkServer is one server of an ensemble. Its script fields are guarded by
// the ensemble's mu.
type zkServer struct {
	e    *ensemble
	mode string // what 'srvr' says: standalone, leader, follower
	conf string // what 'conf' says
	ln   net.Listener

	refuse bool                                     // close new connections at once
	holdCn func(sid int64) <-chan struct{}          // if not nil, a connect for sid is answered once its channel closes
	hook   func(r *seenReq) (<-chan struct{}, step) // may hold a request's answer (gate) or cut instead
	conns  []net.Conn                               // live client connections, by number
	nconns int
}

// modeElecting is a mode whose 'srvr' says the server does not serve (as
// ZooKeeper's does while its ensemble elects a leader); its client port
// serves all the same.
const modeElecting = "electing"

// confStandalone and confQuorum are 'conf' answers: a standalone server
// has no syncLimit; a quorum member's followers lag 10×100ms + 100ms.
var (
	confStandalone = confAnswer(100, -1, 200, 60000)
	confQuorum     = confAnswer(100, 10, 200, 60000)
)

// confAnswer is a 'conf' answer shaped as ZooKeeper 3.8 prints it (every
// line, in order): a standalone server's when syncLimit < 0, else an
// ensemble member's.
func confAnswer(tick, syncLimit, minSess, maxSess int) string {
	out := fmt.Sprintf("clientPort=2181\nsecureClientPort=-1\ndataDir=/data/version-2\ndataDirSize=457\n"+
		"dataLogDir=/data/version-2\ndataLogSize=457\ntickTime=%d\nmaxClientCnxns=0\nminSessionTimeout=%d\n"+
		"maxSessionTimeout=%d\nclientPortListenBacklog=-1\n", tick, minSess, maxSess)
	if syncLimit < 0 {
		return out + "serverId=0\n"
	}
	return out + fmt.Sprintf("serverId=1\ninitLimit=10\nsyncLimit=%d\nelectionAlg=3\nelectionPort=3888\n"+
		"quorumPort=2888\npeerType=0\nmembership: \nserver.1=127.0.0.1:2888:3888:participant\n"+
		"server.2=127.0.0.1:2889:3889:participant\nversion=0", syncLimit)
}

// quorumLag is the lag the session must apply to confQuorum's followers.
const quorumLag = 10*100*time.Millisecond + 100*time.Millisecond

func (e *ensemble) server(mode, conf string) *zkServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	s := &zkServer{e: e, mode: mode, conf: conf, ln: ln}
	e.wg.Add(1)
	go s.accept()
	e.t.Cleanup(func() { ln.Close(); s.cut() })
	return s
}

func (s *zkServer) addr() string { return s.ln.Addr().String() }

// script runs f under the ensemble's lock, to change s's script.
func (s *zkServer) script(f func(s *zkServer)) {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	f(s)
}

// cut closes every client connection of s, as a server that dies or is
// partitioned away does.
func (s *zkServer) cut() {
	s.e.mu.Lock()
	defer s.e.mu.Unlock()
	for i, nc := range s.conns {
		if nc != nil {
			nc.Close()
			s.conns[i] = nil
		}
	}
}

func (s *zkServer) accept() {
	defer s.e.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.e.wg.Add(1)
		go func() {
			defer s.e.wg.Done()
			s.serve(nc)
		}()
	}
}

// serve answers a four-letter word, or runs a client connection: the
// first four bytes are either a word or a frame's length, as on
// ZooKeeper's client port.
func (s *zkServer) serve(nc net.Conn) {
	defer nc.Close()
	var head [4]byte
	if _, err := io.ReadFull(nc, head[:]); err != nil {
		return
	}
	// script changes mode and conf under the ensemble's lock.
	s.e.mu.Lock()
	mode, conf := s.mode, s.conf
	s.e.mu.Unlock()
	switch string(head[:]) {
	case "srvr":
		if mode == modeElecting {
			_, _ = io.WriteString(nc, "This ZooKeeper instance is not currently serving requests\n")
			return
		}
		_, _ = io.WriteString(nc, "Zookeeper version: scripted\nMode: "+mode+"\n")
		return
	case "conf":
		_, _ = io.WriteString(nc, conf)
		return
	}
	e := s.e
	e.mu.Lock()
	if s.refuse {
		e.mu.Unlock()
		return
	}
	n := s.nconns
	s.nconns++
	s.conns = append(s.conns, nc)
	e.mu.Unlock()
	body, err := readBody(nc, binary.BigEndian.Uint32(head[:]))
	if err != nil {
		return
	}
	gone := make(chan struct{}) // the client closed, or the server cut
	quit := make(chan struct{}) // this goroutine stopped answering
	frames := make(chan arrival, 64)
	go func() { // the connection's reader: recv times are when requests arrive
		defer close(gone)
		defer close(frames)
		for {
			b, err := readFrame(nc)
			if err != nil {
				return
			}
			select {
			case frames <- s.arrived(n, b):
			case <-quit:
				return
			}
		}
	}()
	defer func() { close(quit); nc.Close(); <-gone }()
	sid, ok := s.handshake(nc, n, body, gone)
	if !ok {
		return
	}
	for a := range frames {
		if !s.request(nc, sid, a, gone) {
			return
		}
	}
}

// handshake answers a connect request: a new session, the session
// resumed (same id and password), or, for a session expired, unknown or
// with another password, a zero session: expired.
func (s *zkServer) handshake(nc net.Conn, n int, body []byte, gone <-chan struct{}) (int64, bool) {
	e := s.e
	d := &dec{b: body}
	d.i32() // protocol version
	d.i64() // last zxid seen
	timeout := d.i32()
	sid := d.i64()
	pw := d.buf()
	e.mu.Lock()
	cn := &seenConnect{srv: s, conn: n, sid: sid, password: pw, recv: time.Now()}
	e.connects = append(e.connects, cn)
	e.notifyLocked()
	var hold <-chan struct{}
	if s.holdCn != nil {
		hold = s.holdCn(sid)
	}
	e.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-gone:
			return 0, false
		case <-e.stop:
			return 0, false
		}
	}
	e.mu.Lock()
	ss := e.sessions[sid]
	switch {
	case sid == 0:
		sid, ss = e.nextSID, &session{password: make([]byte, 16)}
		e.nextSID++
		_, _ = rand.Read(ss.password)
		e.sessions[sid] = ss
	case ss == nil || ss.expired || !bytes.Equal(ss.password, pw):
		sid, ss, timeout = 0, &session{password: make([]byte, 16)}, 0
	}
	cn.answered, cn.granted = time.Now(), sid
	e.notifyLocked()
	e.mu.Unlock()
	resp := appendI32(appendI32(nil, 0), timeout)
	resp = appendBuf(appendI64(resp, sid), ss.password)
	_, err := nc.Write(frame(append(resp, 0)))
	return sid, err == nil && sid != 0
}

// arrived logs a request as it arrives on connection n.
func (s *zkServer) arrived(n int, b []byte) arrival {
	d := &dec{b: b}
	r := &seenReq{srv: s, conn: n, xid: d.i32(), op: d.i32(), recv: time.Now()}
	if r.op != opPing && r.op != opCloseSession && r.op != opSetWatches && r.op != opSetWatches2 {
		r.path = (&dec{b: d.b}).str()
	}
	s.e.mu.Lock()
	s.e.reqs = append(s.e.reqs, r)
	s.e.notifyLocked()
	s.e.mu.Unlock()
	return arrival{r, d}
}

// request answers one request: it lets the hook hold it, and applies and
// answers it (or cuts the connection, as the hook says).
func (s *zkServer) request(nc net.Conn, sid int64, a arrival, gone <-chan struct{}) bool {
	e := s.e
	r, d := a.r, a.d
	e.mu.Lock()
	hook := s.hook
	e.mu.Unlock()
	then := answer
	if hook != nil {
		var gate <-chan struct{}
		if gate, then = hook(r); gate != nil {
			select {
			case <-gate:
			case <-gone:
				return false
			case <-e.stop:
				return false
			}
		}
	}
	e.mu.Lock()
	reply := e.applyLocked(sid, r, d)
	if then == cutAfter {
		e.notifyLocked()
		e.mu.Unlock()
		return false
	}
	r.answered = time.Now()
	e.notifyLocked()
	e.mu.Unlock()
	if _, err := nc.Write(reply); err != nil {
		return false
	}
	return r.op != opCloseSession
}

// arrival is a request as it arrived: logged, and its body past the
// header.
type arrival struct {
	r *seenReq
	d *dec
}

func readFrame(r io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	return readBody(r, binary.BigEndian.Uint32(head[:]))
}

func readBody(r io.Reader, n uint32) ([]byte, error) {
	if n > 1<<20 {
		return nil, errors.New("frame too long")
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}
