package client

// Call is a request queued without waiting for its reply, as net/rpc's
// Call: GoCreate and GoChildren return at once, and Done is closed once
// the outcome is in the Call's fields. Requests are sent in the order they
// are queued, whichever call queues them (a Go method, or a blocking
// request of another goroutine after it), and ZooKeeper answers them in
// that order: requests queued one after the other without waiting form a
// pipeline that costs one round trip, and each sees the effect of those
// queued before it.
//
// A Call has no ctx: it is never abandoned, so its outcome is always
// known, which is what a create whose caller gave up needs (the node it
// may have made must be found). It completes with its reply, with
// ErrConnectionLoss if its connection is lost after it was sent, with
// ErrSessionExpired if the session expires before it is sent, or with
// ErrClosed when the client closes. A Call nobody waits for costs nothing
// once completed.
type Call struct {
	done chan struct{}

	// The outcome, set before Done is closed.

	// Path is the created node's name (GoCreate).
	Path string
	// Stat is the created node's Stat (GoCreate), the listed node's
	// (GoChildren), or the node's (GoExists).
	Stat Stat
	// Children are the listed node's children (GoChildren).
	Children []string
	// Err is nil on success, or an *Error as the blocking requests return.
	Err error
}

// Done returns a channel that is closed once the Call has completed.
func (k *Call) Done() <-chan struct{} { return k.done }

// GoCreate queues Create's request and returns at once (TTL modes are
// refused, as by Create).
func (c *Client) GoCreate(path string, data []byte, mode CreateMode, acl []ACL) *Call {
	k := &Call{done: make(chan struct{})}
	if mode.ttl() {
		k.finish(&Error{Op: "create", Path: path, Err: ErrBadArguments})
		return k
	}
	r := newRequest(mode.opcode(), path)
	r.data, r.flags, r.acl = data, int32(mode), acl
	c.start(r, k)
	return k
}

// GoChildren queues Children's request and returns at once.
func (c *Client) GoChildren(path string) *Call {
	k := &Call{done: make(chan struct{})}
	c.start(newRequest(opGetChildren2, path), k)
	return k
}

// GoExists queues Exists's request, without a watch, and returns at once:
// a missing node completes the Call with ErrNoNode. Stat is the node's.
func (c *Client) GoExists(path string) *Call {
	k := &Call{done: make(chan struct{})}
	c.start(newRequest(opExists, path), k)
	return k
}

// start checks and queues r for k; k completes when r does.
func (c *Client) start(r *request, k *Call) {
	if err := checkPath(opName(r.op), r.path); err != nil {
		release(r)
		k.finish(err)
		return
	}
	r.call = k
	r.encode()
	if err := c.enqueue(r); err != nil {
		err = &Error{Op: opName(r.op), Path: r.path, Err: err}
		release(r)
		k.finish(err)
	}
}

// settle copies r's outcome into its Call and completes the Call; r is
// released by the caller.
func (k *Call) settle(r *request) {
	k.Path, k.Stat, k.Children = r.rpath, r.stat, r.children
	k.finish(r.failure())
}

func (k *Call) finish(err error) {
	k.Err = err
	close(k.done)
}
