package zktest

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a TCP proxy on 127.0.0.1 in front of ZooKeeper servers, to put
// real network faults between a client and the servers: a client connects
// to Addrs instead of Cluster.Servers. It has one listener per target, so a
// client that moves to another server still goes through it. Faults apply
// to every connection through the proxy, so give each client its own Proxy.
// Its methods are safe for concurrent use. NewProxy registers a t.Cleanup
// that closes every listener and connection and waits for its goroutines.
type Proxy struct {
	targets   []string
	listeners []net.Listener
	wg        sync.WaitGroup

	mu      sync.Mutex
	gates   [2]chan struct{} // up, down: closed while that direction forwards
	refuse  bool
	only    string // Only's target; "" reaches every target
	latency time.Duration
	match   func(opcode int32) bool // armed by ResetAfterRequest
	reply   func(xid int32) bool    // armed by ResetAfterReply
	dropCon bool                    // armed by DropConnectReply
	raw     bool                    // not client traffic: no request framing
	hello   map[string]string       // peer network: target -> address to announce
	links   map[*link]struct{}
	closed  bool

	conns     atomic.Int64
	bytesUp   atomic.Int64 // client to server, forwarded
	bytesDown atomic.Int64 // server to client, forwarded
}

// NewProxy starts a proxy with one listener on 127.0.0.1 per target address,
// in the same order. It fails the test if it cannot listen.
func NewProxy(t testing.TB, targets []string) *Proxy {
	t.Helper()
	p, err := newProxy(targets)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return p
}

// newProxy starts a proxy; the caller closes it.
func newProxy(targets []string) (*Proxy, error) {
	p, err := listenProxy(targets)
	if err != nil {
		return nil, err
	}
	p.serve()
	return p, nil
}

// listenProxy makes a proxy that listens but accepts nothing until serve,
// so that its settings (raw, hello) can be set first without a race.
func listenProxy(targets []string) (*Proxy, error) {
	p := &Proxy{targets: append([]string(nil), targets...), links: map[*link]struct{}{}}
	p.hold(false, false)
	for range targets {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			p.close()
			return nil, fmt.Errorf("zktest: proxy listen: %w", err)
		}
		p.listeners = append(p.listeners, ln)
	}
	return p, nil
}

// serve starts accepting connections on every listener.
func (p *Proxy) serve() {
	for i, ln := range p.listeners {
		p.wg.Add(1)
		go p.accept(ln, p.targets[i])
	}
}

// Addrs returns the proxy's listen addresses, one per target, in the order
// of the targets.
func (p *Proxy) Addrs() []string {
	addrs := make([]string, len(p.listeners))
	for i, ln := range p.listeners {
		addrs[i] = ln.Addr().String()
	}
	return addrs
}

// Blackhole stops forwarding bytes in both directions while keeping every
// connection open, like a network partition: the client and the server see
// silence, not an error. New connections are accepted but not forwarded.
// Bytes are held back, not dropped (up to a bounded buffer, beyond which
// reading stops), so after Heal they arrive late and in order, as TCP
// retransmission would deliver them. A chunk already being written when
// Blackhole is called may still arrive.
func (p *Proxy) Blackhole() {
	p.hold(true, true)
}

// hold stops (true) or lets through (false) the up (client to server) and
// down directions. A new connection is dialed only while both flow: a
// handshake cannot complete across a one-way cut either.
func (p *Proxy) hold(up, down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, stop := range [2]bool{up, down} {
		switch {
		case stop && (p.gates[i] == nil || isClosed(p.gates[i])):
			p.gates[i] = make(chan struct{})
		case !stop && (p.gates[i] == nil || !isClosed(p.gates[i])):
			if p.gates[i] == nil {
				p.gates[i] = make(chan struct{})
			}
			close(p.gates[i])
		}
	}
}

// Heal undoes Blackhole, SetLatency, Refuse, Only and an armed
// ResetAfterRequest, ResetAfterReply or DropConnectReply. Connections
// that survived the fault carry on.
func (p *Proxy) Heal() {
	p.hold(false, false)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse, p.only, p.latency, p.match, p.reply, p.dropCon = false, "", 0, nil, nil, false
}

// Only lets the client reach the i-th target alone, as when the client's
// network reaches only one server: connections to the others are closed
// with a TCP reset and new ones refused, until Heal. A client then
// reconnects to that server if it can. i must index the proxy's targets.
func (p *Proxy) Only(i int) {
	p.mu.Lock()
	p.only = p.targets[i]
	p.mu.Unlock()
	for _, l := range p.snapshot() {
		if l.target != p.targets[i] {
			l.reset()
		}
	}
}

