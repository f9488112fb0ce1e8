package client

import (
	"math/rand/v2"
	"time"
)

// Reconnect pacing: after the loss of a connection that proved useful,
// the first attempt waits a random part of backoffMin, then every server
// is tried in turn; after each round in which none served, the client
// waits, from backoffMin doubling up to Config.MaxReconnectDelay (by
// default backoffMax), with jitter (half the delay plus a random part of
// the other half), so that clients of a restarting ensemble do not come
// back in step. A connection proved useful when it carried a reply beyond
// the connect response and lived at least MaxReconnectDelay; any other is
// a failed attempt. So no server makes the client reconnect more often
// than about once per MaxReconnectDelay: one that drops every connection
// after its first reply (the client's own priming ping), or that grants
// a session timeout of a few milliseconds (its read timeout ends each
// connection at once), is reconnected to as a dead one is; a healthy
// connection, which lives far longer, is followed by a quick reconnect,
// for the session's deadline. ZooKeeper's Java client waits a random
// 0-1s before every reconnect (ClientCnxn.SendThread.startConnect).
const (
	backoffMin = 50 * time.Millisecond
	backoffMax = time.Second
)

// hostList hands out the servers to try, in an order shuffled once, and
// paces the attempts. It is used by the connection goroutine alone.
type hostList struct {
	addrs    []string
	next     int
	failed   int  // attempts since the last connection that carried a reply
	answered bool // there was one
	delay    time.Duration
	max      time.Duration
}

func (h *hostList) init(addrs []string, maxDelay time.Duration) {
	h.addrs = append([]string(nil), addrs...)
	rand.Shuffle(len(h.addrs), func(i, j int) { h.addrs[i], h.addrs[j] = h.addrs[j], h.addrs[i] })
	h.max = maxDelay
	h.delay = min(backoffMin, h.max)
}

// pick returns the next server and how long to wait before trying it.
func (h *hostList) pick() (string, time.Duration) {
	var wait time.Duration
	switch {
	case h.failed == 0 && h.answered:
		wait = rand.N(h.delay + 1)
	case h.failed > 0 && h.failed%len(h.addrs) == 0:
		wait = h.delay/2 + rand.N(h.delay/2+1)
		h.delay = min(2*h.delay, h.max)
	}
	addr := h.addrs[h.next]
	h.next = (h.next + 1) % len(h.addrs)
	h.failed++
	return addr, wait
}

// served resets the pacing after a connection that proved useful (or a
// server's refusal of the session, an answer too): the next attempt comes
// within backoffMin.
func (h *hostList) served() {
	h.failed = 0
	h.answered = true
	h.delay = min(backoffMin, h.max)
}

// ended accounts for a connection that lived for lived and carried a
// reply or not: only one that did both, for at least the longest pause
// between rounds, resets the pacing (see the top of this file).
func (h *hostList) ended(replied bool, lived time.Duration) {
	if replied && lived >= h.max {
		h.served()
	}
}
