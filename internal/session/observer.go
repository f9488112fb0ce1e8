package session

import "time"

// observer receives what the wire layer learns about each connection: the
// session's negotiated timeout and the ownership deadline's anchor here,
// creates in create.go.
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