// Reset closes every current connection with a TCP reset, so the client
// sees "connection reset by peer" and the server sees the connection close.
// New connections are accepted as usual.
func (p *Proxy) Reset() {
	for _, l := range p.snapshot() {
		l.reset()
	}
}

// Refuse makes the proxy close new connections at once, with a reset, while
// on is true. Current connections are not affected; Reset closes them.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = on
}

// SetLatency delays every chunk of bytes by d in each direction (so a round
// trip gains 2*d), preserving order. Zero removes the delay.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = max(d, 0)
}

// ResetAfterRequest arms a one-shot fault: the next request packet (on any
// connection, after its ConnectRequest) whose opcode satisfies match is
// forwarded to the server, then that connection is reset before any further
// byte from the server reaches the client, so the client loses the reply
// (and every other reply in flight) while the server performs the request.
// The server side is closed once the server has answered, or after 2s.
// Opcodes are ZooKeeper's: create=1, delete=2, exists=3, getData=4,
// setData=5, getChildren2=12, multi=14, create2=15, createContainer=19,
// ping=11. match runs with the proxy locked, so it must not call the proxy.
// A later call replaces an armed match; Heal disarms it.
func (p *Proxy) ResetAfterRequest(match func(opcode int32) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.match = match
}

// ResetAfterReply arms a one-shot fault: the next packet from a server (on
// any connection, after its ConnectResponse) whose xid satisfies match is
// forwarded to the client whole, then that connection is reset, so the
// client reads exactly the packets up to that one (watch notifications
// have xid -1, pings -2, setWatches -8, ordinary replies their request's).
// It cuts a multi-packet exchange between two replies, as ResetAfterRequest
// cuts it between a request and its reply. match runs with the proxy
// locked, so it must not call the proxy. A later call replaces an armed
// match; Heal disarms it.
func (p *Proxy) ResetAfterReply(match func(xid int32) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reply = match
}

// DropConnectReply arms a one-shot fault: the next ConnectRequest (a new
// session's or a reconnect's) is forwarded to the server, then that
// connection is reset before the server's response reaches the client, and
// every later connection is refused until Heal. The server performs the
// connect (a reconnect revalidates the session with the timeout this server
// grants) while the client never learns what it granted, and cannot reach
// a server again to find out. Heal disarms it.
func (p *Proxy) DropConnectReply() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropCon = true
}

// takeConnectCut reports whether DropConnectReply is armed, disarming it
// and refusing new connections if so.
func (p *Proxy) takeConnectCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.dropCon {
		return false
	}
	p.dropCon, p.refuse = false, true
	return true
}

// Stats returns how many connections the proxy has accepted (refused ones
// included) and how many bytes it has forwarded up (client to server) and
// down (server to client).
func (p *Proxy) Stats() (connections int, bytesUp, bytesDown int64) {
	return int(p.conns.Load()), p.bytesUp.Load(), p.bytesDown.Load()
}

// takeMatch reports whether an armed ResetAfterRequest matches opcode, and
// disarms it if so.
func (p *Proxy) takeMatch(opcode int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.match == nil || !p.match(opcode) {
		return false
	}
	p.match = nil
	return true
}

// takeReply reports whether an armed ResetAfterReply matches xid, and
// disarms it if so.
func (p *Proxy) takeReply(xid int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reply == nil || !p.reply(xid) {
		return false
	}
	p.reply = nil
	return true
}

// currentGate returns the gate of one direction: 0 up, 1 down.
func (p *Proxy) currentGate(dir int) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gates[dir]
}

func (p *Proxy) currentLatency() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency
}

func (p *Proxy) snapshot() []*link {
	p.mu.Lock()
	defer p.mu.Unlock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	return links
}

func (p *Proxy) accept(ln net.Listener, target string) {
	defer p.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			return // the listener is closed
		}
		p.conns.Add(1)
		p.mu.Lock()
		if p.closed || p.refuse || (p.only != "" && p.only != target) {
			p.mu.Unlock()
			resetConn(conn)
			continue
		}
		l := newLink(p, conn, target)
		if addr, ok := p.hello[target]; ok {
			l.hello = &helloRewriter{addr: addr}
		}
		p.links[l] = struct{}{}
		p.wg.Add(2)
		p.mu.Unlock()
		go l.readUp()
		go l.writeUp()
	}
}

func (p *Proxy) forget(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// close stops the proxy: listeners first, so no link is added, then links.
func (p *Proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for _, ln := range p.listeners {
		ln.Close()
	}
	for _, l := range p.snapshot() {
		l.close(true)
	}
	p.wg.Wait()
}

// resetConn closes conn so that the peer gets a TCP RST, not a FIN.
func resetConn(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	conn.Close()
}
