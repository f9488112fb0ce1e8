package zktest

import (
	"net"
	"sync"
	"time"
)

const (
	chunkSize  = 32 << 10
	queueDepth = 64 // chunks held per direction before reading stops
	dialWait   = 5 * time.Second
	// replyGrace is how long a connection cut by ResetAfterRequest keeps its
	// server side open for the server to answer, so the request is surely
	// processed before the server sees the client leave.
	replyGrace = 2 * time.Second
	// A peer network link retries a refused dial this often, this many times.
	peerDialRetry = 50 * time.Millisecond
	peerDialTries = 40
)

// chunk is bytes read from one side, stamped for SetLatency; eof marks the
// end of that side's stream, passed on in order like the bytes before it.
type chunk struct {
	data []byte
	at   time.Time
	eof  bool
}

// link is one client connection through the proxy and its server connection.
// Each direction has a reader, which reads its socket into a bounded queue,
// and a writer, which forwards queued chunks once the gate is open and their
// latency has passed; holding bytes back thus never stops the other
// direction. A side's close travels through the queue too, so a blackholed
// link hides it until Heal, as a partition would.
type link struct {
	p       *Proxy
	client  net.Conn
	target  string
	up      chan chunk
	down    chan chunk
	done    chan struct{}
	frames  upFramer
	replies upFramer       // the server's packets, for ResetAfterReply
	hello   *helloRewriter // peer network election link, until its first message passed

	mu     sync.Mutex
	server net.Conn // nil until dialed
	cut    bool     // a ResetAfterRequest fired: nothing more goes down
	once   sync.Once
}

func newLink(p *Proxy, client net.Conn, target string) *link {
	return &link{
		p: p, client: client, target: target,
		up: make(chan chunk, queueDepth), down: make(chan chunk, queueDepth),
		done: make(chan struct{}), replies: upFramer{byXid: true},
	}
}

// readUp moves bytes from the client into the up queue.
func (l *link) readUp() {
	defer l.p.wg.Done()
	l.read(l.client, l.up)
}

// readDown moves bytes from the server into the down queue. Once the link
// is cut it only waits for the server's next bytes (the lost reply) or the
// read deadline set by close, then closes the server side.
func (l *link) readDown(server net.Conn) {
	defer l.p.wg.Done()
	l.read(server, l.down)
	if l.isCut() {
		server.Close()
	}
}

func (l *link) read(from net.Conn, to chan chunk) {
	for {
		buf := make([]byte, chunkSize)
		n, err := from.Read(buf)
		if l.isCut() {
			return
		}
		if n == 0 && err == nil {
			continue
		}
		select {
		case to <- chunk{data: buf[:n], at: time.Now(), eof: err != nil}:
		case <-l.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// writeUp dials the server once the gate is open, starts the down
// direction, then forwards client bytes, watching for ResetAfterRequest.
func (l *link) writeUp() {
	defer l.p.wg.Done()
	server := l.dial()
	if server == nil {
		l.close(false)
		return
	}
	l.p.wg.Add(2)
	go l.readDown(server)
	go l.writeDown()
	for {
		c, ok := l.next(l.up, 0)
		if !ok {
			return
		}
		n := -1
		if !l.p.raw {
			n = l.frames.feed(c.data, l.p.takeMatch, l.p.takeConnectCut)
		}
		if l.hello != nil {
			var done bool
			c.data, done = l.hello.feed(c.data)
			if done {
				l.hello = nil
			}
		}
		if n >= 0 {
			// Stop the down direction before the request can reach the server.
			l.mu.Lock()
			l.cut = true
			l.mu.Unlock()
			c.data = c.data[:n]
		}
		if _, err := server.Write(c.data); err != nil {
			l.close(false)
			return
		}
		l.p.bytesUp.Add(int64(len(c.data)))
		if n >= 0 {
			l.reset()
			return
		}
		if c.eof {
			l.close(false)
			return
		}
	}
}

// writeDown forwards server bytes to the client until the link ends or is
// cut; a chunk arriving after the cut is the lost reply.
func (l *link) writeDown() {
	defer l.p.wg.Done()
	for {
		c, ok := l.next(l.down, 1)
		if !ok {
			return
		}
		// Checked after the chunk was read, so a reply to a request that was
		// forwarded after the cut can never pass.
		if l.isCut() {
			return
		}
		n := -1
		if !l.p.raw {
			n = l.replies.feed(c.data, l.p.takeReply, nil)
		}
		if n >= 0 {
			c.data = c.data[:n]
		}
		if _, err := l.client.Write(c.data); err != nil {
			l.close(false)
			return
		}
		l.p.bytesDown.Add(int64(len(c.data)))
		if n >= 0 {
			l.reset() // the matching packet is through: nothing more
			return
		}
		if c.eof {
			l.close(false)
			return
		}
	}
}

// dial waits for the gate to open, then connects to the target.
func (l *link) dial() net.Conn {
	if !l.waitGate(0) || !l.waitGate(1) {
		return nil
	}
	d := net.Dialer{Timeout: dialWait}
	server, err := d.Dial("tcp", l.target)
	// A peer's port refuses while the server is (re)starting. The peer has
	// already seen its connection accepted here, so one refusal would look
	// like a connection that broke; retry as its own connect would.
	for tries := 0; err != nil && l.p.raw && tries < peerDialTries; tries++ {
		select {
		case <-time.After(peerDialRetry):
		case <-l.done:
			return nil
		}
		server, err = d.Dial("tcp", l.target)
	}
	if err != nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if isClosed(l.done) {
		server.Close()
		return nil
	}
	l.server = server
	return server
}

// next returns the next chunk of q once its latency has passed and the gate
// of its direction dir is open; false when the link is done.
func (l *link) next(q chan chunk, dir int) (chunk, bool) {
	var c chunk
	select {
	case c = <-q:
	case <-l.done:
		return c, false
	}
	if wait := time.Until(c.at.Add(l.p.currentLatency())); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-l.done:
			return c, false
		}
	}
	return c, l.waitGate(dir)
}

func (l *link) waitGate(dir int) bool {
	select {
	case <-l.p.currentGate(dir):
		return true
	case <-l.done:
		return false
	}
}

func (l *link) isCut() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cut
}

// reset closes the client side with a TCP reset.
func (l *link) reset() {
	if tc, ok := l.client.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	l.close(false)
}

// close ends the link. The server side of a cut link stays open for up to
// replyGrace, unless force is set, so that the server answers first.
func (l *link) close(force bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.once.Do(func() {
		close(l.done)
		l.client.Close()
		l.p.forget(l)
	})
	if l.server == nil {
		return
	}
	if l.cut && !force {
		_ = l.server.SetReadDeadline(time.Now().Add(replyGrace))
		return
	}
	l.server.Close()
}
