package session

import "time"

// observer receives what the wire layer learns about each connection.
type observer Conn

func (o *observer) Connected(sid int64, timeout time.Duration, sent time.Time) {
	c := (*Conn)(o)
	c.wireSID.Store(sid)
	if sid != 0 {
		c.timeout.Store(int64(timeout))
		c.anchor.Store(int64(sent.Sub(c.base)))
	}
}

func (o *observer) Replied(sent time.Time) {
	c := (*Conn)(o)
	t := int64(sent.Sub(c.base))
	for {
		old := c.anchor.Load()
		if t <= old || c.anchor.CompareAndSwap(old, t) {
			return
		}
	}
}

// Created records what the wire saw of a create's reply, for the create
// that registered its request path (startCreate). Creates nobody
// registered (containers, plain Conn use) are not recorded, so nothing
// accumulates and no record is ever dropped to bound the map.
func (o *observer) Created(path string, zxid, sid int64) {
	c := (*Conn)(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.creates[path]; ok {
		r.c, r.seen = created{zxid: zxid, sid: sid}, true
	}
}

func (o *observer) Sending(path string) {
	c := (*Conn)(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.sending[path]; ok {
		close(ch)
		delete(c.sending, path)
	}
}

// onSend returns a channel closed when a create request for path is
// written to the connection, and a function that forgets the request.
func (c *Conn) onSend(path string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	c.sending[path] = ch
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		if c.sending[path] == ch {
			delete(c.sending, path)
		}
		c.mu.Unlock()
	}
}
