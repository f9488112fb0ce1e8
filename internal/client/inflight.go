package client

import "sync"

// fifo is a queue of requests, oldest first.
type fifo struct {
	items []*request
	head  int
}

// push adds r. The answered head of the slice is reclaimed once it is
// half of it, so a queue that never empties does not grow without bound.
func (f *fifo) push(r *request) {
	if f.head > 0 && f.head >= len(f.items)/2 {
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items, f.head = f.items[:n], 0
	}
	f.items = append(f.items, r)
}

func (f *fifo) pop() *request {
	if f.head == len(f.items) {
		return nil
	}
	r := f.items[f.head]
	f.items[f.head] = nil
	f.head++
	return r
}

// inflight is the requests sent on the current connection and not yet
// answered. The server answers a session's requests in the order it
// received them (ZooKeeper's FIFO client order), so the next reply with an
// ordinary xid answers the oldest ordinary request. Requests with a
// reserved xid are answered in order among themselves, in their own
// lists: an auth packet is handled as soon as the server reads it, ahead
// of requests still in its pipeline, so its reply can overtake theirs.
type inflight struct {
	mu                           sync.Mutex
	ordinary, ping, auth, setWat fifo
}

func (in *inflight) list(xid int32) *fifo {
	switch xid {
	case xidPing:
		return &in.ping
	case xidAuth:
		return &in.auth
	case xidSetWatches:
		return &in.setWat
	}
	return &in.ordinary
}

// add records rs as sent, in order.
func (in *inflight) add(rs []*request) {
	in.mu.Lock()
	for _, r := range rs {
		in.list(r.xid).push(r)
	}
	in.mu.Unlock()
}

// pop removes and returns the request a reply with xid answers, or nil if
// there is none (a protocol error).
func (in *inflight) pop(xid int32) *request {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.list(xid).pop()
}

// drain removes every request, oldest first within each list, and passes
// each to f.
func (in *inflight) drain(f func(*request)) {
	in.mu.Lock()
	var all []*request
	for _, l := range []*fifo{&in.ordinary, &in.ping, &in.auth, &in.setWat} {
		for r := l.pop(); r != nil; r = l.pop() {
			all = append(all, r)
		}
	}
	in.mu.Unlock()
	for _, r := range all {
		f(r)
	}
}
